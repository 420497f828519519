//! The raw copy and fill calls every typed view uses, in one place.

use crate::Device;
use crate::error::{Result, check};
use ascend_sys as sys;
use std::ffi::c_void;

/// `aclrtMemcpy` of `bytes` bytes with `device` current. `bytes == 0` does
/// nothing.
pub(crate) fn copy(
    device: &Device,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::aclrtMemcpyKind,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    device.make_current()?;
    // SAFETY: callers pass ranges of `bytes` bytes they may read (src) and
    // write (dst): host slices they borrow, or device ranges of live views.
    check("aclrtMemcpy", unsafe { sys::aclrtMemcpy(dst, bytes, src, bytes, kind) })
}

/// `aclrtMemset` of `bytes` bytes at the device address `dst`.
pub(crate) fn fill(device: &Device, dst: *mut c_void, value: u8, bytes: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    device.make_current()?;
    // SAFETY: callers pass a device range of `bytes` bytes of a live view.
    check("aclrtMemset", unsafe {
        sys::aclrtMemset(dst, bytes, i32::from(value), bytes)
    })
}
