//! The C entry points of the software device, one per bound function, with
//! the same names and signatures as the crate-root functions.
//!
//! Each one does the ACL layer's argument checks (NULL pointers, zero sizes:
//! `ACL_ERROR_INVALID_PARAM`) first, then the runtime's, in the order the
//! real runtime does them (`acl-behaviour.md` §1), and records a message for
//! `aclGetRecentErrMsg` on every failure.

use crate::soft::check::sanitize;
use crate::soft::compose::copy;
use crate::soft::context;
use crate::soft::core::soft_result::{SoftResult, fail, finish};
use crate::soft::device_mem::{self, Rounding};
use crate::soft::host_mem;
use crate::soft::process;
use crate::soft::started::current;
use crate::types::*;
use std::ffi::CStr;

/// Fails with `ACL_ERROR_INVALID_PARAM` when `pointer` is NULL.
fn non_null<T>(pointer: *const T, name: &str) -> SoftResult {
    if pointer.is_null() {
        fail(ACL_ERROR_INVALID_PARAM, format!("{name} is NULL"))
    } else {
        Ok(())
    }
}

/// Writes `value` through an out-pointer already checked non-NULL.
///
/// # Safety
///
/// `out` must be valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) {
    // SAFETY: guaranteed by the caller.
    unsafe { out.write(value) }
}

mod allocator;
mod callback;
mod cmo;
mod copy_batch;
mod copy_desc;
mod device;
mod device_query;
mod host;
mod init;
mod ipc;
mod managed;
mod mbuf;
mod mem_pool;
mod memory;
mod notify;
mod share;
mod stream;
mod stream_control;
mod vmm;

pub(crate) use allocator::*;
pub(crate) use callback::*;
pub(crate) use cmo::*;
pub(crate) use copy_batch::*;
pub(crate) use copy_desc::*;
pub(crate) use device::*;
pub(crate) use device_query::*;
pub(crate) use host::*;
pub(crate) use init::*;
pub(crate) use ipc::*;
pub(crate) use managed::*;
pub(crate) use mbuf::*;
pub(crate) use mem_pool::*;
pub(crate) use memory::*;
pub(crate) use notify::*;
pub(crate) use share::*;
pub(crate) use stream::*;
pub(crate) use stream_control::*;
pub(crate) use vmm::*;
