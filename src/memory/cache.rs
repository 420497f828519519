//! Cache maintenance and memory checks (AscendCL group 3.12).
//!
//! A cache maintenance operation ([`CacheOp`]) is queued on a stream like
//! any other use of device memory: through an [`AsyncScope`] or on an
//! [`Ordered`] buffer ([`OrderedView::cache`]). For ordering it is an access
//! of its range: [`CacheOp::Invalidate`], which may drop data not yet
//! written back, counts as a write; the other operations change no byte the
//! device sees and count as reads. The synchronous calls live on
//! [`DeviceBuf`] ([`DeviceBuf::flush_cache`], [`DeviceBuf::invalidate_cache`],
//! [`DeviceBuf::map_to_peer`]) and [`Device`] ([`Device::flush_l2_cache`],
//! [`Device::uce_info`], [`Device::repair_uce`]); [`check_mem_type`] asks
//! what kind of memory a list of addresses is.
//!
//! `aclrtCmoAsyncWithBarrier`, `aclrtCmoWaitBarrier` and the descriptor
//! calls (`aclrtCmoGetDescSize`, `aclrtCmoSetDesc`, `aclrtCmoAsyncWithDesc`)
//! are raw only ([`crate::sys`]): barriers order invalidations against
//! device-side work of the chips that have them, and descriptors are
//! inputs of device-side task launches; neither adds anything to the
//! ordering the stream already gives host code.
//!
//! [`AsyncScope`]: crate::stream::AsyncScope
//! [`Ordered`]: crate::stream::Ordered
//! [`OrderedView::cache`]: crate::stream::OrderedView::cache

use crate::Device;
use crate::error::{Call, Error, Result, check};
use crate::info::UceRange;
use crate::memory::DeviceBuf;
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;

/// A cache maintenance operation (`aclrtCmoType`).
///
/// ```
/// use ascend::memory::CacheOp;
/// use ascend::{Device, DeviceBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let weights = DeviceBuf::<f32>::zeroed(&device, 1024)?;
/// let mut scratch = DeviceBuf::<f32>::zeroed(&device, 1024)?;
/// stream.scope(|s| {
///     s.cache(&weights, CacheOp::Prefetch)?; // warm the cache before use
///     s.invalidate(&mut scratch) // drops lines: ordered as a write
/// })?;
/// assert!(CacheOp::Invalidate.is_write() && !CacheOp::Prefetch.is_write());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheOp {
    /// Load the range into the cache ahead of use (`ACL_RT_CMO_TYPE_PREFETCH`).
    Prefetch,
    /// Write the range's dirty lines back to memory, keeping them cached
    /// (`ACL_RT_CMO_TYPE_WRITEBACK`).
    Writeback,
    /// Drop the range's lines without writing them back
    /// (`ACL_RT_CMO_TYPE_INVALID`). Ordered as a write.
    Invalidate,
    /// Write the range's dirty lines back and drop them (`ACL_RT_CMO_TYPE_FLUSH`).
    Flush,
}

impl CacheOp {
    /// The `aclrtCmoType` value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::CacheOp;
    /// use ascend::sys;
    /// // For a raw `aclrtCmoAsync` call of your own.
    /// assert_eq!(CacheOp::Flush.as_raw(), sys::ACL_RT_CMO_TYPE_FLUSH);
    /// assert_eq!(CacheOp::Prefetch.as_raw(), sys::ACL_RT_CMO_TYPE_PREFETCH);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(self) -> sys::aclrtCmoType {
        match self {
            CacheOp::Prefetch => sys::ACL_RT_CMO_TYPE_PREFETCH,
            CacheOp::Writeback => sys::ACL_RT_CMO_TYPE_WRITEBACK,
            CacheOp::Invalidate => sys::ACL_RT_CMO_TYPE_INVALID,
            CacheOp::Flush => sys::ACL_RT_CMO_TYPE_FLUSH,
        }
    }

    /// Whether the operation is ordered as a write of its range (only
    /// [`CacheOp::Invalidate`], which may discard data).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::CacheOp;
    /// // Only an invalidate may discard data: it waits for the range's readers.
    /// let writes: Vec<CacheOp> = [CacheOp::Prefetch, CacheOp::Writeback, CacheOp::Invalidate, CacheOp::Flush]
    ///     .into_iter()
    ///     .filter(|op| op.is_write())
    ///     .collect();
    /// assert_eq!(writes, [CacheOp::Invalidate]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_write(self) -> bool {
        self == CacheOp::Invalidate
    }
}

