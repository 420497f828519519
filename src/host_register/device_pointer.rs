//! [`DevicePointer`]: the device-side address of registered host memory.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The device address of a mapped host registration
/// (`aclrtHostGetDevicePointer`), valid while the registration it came from
/// lives (the lifetime `'r` borrows it).
///
/// It is an opaque address for **device code only**: the runtime documents
/// that such pointers cannot be used for memory copies or sets, so this type
/// offers none. Hand [`DevicePointer::as_raw`] to a kernel; the host side of
/// the memory is reached through the registration itself.
///
/// **Threads:** `DevicePointer` is `Send` and `Sync`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DevicePointer<'r> {
    raw: NonNull<c_void>,
    byte_len: usize,
    _registration: PhantomData<&'r ()>,
}

// SAFETY: an address value; this crate never dereferences it.
unsafe impl Send for DevicePointer<'_> {}
// SAFETY: as above.
unsafe impl Sync for DevicePointer<'_> {}

impl DevicePointer<'_> {
    pub(crate) fn new(raw: NonNull<c_void>, byte_len: usize) -> Self {
        Self {
            raw,
            byte_len,
            _registration: PhantomData,
        }
    }

    /// The raw device address, for device code. It must not be passed to
    /// copy or set functions, and not be used after the registration ends.
    pub fn as_raw(&self) -> *mut c_void {
        self.raw.as_ptr()
    }

    /// The address as an integer.
    pub fn addr(&self) -> usize {
        self.raw.as_ptr() as usize
    }

    /// Bytes registered behind this address.
    pub fn byte_len(&self) -> usize {
        self.byte_len
    }
}

impl fmt::Debug for DevicePointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePointer({:#x}, {} bytes)", self.addr(), self.byte_len)
    }
}
