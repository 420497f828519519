//! [`ManagedBuf`]: managed (unified) memory, one allocation that the host
//! and the device both reach at the same address (AscendCL group 3.11).
//!
//! Its public path is `ascend::memory::ManagedBuf` (with [`ManagedLocation`],
//! [`ManagedAdvice`] and [`ManagedAttributes`]); it is a module of its own,
//! above `memory` and `stream`, because it prefetches on a [`Stream`].

use crate::Call;
use crate::Device;
use crate::error::{Error, Result, check};
use crate::memory::byte_len::byte_len;
use crate::memory::{DeviceSlice, DeviceSliceMut};
use crate::stream::Stream;
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Where managed memory may live: a device, the host, or a host NUMA node
/// (`aclrtMemManagedLocation`).
///
/// ```
/// use ascend::memory::ManagedLocation;
/// assert_eq!(ManagedLocation::Device(0).device_id(), Some(0));
/// assert_eq!(ManagedLocation::Host.device_id(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManagedLocation {
    /// The device with this id.
    Device(i32),
    /// The host.
    Host,
    /// The host NUMA node with this id.
    HostNuma(i32),
    /// The NUMA node of the calling thread (only as an argument: the
    /// attributes report the node it resolved to).
    HostNumaCurrent,
}

impl ManagedLocation {
    /// The device id, for a device location.
    ///
    /// ```
    /// use ascend::memory::ManagedLocation;
    /// assert_eq!(ManagedLocation::HostNuma(0).device_id(), None);
    /// ```
    pub fn device_id(self) -> Option<i32> {
        match self {
            ManagedLocation::Device(id) => Some(id),
            _ => None,
        }
    }

    fn raw(self) -> sys::aclrtMemManagedLocation {
        let (type_, id) = match self {
            ManagedLocation::Device(id) => (sys::ACL_MEM_LOCATIONTYPE_DEVICE, id),
            ManagedLocation::Host => (sys::ACL_MEM_LOCATIONTYPE_HOST, 0),
            ManagedLocation::HostNuma(id) => (sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA, id),
            ManagedLocation::HostNumaCurrent => (sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT, 0),
        };
        sys::aclrtMemManagedLocation { type_, id }
    }

    /// The location a type and an id reported by the runtime name (`None`
    /// for INVALID: no location).
    fn from_reported(type_: i32, id: i32) -> Option<Self> {
        match u32::try_from(type_).ok()? {
            sys::ACL_MEM_LOCATIONTYPE_DEVICE => Some(ManagedLocation::Device(id)),
            sys::ACL_MEM_LOCATIONTYPE_HOST => Some(ManagedLocation::Host),
            sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA => Some(ManagedLocation::HostNuma(id)),
            sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT => Some(ManagedLocation::HostNumaCurrent),
            _ => None,
        }
    }
}

/// Advice about how managed memory is used (`aclrtMemManagedAdviseType`),
/// given with [`ManagedBuf::advise`]. Advice changes where the runtime keeps
/// the pages, never their contents.
///
/// ```
/// use ascend::Device;
/// use ascend::memory::{ManagedAdvice, ManagedBuf, ManagedLocation};
/// let device = Device::new(0)?;
/// let table = ManagedBuf::<u32>::zeroed(&device, 1024)?;
/// table.advise(ManagedAdvice::SetReadMostly, ManagedLocation::Device(0))?;
/// assert!(table.read_mostly()?);
/// table.advise(ManagedAdvice::UnsetReadMostly, ManagedLocation::Device(0))?;
/// assert!(!table.read_mostly()?);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManagedAdvice {
    /// The memory is mostly read: devices may keep read-only copies (the
    /// location is ignored).
    SetReadMostly,
    /// Undoes [`ManagedAdvice::SetReadMostly`] (the location is ignored).
    UnsetReadMostly,
    /// The pages should preferably live at the location.
    SetPreferredLocation,
    /// Clears the preferred location (the location is ignored).
    UnsetPreferredLocation,
    /// The location will access the memory: keep it mapped there.
    SetAccessedBy,
    /// Undoes [`ManagedAdvice::SetAccessedBy`] for the location.
    UnsetAccessedBy,
}