/// The kinds of memory [`check_mem_type`] accepts, combined with `|`.
///
/// ```
/// use ascend::memory::{MemTypes, check_mem_type};
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::<u8>::zeroed(&device, 64)?;
/// let any = MemTypes::DEVICE | MemTypes::DVPP;
/// assert_eq!(any.bits(), 0x2 | 0x8);
/// assert!(check_mem_type(&device, &[buf.as_raw().cast_const()], any)?);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemTypes(u32);

impl MemTypes {
    /// Device memory (`ACL_RT_MEM_TYPE_DEV`, 0x2).
    pub const DEVICE: MemTypes = MemTypes(0x2);
    /// DVPP memory (`ACL_RT_MEM_TYPE_DVPP`, 0x8).
    pub const DVPP: MemTypes = MemTypes(0x8);
    /// Reserved memory: the runtime's `RT_MEM_MASK_RSVD_TYPE` (0x20). The
    /// header's `ACL_RT_MEM_TYPE_RSVD` (0x10) is refused by the runtime's
    /// check, so this value is the one that works.
    pub const RESERVED: MemTypes = MemTypes(0x20);

    /// The bits passed as `memType`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::MemTypes;
    /// assert_eq!(MemTypes::DEVICE.bits(), 0x2);
    /// assert_eq!((MemTypes::DEVICE | MemTypes::RESERVED).bits(), 0x22); // `memType` of aclrtCheckMemType
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl std::ops::BitOr for MemTypes {
    type Output = MemTypes;
    fn bitor(self, other: MemTypes) -> MemTypes {
        MemTypes(self.0 | other.0)
    }
}

/// Whether every address in `addresses` is memory of one of `types`
/// (`aclrtCheckMemType`, with `device` current). The addresses are only
/// looked up, never dereferenced.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an empty list or more than `u32::MAX`
/// addresses (nothing is called then); otherwise the runtime's code.
///
/// # Examples
///
/// ```
/// use ascend::memory::{MemTypes, check_mem_type};
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::<u8>::zeroed(&device, 64)?;
/// let host = [0u8; 64];
/// assert!(check_mem_type(&device, &[buf.as_raw().cast_const()], MemTypes::DEVICE)?);
/// assert!(!check_mem_type(&device, &[host.as_ptr().cast()], MemTypes::DEVICE)?);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtCheckMemType")]
pub fn check_mem_type(device: &Device, addresses: &[*const c_void], types: MemTypes) -> Result<bool> {
    let call = Call::new("memory::check_mem_type", "aclrtCheckMemType");
    if addresses.is_empty() {
        return Err(Error::invalid(call, "an empty address list"));
    }
    let Ok(count) = u32::try_from(addresses.len()) else {
        return Err(Error::invalid(call, "more than u32::MAX addresses"));
    };
    let mut list: Vec<*mut c_void> = addresses.iter().map(|&address| address.cast_mut()).collect();
    let mut result = 0u32;
    device.make_current()?;
    // SAFETY: `list` holds `count` addresses (only looked up) and `result`
    // is a live out-pointer.
    check("aclrtCheckMemType", unsafe {
        sys::aclrtCheckMemType(list.as_mut_ptr(), count, types.bits(), &mut result, 0)
    })?;
    Ok(result != 0)
}

/// How many ranges `aclrtMemUceRepair` accepts at once.
const MAX_UCE: usize = 128;

impl Device {
    /// Flushes this device's L2 cache (`aclrtDeviceL2CacheFlush`).
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` where the
    /// driver lacks it).
    ///
    /// # Examples
    ///
    /// ```
    /// let device = ascend::Device::new(0)?;
    /// device.flush_l2_cache()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDeviceL2CacheFlush")]
    pub fn flush_l2_cache(&self) -> Result<()> {
        self.make_current()?;
        // SAFETY: NULL is the reserved value.
        check("aclrtDeviceL2CacheFlush", unsafe {
            sys::aclrtDeviceL2CacheFlush(std::ptr::null_mut())
        })
    }

    /// The memory ranges of this device with uncorrectable errors
    /// (`aclrtGetMemUceInfo`, at most 128).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// let device = ascend::Device::new(0)?;
    /// let damaged = device.uce_info()?;
    /// if ascend::backend()?.backend == ascend::Backend::Software {
    ///     assert!(damaged.is_empty()); // the software device has no damaged memory
    /// }
    /// device.repair_uce(&damaged)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetMemUceInfo")]
    pub fn uce_info(&self) -> Result<Vec<UceRange>> {
        let mut list = vec![sys::aclrtMemUceInfo::default(); MAX_UCE];
        let mut count = 0usize;
        // SAFETY: `list` holds MAX_UCE entries; `count` is a live out-pointer.
        check("aclrtGetMemUceInfo", unsafe {
            sys::aclrtGetMemUceInfo(self.id(), list.as_mut_ptr(), MAX_UCE, &mut count)
        })?;
        Ok(list
            .iter()
            .take(count.min(MAX_UCE))
            .map(|entry| UceRange {
                address: entry.addr as usize,
                len: entry.len,
            })
            .collect())
    }

