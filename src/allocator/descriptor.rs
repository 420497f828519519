//! [`Descriptor`]: an owned `aclrtAllocatorDesc` filled with this crate's
//! trampolines.

use super::trampolines::{self, AllocatorObject};
use crate::error::{Error, ErrorCode, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;

/// An allocator descriptor (`aclrtAllocatorCreateDesc`), destroyed on drop
/// (`aclrtAllocatorDestroyDesc`).
#[derive(Debug)]
pub(crate) struct Descriptor {
    raw: NonNull<c_void>,
}

// SAFETY: a handle to ACL-side bookkeeping guarded by the runtime; any
// thread may destroy it.
unsafe impl Send for Descriptor {}
// SAFETY: shared access only reads the handle value.
unsafe impl Sync for Descriptor {}

impl Descriptor {
    /// A new descriptor whose object is `object` and whose four callbacks
    /// are the trampolines.
    pub(crate) fn new(object: NonNull<AllocatorObject>) -> Result<Self> {
        const API: &str = "aclrtAllocatorCreateDesc";
        crate::backend()?;
        // SAFETY: no arguments.
        let raw = NonNull::new(unsafe { sys::aclrtAllocatorCreateDesc() }).ok_or(Error::Acl {
            api: API,
            code: ErrorCode(sys::ACL_ERROR_BAD_ALLOC),
            message: Some("the runtime could not create an allocator descriptor (NULL)".into()),
        })?;
        let descriptor = Self { raw };
        let desc = descriptor.raw();
        // SAFETY (all five calls): `desc` is the live descriptor created
        // above; the object pointer stays valid for as long as the caller
        // keeps the runtime able to call it, and the functions have the
        // exact C signatures of the typedefs.
        check("aclrtAllocatorSetObjToDesc", unsafe {
            sys::aclrtAllocatorSetObjToDesc(desc, object.as_ptr().cast())
        })?;
        // SAFETY: as above.
        check("aclrtAllocatorSetAllocFuncToDesc", unsafe {
            sys::aclrtAllocatorSetAllocFuncToDesc(desc, Some(trampolines::alloc))
        })?;
        // SAFETY: as above.
        check("aclrtAllocatorSetFreeFuncToDesc", unsafe {
            sys::aclrtAllocatorSetFreeFuncToDesc(desc, Some(trampolines::free))
        })?;
        // SAFETY: as above.
        check("aclrtAllocatorSetAllocAdviseFuncToDesc", unsafe {
            sys::aclrtAllocatorSetAllocAdviseFuncToDesc(desc, Some(trampolines::alloc_advise))
        })?;
        // SAFETY: as above.
        check("aclrtAllocatorSetGetAddrFromBlockFuncToDesc", unsafe {
            sys::aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(trampolines::address))
        })?;
        Ok(descriptor)
    }

    /// The raw handle.
    pub(crate) fn raw(&self) -> sys::aclrtAllocatorDesc {
        self.raw.as_ptr()
    }

    /// Destroys the descriptor now, reporting a failure.
    pub(crate) fn destroy(self) -> Result<()> {
        let raw = self.raw();
        std::mem::forget(self);
        // SAFETY: the live descriptor this value owned, destroyed once
        // (`forget` above keeps `Drop` from destroying it again).
        check("aclrtAllocatorDestroyDesc", unsafe {
            sys::aclrtAllocatorDestroyDesc(raw)
        })
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: the live descriptor this value owns, destroyed once.
        let code = unsafe { sys::aclrtAllocatorDestroyDesc(self.raw()) };
        if let Err(error) = check("aclrtAllocatorDestroyDesc", code) {
            log::warn!("allocator descriptor drop: {error}");
        }
    }
}
