//! The raw copy and fill calls every typed view uses, in one place.

use crate::Device;
use crate::error::{Call, Error, Result, check};
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

/// The checks a typed 32-bit fill makes before any call: the range starts on
/// a 4-byte boundary and is a whole number of 32-bit elements. Returns the
/// element count.
pub(crate) fn words(call: Call, dst: *const c_void, bytes: usize) -> Result<usize> {
    if !(dst as usize).is_multiple_of(4) {
        return Err(Error::invalid(
            call,
            format!("the range at {dst:p} is not 4-byte aligned"),
        ));
    }
    if !bytes.is_multiple_of(4) {
        return Err(Error::invalid(
            call,
            format!("{bytes} bytes are not a whole number of 32-bit elements"),
        ));
    }
    Ok(bytes / 4)
}

/// `aclrtMemsetD32` of the `bytes / 4` 32-bit elements at the device address
/// `dst`, after [`words`]. `bytes == 0` does nothing.
pub(crate) fn fill_u32(call: Call, device: &Device, dst: *mut c_void, value: u32, bytes: usize) -> Result<()> {
    let count = words(call, dst, bytes)?;
    if count == 0 {
        return Ok(());
    }
    device.make_current()?;
    // SAFETY: callers pass a device range of `bytes` bytes of a live view.
    check("aclrtMemsetD32", unsafe {
        sys::aclrtMemsetD32(dst, bytes, value, count)
    })
}