impl ManagedAdvice {
    fn raw(self) -> sys::aclrtMemManagedAdviseType {
        match self {
            ManagedAdvice::SetReadMostly => sys::ACL_MEM_ADVISE_SET_READ_MOSTLY,
            ManagedAdvice::UnsetReadMostly => sys::ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
            ManagedAdvice::SetPreferredLocation => sys::ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
            ManagedAdvice::UnsetPreferredLocation => sys::ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
            ManagedAdvice::SetAccessedBy => sys::ACL_MEM_ADVISE_SET_ACCESSED_BY,
            ManagedAdvice::UnsetAccessedBy => sys::ACL_MEM_ADVISE_UNSET_ACCESSED_BY,
        }
    }
}

/// The attributes of a whole [`ManagedBuf`], read in one
/// `aclrtMemManagedGetAttrs` call ([`ManagedBuf::attributes`]).
///
/// ```
/// use ascend::Device;
/// use ascend::memory::{ManagedAdvice, ManagedBuf, ManagedLocation};
/// let device = Device::new(0)?;
/// let buf = ManagedBuf::<u8>::zeroed(&device, 4096)?;
/// buf.advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Device(0))?;
/// let attributes = buf.attributes()?;
/// assert_eq!(attributes.preferred_location, Some(ManagedLocation::Device(0)));
/// assert!(!attributes.read_mostly);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedAttributes {
    /// Whether the memory is advised read-mostly.
    pub read_mostly: bool,
    /// The preferred location, if one is advised.
    pub preferred_location: Option<ManagedLocation>,
    /// Where the memory was last prefetched to, if anywhere.
    pub last_prefetch_location: Option<ManagedLocation>,
    /// The locations advised to access it: devices by id, the host as
    /// [`ManagedLocation::Host`].
    pub accessed_by: Vec<ManagedLocation>,
}

/// `len` elements of `T` in managed memory (`aclrtMemAllocManaged` /
/// `aclrtFree`): one allocation that the host reads and writes as a slice
/// and the device uses wherever a [`DeviceBuf`](crate::DeviceBuf) goes.
///
/// ```
/// use ascend::{Device, DeviceBuf, memory::ManagedBuf};
/// let device = Device::new(0)?;
/// let mut shared = ManagedBuf::<u32>::zeroed(&device, 4)?;
/// shared.as_mut_slice().copy_from_slice(&[1, 2, 3, 4]); // the host writes
/// let mut copy = DeviceBuf::<u32>::zeroed(&device, 4)?;
/// copy.as_mut_slice().copy_from_device(&shared.device_slice())?; // the device reads
/// assert_eq!(copy.to_vec()?, [1, 2, 3, 4]);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Device side.** It implements [`DeviceStorage`](crate::memory::DeviceStorage)
/// and [`DeviceStorageMut`](crate::memory::DeviceStorageMut): typed views
/// ([`ManagedBuf::device_slice`], [`ManagedBuf::device_slice_mut`]) for
/// copies and memsets, in scopes too, owned transfers, and
/// [`Ordered`](crate::stream::Ordered).
///
/// **Host side, and why it is sound.** [`ManagedBuf::as_slice`] lends
/// `&[T]` for `&self` and [`ManagedBuf::as_mut_slice`] lends `&mut [T]` for
/// `&mut self`. Device work reaches the memory only through this crate's
/// borrows, and each keeps the buffer borrowed for as long as the work may
/// run:
///
/// - work queued in a [`Stream::scope`] borrows the buffer (shared for what
///   the device reads, exclusively for what it writes) until the scope has
///   synchronised its stream; so while the device may write, no `&self`
///   exists for `as_slice`, and while it may read, no `&mut self` for
///   `as_mut_slice`;
/// - a buffer moved into an owned transfer is the transfer's until its wait
///   hands it back;
/// - in an [`Ordered`](crate::stream::Ordered), the buffer is reached on the
///   host only through [`Ordered::get_mut`](crate::stream::Ordered::get_mut)
///   and [`Ordered::into_inner`](crate::stream::Ordered::into_inner), which
///   wait for every queued use first;
/// - a synchronous copy or memset is over when it returns.
///
/// So a host reference never overlaps device work that writes the bytes (or,
/// for `&mut`, any device work on them): the same rule as for any Rust
/// memory shared between threads. Raw calls through [`ManagedBuf::as_raw`]
/// are outside this (and `unsafe`).
///
/// **Prefetches and the free.** [`ManagedBuf::prefetch_to`] queues a
/// prefetch that moves pages but never changes bytes, so it borrows
/// nothing; the buffer remembers the devices it queued prefetches on, and
/// its free first synchronises them (the memory is leaked, never freed,
/// when that fails), so memory is never freed under a queued prefetch.
///
/// `aclrtMemsetD32` takes `aclrtMalloc` or `aclrtMallocHost` memory only,
/// so `fill_u32` on a view of managed memory fails with
/// `ACL_ERROR_INVALID_PARAM`; `fill_bytes` and the copies work.
///
/// **Sanitizer** (software device): device-side uses are checked as for any
/// device memory; host loads and stores through the slices are plain
/// memory accesses it cannot see (the borrows above order them; raw code
/// may announce its own with `ascend::sys::soft::sanitize_host_access`).
/// Managed memory starts with unknown contents for it, not unwritten: the
/// host may have written it.
///
/// **Threads:** `ManagedBuf<T>` is `Send` and `Sync`, like `Vec<T>`.
pub struct ManagedBuf<T> {
    pointer: NonNull<T>,
    len: usize,
    /// Whether `pointer` came from `aclrtMemAllocManaged` (not for empty
    /// buffers).
    allocated: bool,
    device: Device,
    /// The devices prefetches were queued on (synchronised before the free).
    prefetched_on: Mutex<Vec<Device>>,
}

