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

/// The runtime's checks of an inter-server whitelist (`aclrtServerPid`
/// entries), shared by `aclrtNotifySetImportPidInterServer` and
/// `aclrtIpcMemImportPidInterServer`: the list not NULL, `num` not 0, and
/// no entry's `pid` NULL, each `ACL_ERROR_RT_PARAM_INVALID`.
///
/// # Safety
///
/// A non-NULL `server_pids` must hold `num` entries.
unsafe fn check_server_pids(server_pids: *const aclrtServerPid, num: usize) -> SoftResult {
    if server_pids.is_null() {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "serverPids is NULL");
    }
    if num == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "num is 0");
    }
    // SAFETY: checked non-NULL; `num` entries by the caller's promise.
    let entries = unsafe { std::slice::from_raw_parts(server_pids, num) };
    if let Some(index) = entries.iter().position(|entry| entry.pid.is_null()) {
        return fail(ACL_ERROR_RT_PARAM_INVALID, format!("serverPids[{index}].pid is NULL"));
    }
    Ok(())
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