    /// Repairs the ranges with uncorrectable errors `ranges`, as
    /// [`Device::uce_info`] reported them (`aclrtMemUceRepair`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for more than 128 ranges (nothing is
    /// called then); otherwise the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::info::UceRange;
    /// let device = ascend::Device::new(0)?;
    /// // Repair what the runtime reported (nothing, on a healthy device).
    /// device.repair_uce(&device.uce_info()?)?;
    /// // More ranges than the runtime takes are refused before any call.
    /// let too_many = vec![UceRange { address: 0, len: 0 }; 129];
    /// assert!(matches!(device.repair_uce(&too_many), Err(ascend::Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemUceRepair")]
    pub fn repair_uce(&self, ranges: &[UceRange]) -> Result<()> {
        if ranges.len() > MAX_UCE {
            return Err(Error::invalid(
                Call::new("Device::repair_uce", "aclrtMemUceRepair"),
                format!("{} ranges (at most {MAX_UCE})", ranges.len()),
            ));
        }
        let mut list: Vec<sys::aclrtMemUceInfo> = ranges
            .iter()
            .map(|range| sys::aclrtMemUceInfo {
                addr: range.address as *mut c_void,
                len: range.len,
                reserved: [0; 14],
            })
            .collect();
        // An empty list still needs a valid pointer.
        let pointer = if list.is_empty() {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            list.as_mut_ptr()
        };
        // SAFETY: `pointer` holds `list.len()` entries (none: never read).
        check("aclrtMemUceRepair", unsafe {
            sys::aclrtMemUceRepair(self.id(), pointer, list.len())
        })
    }
}

impl<T: Pod> DeviceBuf<T> {
    /// Flushes the cached data of the buffer to memory (`aclrtMemFlush`);
    /// an empty buffer does nothing.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::from_slice(&device, &[1u32, 2, 3])?;
    /// buf.flush_cache()?;
    /// buf.invalidate_cache()?;
    /// assert_eq!(buf.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemFlush")]
    pub fn flush_cache(&mut self) -> Result<()> {
        self.sync_cache("aclrtMemFlush", sys::aclrtMemFlush)
    }

    /// Invalidates the cached data of the buffer (`aclrtMemInvalidate`);
    /// an empty buffer does nothing.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::from_slice(&device, &[5u8; 64])?;
    /// buf.invalidate_cache()?; // the next read comes from memory
    /// assert_eq!(buf.to_vec()?, [5; 64]);
    /// DeviceBuf::<u8>::zeroed(&device, 0)?.invalidate_cache()?; // empty: nothing to do
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemInvalidate")]
    pub fn invalidate_cache(&mut self) -> Result<()> {
        self.sync_cache("aclrtMemInvalidate", sys::aclrtMemInvalidate)
    }

    fn sync_cache(&mut self, name: &'static str, call: unsafe fn(*mut c_void, usize) -> sys::aclError) -> Result<()> {
        let bytes = self.byte_len();
        if bytes == 0 {
            return Ok(());
        }
        self.device().make_current()?;
        // SAFETY: the buffer's own device memory of `bytes` bytes, borrowed
        // exclusively for the call.
        check(name, unsafe { call(self.as_raw(), bytes) })
    }

    /// Maps the buffer into the page table of `peer` (`aclrtMemP2PMap`), so
    /// that `peer` can reach it; the buffer's own device needs no mapping.
    /// An empty buffer does nothing.
    ///
    /// # Errors
    ///
    /// The runtime's code (on the software device, `ACL_ERROR_RT_PARAM_INVALID`
    /// unless `peer` has enabled access to the buffer's device with
    /// [`Device::enable_peer_access`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// # if Device::count()? < 2 { return Ok(()); } // needs two devices
    /// let (zero, one) = (Device::new(0)?, Device::new(1)?);
    /// let buf = DeviceBuf::<u32>::zeroed(&one, 16)?;
    /// zero.enable_peer_access(&one)?;
    /// buf.map_to_peer(&zero)?;
    /// zero.disable_peer_access(&one)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemP2PMap")]
    pub fn map_to_peer(&self, peer: &Device) -> Result<()> {
        let bytes = self.byte_len();
        if bytes == 0 {
            return Ok(());
        }
        self.device().make_current()?;
        // SAFETY: the buffer's own device memory of `bytes` bytes; nothing
        // is read or written.
        check("aclrtMemP2PMap", unsafe {
            sys::aclrtMemP2PMap(self.as_raw(), bytes, peer.id(), 0)
        })
    }
}