// SAFETY: the buffer owns its allocation exclusively, like a `Box<[T]>`;
// device calls through it make its device current first.
unsafe impl<T: Pod> Send for ManagedBuf<T> {}
// SAFETY: shared access gives `&[T]` (no interior mutability: `Pod`) and
// device reads, which may run concurrently; the list of devices is behind
// a mutex.
unsafe impl<T: Pod> Sync for ManagedBuf<T> {}

impl<T: Pod> ManagedBuf<T> {
    /// Allocates `len` elements of managed memory, every one zero (the same
    /// as [`ManagedBuf::zeroed`]). The runtime rounds the allocation up to
    /// whole 2 MiB pages.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the byte size overflows; the runtime's
    /// code (out of memory, or `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` where the
    /// driver has no managed memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::<f32>::new(&device, 1000)?;
    /// assert_eq!(buf.len(), 1000);
    /// assert!(buf.as_slice().iter().all(|&x| x == 0.0));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemAllocManaged")]
    pub fn new(device: &Device, len: usize) -> Result<Self> {
        Self::zeroed_for("ManagedBuf::new", device, len)
    }

    /// Allocates `len` zeroed elements of managed memory.
    ///
    /// # Errors
    ///
    /// As [`ManagedBuf::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = ManagedBuf::<u64>::zeroed(&device, 3)?;
    /// buf.as_mut_slice()[2] = 7;
    /// assert_eq!(buf.as_slice(), [0, 0, 7]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemAllocManaged")]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        Self::zeroed_for("ManagedBuf::zeroed", device, len)
    }

    /// Allocates managed memory holding a copy of `data`.
    ///
    /// # Errors
    ///
    /// As [`ManagedBuf::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::from_slice(&device, &[1i16, -2, 3])?;
    /// assert_eq!(buf.device_slice().to_vec()?, [1, -2, 3]); // read by the device
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemAllocManaged")]
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self> {
        let mut buf = Self::zeroed_for("ManagedBuf::from_slice", device, data.len())?;
        buf.as_mut_slice().copy_from_slice(data);
        Ok(buf)
    }

    fn zeroed_for(method: &'static str, device: &Device, len: usize) -> Result<Self> {
        let call = Call::new(method, "aclrtMemAllocManaged");
        let bytes = byte_len::<T>(call, len)?;
        let buf = |pointer, allocated| Self {
            pointer,
            len,
            allocated,
            device: device.clone(),
            prefetched_on: Mutex::new(Vec::new()),
        };
        if bytes == 0 {
            return Ok(buf(NonNull::dangling(), false));
        }
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; `bytes` is non-zero.
        check("aclrtMemAllocManaged", unsafe {
            sys::aclrtMemAllocManaged(&mut raw, bytes as u64, sys::ACL_RT_MEM_ATTACH_GLOBAL)
        })?;
        log::trace!(
            "aclrtMemAllocManaged: {bytes} bytes at {raw:p} on device {}",
            device.id()
        );
        let Some(pointer) = NonNull::new(raw.cast::<T>()) else {
            return Err(Error::invalid(call, "the runtime returned NULL with success"));
        };
        // Owned from here: an error below frees it.
        let buf = buf(pointer, true);
        if !(pointer.as_ptr() as usize).is_multiple_of(align_of::<T>()) {
            return Err(Error::invalid(
                call,
                format!("the runtime's address {raw:p} is not aligned for the element type"),
            ));
        }
        // SAFETY: the allocation holds `bytes` bytes the host may write
        // (managed memory), owned by `buf` alone; zero is a valid `T`.
        unsafe { buf.pointer.as_ptr().cast::<u8>().write_bytes(0, bytes) };
        Ok(buf)
    }

    /// Number of elements.
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// assert_eq!(ManagedBuf::<u8>::zeroed(&device, 10)?.len(), 10);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements (nothing is allocated then).
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// assert!(ManagedBuf::<u8>::zeroed(&device, 0)?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// assert_eq!(ManagedBuf::<u32>::zeroed(&device, 10)?.byte_len(), 40);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        // The allocation holds these bytes, so the product fits.
        self.len * size_of::<T>()
    }

    /// The device it was allocated on.
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// assert_eq!(ManagedBuf::<u8>::zeroed(&device, 1)?.device(), &device);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The address, the same for the host and the device (NULL for an
    /// empty buffer). Using it for raw calls is outside the borrows that
    /// make the slices sound.
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::<u8>::zeroed(&device, 64)?;
    /// assert!(!buf.as_raw().is_null());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        if self.allocated {
            self.pointer.as_ptr().cast()
        } else {
            std::ptr::null_mut()
        }
    }

    /// The elements, for the host to read. (See the type's documentation
    /// for why no device work writes them meanwhile.)
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = ManagedBuf::<u8>::zeroed(&device, 4)?;
    /// buf.device_slice_mut().fill_bytes(9)?; // written by the device
    /// assert_eq!(buf.as_slice(), [9; 4]); // read by the host
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `pointer` holds `len` initialised elements (zeroed at
        // allocation, written since only as `T`s or bytes, which every
        // `Pod` accepts), or is dangling with `len` 0. No device work
        // writes them while `&self` lives (the type's documentation).
        unsafe { std::slice::from_raw_parts(self.pointer.as_ptr(), self.len) }
    }

    /// The elements, for the host to read and write. (See the type's
    /// documentation for why no device work uses them meanwhile.)
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = ManagedBuf::<i32>::zeroed(&device, 3)?;
    /// buf.as_mut_slice().copy_from_slice(&[-1, 0, 1]);
    /// assert_eq!(buf.device_slice().to_vec()?, [-1, 0, 1]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` excludes every other
        // reference and every queued device use.
        unsafe { std::slice::from_raw_parts_mut(self.pointer.as_ptr(), self.len) }
    }

    /// A device view of the elements, for copies out (synchronous, or in a
    /// scope).
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let buf = ManagedBuf::from_slice(&device, &[4u16; 8])?;
    /// let mut out = vec![0u16; 8];
    /// stream.scope(|s| s.copy_to_host(buf.device_slice(), &mut out))?;
    /// assert_eq!(out, [4; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device_slice(&self) -> DeviceSlice<'_, T> {
        // SAFETY: the buffer holds `len` elements of memory the device
        // reaches, allocated while the view borrows the buffer, and written
        // only through `&mut self`, which the view's borrow excludes.
        unsafe { DeviceSlice::from_raw_parts(self.as_raw(), self.len, &self.device) }
    }

    /// A device view of the elements, for copies in and memsets
    /// (synchronous, or in a scope, which keeps the buffer borrowed until
    /// its stream is synchronised).
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut buf = ManagedBuf::<u32>::zeroed(&device, 4)?;
    /// let input = [1u32, 2, 3, 4];
    /// stream.scope(|s| s.copy_to_device(&input, buf.device_slice_mut()))?;
    /// assert_eq!(buf.as_slice(), input); // the scope synchronised the stream
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device_slice_mut(&mut self) -> DeviceSliceMut<'_, T> {
        // SAFETY: as in `device_slice`; `&mut self` makes the view the
        // only reader and writer while it lives.
        unsafe { DeviceSliceMut::from_raw_parts(self.as_raw(), self.len, &self.device) }
    }

    /// Gives `advice` about the whole buffer for `location`
    /// (`aclrtMemManagedAdvise`). Advice never changes the contents.
    ///
    /// # Errors
    ///
    /// The runtime's code: a device location whose id is no device, a
    /// location the advice cannot use, or
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` where the driver has no managed
    /// memory. An empty buffer has nothing to advise: `Ok`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::{ManagedAdvice, ManagedBuf, ManagedLocation}};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::<f32>::zeroed(&device, 1024)?;
    /// buf.advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Device(0))?;
    /// assert_eq!(buf.preferred_location()?, Some(ManagedLocation::Device(0)));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemManagedAdvise")]
    pub fn advise(&self, advice: ManagedAdvice, location: ManagedLocation) -> Result<()> {
        if !self.allocated {
            return Ok(());
        }
        self.device.make_current()?;
        // SAFETY: the range is this buffer's live allocation; the call
        // reads no memory through the pointer.
        check("aclrtMemManagedAdvise", unsafe {
            sys::aclrtMemManagedAdvise(self.as_raw(), self.byte_len() as u64, advice.raw(), location.raw())
        })
    }

    /// Queues on `stream` a prefetch of the whole buffer to `location`
    /// (`aclrtMemManagedPrefetchAsync`). A prefetch moves pages, never
    /// changes bytes, so it borrows nothing; the buffer's free waits for it
    /// (the type's documentation).
    ///
    /// # Errors
    ///
    /// The runtime's code: a device location whose id is no device, a
    /// stream of another context, or `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`
    /// where the driver has no managed memory. An empty buffer queues
    /// nothing: `Ok`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::{ManagedBuf, ManagedLocation}, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let buf = ManagedBuf::<u8>::zeroed(&device, 4096)?;
    /// buf.prefetch_to(ManagedLocation::Device(0), &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(buf.last_prefetch_location()?, Some(ManagedLocation::Device(0)));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemManagedPrefetchAsync")]
    pub fn prefetch_to(&self, location: ManagedLocation, stream: &Stream) -> Result<()> {
        if !self.allocated {
            return Ok(());
        }
        stream.device().make_current()?;
        // Noted before queueing: a prefetch queued must be waited for.
        {
            let mut devices = self
                .prefetched_on
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if !devices.contains(stream.device()) {
                devices.push(stream.device().clone());
            }
        }
        // SAFETY: the range is this buffer's live allocation, kept until
        // the prefetch's device is synchronised; the stream is live.
        check("aclrtMemManagedPrefetchAsync", unsafe {
            sys::aclrtMemManagedPrefetchAsync(self.as_raw(), self.byte_len(), location.raw(), 0, stream.as_raw())
        })
    }

    /// Reads 32-bit attribute values of the whole buffer, one call for all
    /// (`aclrtMemManagedGetAttrs`); `slots[i]` values for `attributes[i]`.
    fn read_attributes(
        &self,
        attributes: &[sys::aclrtMemManagedRangeAttribute],
        slots: &[usize],
    ) -> Result<Vec<Vec<i32>>> {
        let mut answers: Vec<Vec<i32>> = slots.iter().map(|&slots| vec![0; slots]).collect();
        if !self.allocated {
            return Ok(answers);
        }
        let mut kinds = attributes.to_vec();
        let mut data: Vec<*mut c_void> = answers.iter_mut().map(|answer| answer.as_mut_ptr().cast()).collect();
        let mut sizes: Vec<usize> = slots.iter().map(|&slots| slots * 4).collect();
        // SAFETY: the three arrays hold `attributes.len()` entries, each
        // destination `sizes[i]` bytes; the range is this buffer's.
        check("aclrtMemManagedGetAttrs", unsafe {
            sys::aclrtMemManagedGetAttrs(
                kinds.as_mut_ptr(),
                kinds.len(),
                self.as_raw(),
                self.byte_len(),
                data.as_mut_ptr(),
                sizes.as_mut_ptr(),
            )
        })?;
        Ok(answers)
    }

    /// One 32-bit attribute of the whole buffer (`aclrtMemManagedGetAttr`).
    fn attribute(&self, attribute: sys::aclrtMemManagedRangeAttribute) -> Result<i32> {
        let mut value = NO_ID;
        // SAFETY: `value` holds the 4 bytes given; the range is this
        // buffer's.
        check("aclrtMemManagedGetAttr", unsafe {
            sys::aclrtMemManagedGetAttr(attribute, self.as_raw(), self.byte_len(), (&raw mut value).cast(), 4)
        })?;
        Ok(value)
    }

    /// Whether the buffer is advised read-mostly.
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` where the
    /// driver has no managed memory). An empty buffer: `false`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::{ManagedAdvice, ManagedBuf, ManagedLocation}};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::<u8>::zeroed(&device, 16)?;
    /// assert!(!buf.read_mostly()?);
    /// buf.advise(ManagedAdvice::SetReadMostly, ManagedLocation::Host)?;
    /// assert!(buf.read_mostly()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemManagedGetAttr")]
    pub fn read_mostly(&self) -> Result<bool> {
        if !self.allocated {
            return Ok(false);
        }
        Ok(self.attribute(sys::ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY)? == 1)
    }

    /// The advised preferred location, if any.
    ///
    /// # Errors
    ///
    /// As [`ManagedBuf::read_mostly`]. An empty buffer: `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::{ManagedAdvice, ManagedBuf, ManagedLocation}};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::<u8>::zeroed(&device, 16)?;
    /// assert_eq!(buf.preferred_location()?, None);
    /// buf.advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Host)?;
    /// assert_eq!(buf.preferred_location()?, Some(ManagedLocation::Host));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemManagedGetAttr")]
    pub fn preferred_location(&self) -> Result<Option<ManagedLocation>> {
        self.location_of(
            sys::ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
            sys::ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
        )
    }

    /// Where the buffer was last prefetched to, if anywhere.
    ///
    /// # Errors
    ///
    /// As [`ManagedBuf::read_mostly`]. An empty buffer: `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::{ManagedBuf, ManagedLocation}, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let buf = ManagedBuf::<u8>::zeroed(&device, 16)?;
    /// assert_eq!(buf.last_prefetch_location()?, None);
    /// buf.prefetch_to(ManagedLocation::Host, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(buf.last_prefetch_location()?, Some(ManagedLocation::Host));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemManagedGetAttr")]
    pub fn last_prefetch_location(&self) -> Result<Option<ManagedLocation>> {
        self.location_of(
            sys::ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
            sys::ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
        )
    }

    fn location_of(
        &self,
        kind: sys::aclrtMemManagedRangeAttribute,
        id: sys::aclrtMemManagedRangeAttribute,
    ) -> Result<Option<ManagedLocation>> {
        if !self.allocated {
            return Ok(None);
        }
        let (kind, id) = (self.attribute(kind)?, self.attribute(id)?);
        Ok(ManagedLocation::from_reported(kind, id))
    }

    /// Every attribute of the whole buffer in one call
    /// (`aclrtMemManagedGetAttrs`).
    ///
    /// # Errors
    ///
    /// As [`ManagedBuf::read_mostly`], and the device count's code. An empty
    /// buffer: nothing advised.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::{ManagedAdvice, ManagedBuf, ManagedLocation}};
    /// let device = Device::new(0)?;
    /// let buf = ManagedBuf::<u8>::zeroed(&device, 16)?;
    /// buf.advise(ManagedAdvice::SetAccessedBy, ManagedLocation::Device(0))?;
    /// let attributes = buf.attributes()?;
    /// assert_eq!(attributes.accessed_by, [ManagedLocation::Device(0)]);
    /// assert!(!attributes.read_mostly);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemManagedGetAttrs")]
    pub fn attributes(&self) -> Result<ManagedAttributes> {
        // Room for every device and the host.
        let ids = crate::Device::count()? as usize + 1;
        let answers = self.read_attributes(
            &[
                sys::ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                sys::ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                sys::ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                sys::ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                sys::ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
                sys::ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
            ],
            &[1, 1, 1, 1, 1, ids],
        )?;
        if !self.allocated {
            return Ok(ManagedAttributes {
                read_mostly: false,
                preferred_location: None,
                last_prefetch_location: None,
                accessed_by: Vec::new(),
            });
        }
        let accessed_by = answers[5]
            .iter()
            .filter_map(|&id| match id {
                HOST_ID => Some(ManagedLocation::Host),
                id if id >= 0 => Some(ManagedLocation::Device(id)),
                _ => None,
            })
            .collect();
        Ok(ManagedAttributes {
            read_mostly: answers[0][0] == 1,
            preferred_location: ManagedLocation::from_reported(answers[1][0], answers[2][0]),
            last_prefetch_location: ManagedLocation::from_reported(answers[3][0], answers[4][0]),
            accessed_by,
        })
    }

    /// Frees the memory now, reporting a failure that a drop can only log.
    ///
    /// # Errors
    ///
    /// The code of synchronising a device a prefetch was queued on (the
    /// memory is then leaked, never freed), or of `aclrtFree`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, memory::ManagedBuf};
    /// let device = Device::new(0)?;
    /// ManagedBuf::<u8>::zeroed(&device, 1 << 20)?.free()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtFree")]
    pub fn free(mut self) -> Result<()> {
        self.release()
    }
}

