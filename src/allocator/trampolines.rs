//! The `extern "C"` functions stored in a descriptor: they find the Rust
//! allocator again from the runtime's `aclrtAllocator` object pointer, and
//! never let a panic unwind into the runtime.
//!
//! The object pointer is an [`AllocatorObject`] owned by the registration.
//! A block handed to the runtime is a boxed [`Block`]: the get-address
//! callback receives the block alone (no object), so the block has to carry
//! its address.

use super::block::{Block, DeviceAllocator};
use ascend_sys as sys;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::{NonNull, null_mut};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the descriptor's object pointer points to.
pub(crate) struct AllocatorObject {
    pub(crate) allocator: Arc<dyn DeviceAllocator>,
    /// Blocks handed to the runtime and not yet given back.
    pub(crate) outstanding: AtomicUsize,
}

impl AllocatorObject {
    pub(crate) fn new(allocator: Arc<dyn DeviceAllocator>) -> Self {
        Self {
            allocator,
            outstanding: AtomicUsize::new(0),
        }
    }

    /// A block as the runtime sees it (or NULL).
    fn hand_out(&self, block: Option<Block>) -> *mut c_void {
        match block {
            Some(block) => {
                self.outstanding.fetch_add(1, Ordering::Relaxed);
                Box::into_raw(Box::new(block)).cast()
            }
            None => null_mut(),
        }
    }
}

/// Runs `body`, turning a panic into `fallback` and a log line.
fn guarded<R>(callback: &str, fallback: R, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        log::error!("custom allocator: `{callback}` panicked; the panic was stopped at the runtime boundary");
        fallback
    })
}

/// The object behind the runtime's pointer.
///
/// # Safety
///
/// `object` is NULL or the pointer an `AllocatorRegistration` stored, which
/// stays valid until the runtime no longer holds it.
unsafe fn object<'a>(object: sys::aclrtAllocator) -> Option<&'a AllocatorObject> {
    // SAFETY: per the contract, a live `AllocatorObject` or NULL.
    NonNull::new(object.cast::<AllocatorObject>()).map(|object| unsafe { object.as_ref() })
}

/// `aclrtAllocatorAllocFunc`.
pub(crate) unsafe extern "C" fn alloc(allocator: sys::aclrtAllocator, size: usize) -> *mut c_void {
    guarded("alloc", null_mut(), || {
        // SAFETY: the runtime passes back the object it was given.
        match unsafe { object(allocator) } {
            Some(object) => object.hand_out(object.allocator.alloc(size)),
            None => null_mut(),
        }
    })
}

/// `aclrtAllocatorAllocAdviseFunc`.
pub(crate) unsafe extern "C" fn alloc_advise(
    allocator: sys::aclrtAllocator,
    size: usize,
    hint: sys::aclrtAllocatorAddr,
) -> *mut c_void {
    guarded("alloc_advise", null_mut(), || {
        // SAFETY: as in `alloc`.
        match unsafe { object(allocator) } {
            Some(object) => object.hand_out(object.allocator.alloc_advise(size, NonNull::new(hint))),
            None => null_mut(),
        }
    })
}

/// `aclrtAllocatorFreeFunc`.
pub(crate) unsafe extern "C" fn free(allocator: sys::aclrtAllocator, block: sys::aclrtAllocatorBlock) {
    guarded("free", (), || {
        // SAFETY: as in `alloc`.
        let Some(object) = (unsafe { object(allocator) }) else {
            return;
        };
        let Some(block) = NonNull::new(block.cast::<Block>()) else {
            return;
        };
        // SAFETY: the runtime gives back a block `hand_out` boxed, once.
        let block = unsafe { Box::from_raw(block.as_ptr()) };
        object.outstanding.fetch_sub(1, Ordering::Relaxed);
        object.allocator.free(*block);
    });
}

/// `aclrtAllocatorGetAddrFromBlockFunc`.
pub(crate) unsafe extern "C" fn address(block: sys::aclrtAllocatorBlock) -> *mut c_void {
    match NonNull::new(block.cast::<Block>()) {
        // SAFETY: the runtime passes a block `hand_out` boxed and not yet
        // freed.
        Some(block) => unsafe { block.as_ref() }.address().as_ptr(),
        None => null_mut(),
    }
}
