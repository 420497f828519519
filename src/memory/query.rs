//! Questions about addresses: which allocation contains one, and what kind
//! of memory it is.

use super::MemLocation;
use crate::Call;
use crate::error::{Error, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;

/// The allocation containing an address (`aclrtMemGetAddressRange`).
///
/// ```
/// use ascend::{Device, PinnedHostBuf, memory::address_range};
/// let device = Device::new(0)?;
/// let host = PinnedHostBuf::<u32>::zeroed(&device, 100)?;
/// let range = address_range(host[50..].as_ptr().cast())?;
/// assert_eq!(range.base, host.as_ptr() as usize);
/// assert!(range.size >= 400); // whole pages
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddressRange {
    /// Its first address.
    pub base: usize,
    /// Its size as the runtime reports it (rounded up to whole pages for
    /// `aclrtMalloc*`/`aclrtMallocHost*` memory).
    pub size: usize,
}

/// The allocation that contains `address` — device memory, pinned host
/// memory or a VMM mapping; interior addresses work. The address is only
/// looked up, never dereferenced.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a null address; the runtime's code for an
/// address inside no allocation.
///
/// ```
/// use ascend::{Device, DeviceBuf, memory::address_range};
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::<u8>::zeroed(&device, 1000)?;
/// let inside = buf.as_raw().wrapping_byte_add(10);
/// let range = address_range(inside)?;
/// assert_eq!(range.base, buf.as_raw() as usize);
/// assert!(range.size >= 1000);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtMemGetAddressRange")]
pub fn address_range(address: *const c_void) -> Result<AddressRange> {
    if address.is_null() {
        return Err(Error::invalid(
            Call::new("memory::address_range", "aclrtMemGetAddressRange"),
            "the address is null",
        ));
    }
    crate::backend()?;
    let (mut base, mut size) = (std::ptr::null_mut(), 0);
    // SAFETY: the address is only looked up; both out-pointers are valid.
    check("aclrtMemGetAddressRange", unsafe {
        sys::aclrtMemGetAddressRange(address.cast_mut(), &mut base, &mut size)
    })?;
    Ok(AddressRange {
        base: base as usize,
        size,
    })
}

/// What kind of memory an address is (`aclrtPointerGetAttributes`).
///
/// ```
/// use ascend::{Device, PinnedHostBuf, memory::pointer_attributes, vmm::MemLocation};
/// let device = Device::new(0)?;
/// let host = PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
/// let attributes = pointer_attributes(host.as_ptr().cast())?;
/// assert_eq!(attributes.location, Some(MemLocation::Host));
/// assert!(attributes.page_size > 0);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PointerAttributes {
    /// Where it lives: `Some(MemLocation::Device(id))` for device memory,
    /// `Some(MemLocation::Host)` for memory the runtime allocated or
    /// registered on the host, `None` for memory the runtime does not know
    /// (ordinary pageable host memory).
    pub location: Option<MemLocation>,
    /// The page size backing it, in bytes.
    pub page_size: u32,
}

/// The attributes of `address`. Only looked up, never dereferenced.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a null address; the runtime's code.
///
/// ```
/// use ascend::{Device, DeviceBuf, memory::pointer_attributes, vmm::MemLocation};
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::<u8>::zeroed(&device, 64)?;
/// assert_eq!(pointer_attributes(buf.as_raw())?.location, Some(MemLocation::Device(0)));
/// let local = [0u8; 4];
/// assert_eq!(pointer_attributes(local.as_ptr().cast())?.location, None);
/// # Ok::<(), ascend::Error>(())
/// ```
// The runtime looks the address up in its tables; it never reads through it.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[doc(alias = "aclrtPointerGetAttributes")]
pub fn pointer_attributes(address: *const c_void) -> Result<PointerAttributes> {
    if address.is_null() {
        return Err(Error::invalid(
            Call::new("memory::pointer_attributes", "aclrtPointerGetAttributes"),
            "the address is null",
        ));
    }
    crate::backend()?;
    let mut raw = sys::aclrtPtrAttributes::default();
    // SAFETY: the address is only looked up; the out-pointer is valid.
    check("aclrtPointerGetAttributes", unsafe {
        sys::aclrtPointerGetAttributes(address, &mut raw)
    })?;
    Ok(PointerAttributes {
        location: MemLocation::from_raw(raw.location),
        page_size: raw.pageSize,
    })
}