/// The id the attributes report for the host.
const HOST_ID: i32 = -1;
/// The id the attributes report for no location.
const NO_ID: i32 = -2;

impl<T> ManagedBuf<T> {
    fn release(&mut self) -> Result<()> {
        if !self.allocated {
            return Ok(());
        }
        let devices = std::mem::take(
            &mut *self
                .prefetched_on
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for device in &devices {
            if let Err(error) = device.synchronize() {
                // A prefetch may still be queued: never free under it.
                self.allocated = false;
                log::warn!(
                    "ManagedBuf: {:p} leaked, device {} did not synchronise",
                    self.pointer,
                    device.id()
                );
                return Err(error);
            }
        }
        self.allocated = false;
        // SAFETY: the address came from `aclrtMemAllocManaged` and is freed
        // once (`allocated` cleared above); no queued work uses it (the
        // borrows, and the prefetches' devices synchronised above).
        check("aclrtFree", unsafe { sys::aclrtFree(self.pointer.as_ptr().cast()) })?;
        log::trace!("aclrtFree (managed): {:p}", self.pointer);
        Ok(())
    }
}

impl<T> Drop for ManagedBuf<T> {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("ManagedBuf drop: {error}");
        }
    }
}

impl<T: Pod> fmt::Debug for ManagedBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedBuf")
            .field("address", &self.as_raw())
            .field("len", &self.len)
            .field("device", &self.device.id())
            .finish()
    }
}

// SAFETY: the buffer owns its managed allocation (on its device, reachable
// by that device's context) and frees it only when dropped or freed by
// value (a leaked buffer never); the address, length and device never
// change; the bytes are written only through `&mut self` (host slices,
// mutable views) or by value.
unsafe impl<T: Pod> crate::memory::DeviceStorage for ManagedBuf<T> {
    fn device(&self) -> &Device {
        &self.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.as_raw()
    }

    fn byte_len(&self) -> usize {
        ManagedBuf::byte_len(self)
    }
}

// SAFETY: the buffer owns its allocation exclusively: no other value or
// view reaches it while the buffer is borrowed exclusively or moved.
unsafe impl<T: Pod> crate::memory::DeviceStorageMut for ManagedBuf<T> {}
