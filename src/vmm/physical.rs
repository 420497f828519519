//! [`PhysicalAlloc`]: physical memory with no address yet.

use super::map_slot::MapSlot;
use super::properties::{Granularity, PhysicalMemProp};
use crate::Call;
use crate::Device;
#[cfg(doc)]
use crate::Error;
use crate::error::{Result, check};
use crate::memory::MemLocation;
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

/// Physical memory (`aclrtMallocPhysical` / `aclrtFreePhysical`). It has no
/// address until a [`VirtualRange`](super::VirtualRange) maps it; a mapping
/// borrows it, so it cannot be freed, dropped or moved while mapped.
///
/// It is mapped at most once at a time in this process, counting every
/// handle to the same memory ([`MappedRegion::retain_physical`](super::MappedRegion::retain_physical),
/// imports of the same export): a mapping hands out an exclusive view, and a
/// second mapping would alias it. A second mapping is refused with
/// [`Error::InvalidArgument`] until the first is unmapped.
///
/// ```
/// use ascend::Device;
/// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let size = prop.round_up(1)?; // one granule
/// let physical = PhysicalAlloc::new(&prop, size)?;
/// assert_eq!(physical.size(), size);
/// physical.free()?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `PhysicalAlloc` is `Send` and `Sync`.
///
/// **Guide:** [Concepts: the VMM lifecycle in types](crate::guide::concepts).
pub struct PhysicalAlloc {
    handle: Option<NonNull<c_void>>,
    size: usize,
    prop: PhysicalMemProp,
    granularity: usize,
    device: Device,
    /// Shared by every owner of this memory in the process.
    slot: Arc<MapSlot>,
}

// SAFETY: the handle is an opaque token owned by this value; the runtime's
// calls on it may come from any thread.
unsafe impl Send for PhysicalAlloc {}
// SAFETY: shared access only reads the handle and makes runtime calls that
// are thread-safe.
unsafe impl Sync for PhysicalAlloc {}

impl PhysicalAlloc {
    /// Allocates `size` bytes with `prop`. `size` must be a positive
    /// multiple of the minimum granularity ([`PhysicalMemProp::round_up`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a zero or unaligned size (no call is
    /// made); the runtime's code (e.g. out of memory, refused properties).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let size = prop.round_up(3 << 20)?; // a multiple of the granularity
    /// let physical = PhysicalAlloc::new(&prop, size)?;
    /// assert_eq!(physical.size(), size);
    /// assert!(PhysicalAlloc::new(&prop, size + 1).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMallocPhysical")]
    pub fn new(prop: &PhysicalMemProp, size: usize) -> Result<Self> {
        let granularity = prop.granularity(Granularity::Minimum)?;
        super::granule::require_size(
            Call::new("PhysicalAlloc::new", "aclrtMallocPhysical"),
            size,
            granularity,
        )?;
        let device = context_device(prop)?;
        let raw = prop.raw();
        let mut handle = std::ptr::null_mut();
        // SAFETY: `handle` and `raw` are valid for the call.
        check("aclrtMallocPhysical", unsafe {
            sys::aclrtMallocPhysical(&mut handle, size, &raw, 0)
        })?;
        log::trace!("aclrtMallocPhysical: {size} bytes, handle {handle:p}");
        Ok(Self {
            handle: NonNull::new(handle),
            size,
            prop: *prop,
            granularity,
            device,
            slot: MapSlot::new(),
        })
    }

    /// Takes ownership of one reference to a physical-memory handle (from
    /// `aclrtMemRetainAllocationHandle` or an import). On an error the
    /// reference is freed here: the caller never frees it.
    ///
    /// # Safety
    ///
    /// `handle` must be a live physical-memory handle of `size` bytes with
    /// properties `prop`, and the caller must own one reference to it, which
    /// the returned value (or this function, on an error) will free. `slot`
    /// is the map slot of the memory's other owners in this process.
    pub(crate) unsafe fn from_handle(
        handle: NonNull<c_void>,
        size: usize,
        prop: PhysicalMemProp,
        slot: Arc<MapSlot>,
    ) -> Result<Self> {
        let described = prop
            .granularity(Granularity::Minimum)
            .and_then(|granularity| Ok((granularity, context_device(&prop)?)));
        match described {
            Ok((granularity, device)) => Ok(Self {
                handle: Some(handle),
                size,
                prop,
                granularity,
                device,
                slot,
            }),
            Err(error) => {
                // SAFETY: the caller's one reference, owned here and freed
                // once.
                let freed = check("aclrtFreePhysical", unsafe { sys::aclrtFreePhysical(handle.as_ptr()) });
                if let Err(free_error) = freed {
                    log::warn!("PhysicalAlloc: freeing a handle that could not be described: {free_error}");
                }
                Err(error)
            }
        }
    }

    /// Takes ownership of a handle imported from another process onto
    /// `device` (copies into its mappings use `device`'s context). It cannot
    /// fail, so a caller that has the handle frees it on its own errors.
    ///
    /// # Safety
    ///
    /// As [`PhysicalAlloc::from_handle`]; `size` is the exported size and
    /// `granularity` the minimum granularity of `prop`.
    pub(crate) unsafe fn from_import(
        handle: NonNull<c_void>,
        size: usize,
        prop: PhysicalMemProp,
        granularity: usize,
        device: &Device,
        slot: Arc<MapSlot>,
    ) -> Self {
        Self {
            handle: Some(handle),
            size,
            prop,
            granularity,
            device: device.clone(),
            slot,
        }
    }

    /// The map slot this memory's owners in this process share.
    pub(crate) fn slot(&self) -> &Arc<MapSlot> {
        &self.slot
    }

    /// Size in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let physical = PhysicalAlloc::new(&prop, 4 * granule)?;
    /// assert_eq!(physical.size(), 4 * granule);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// The properties it was allocated with.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{MemAttr, MemLocation};
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let normal = prop.with_attr(MemAttr::NORMAL);
    /// let physical = PhysicalAlloc::new(&normal, normal.round_up(1)?)?;
    /// assert_eq!(physical.prop().attr(), MemAttr::NORMAL);
    /// assert_eq!(physical.prop().location(), MemLocation::Device(device.id()));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn prop(&self) -> &PhysicalMemProp {
        &self.prop
    }

    /// The minimum granularity of its properties.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::Granularity;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// assert_eq!(physical.granularity(), prop.granularity(Granularity::Minimum)?);
    /// // Mappings of it must start at a multiple of its granularity.
    /// let range = VirtualRange::reserve(2 * physical.granularity())?;
    /// assert!(range.map(physical.granularity() / 2, &physical).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn granularity(&self) -> usize {
        self.granularity
    }

    /// The device whose context copies into its mappings use.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// assert_eq!(physical.device().id(), device.id());
    /// // Host memory uses device 0's context.
    /// let host = PhysicalMemProp::host();
    /// assert_eq!(PhysicalAlloc::new(&host, host.round_up(1)?)?.device().id(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The properties as the runtime reports them
    /// (`aclrtMemGetAllocationPropertiesFromHandle`). The attribute is
    /// rebuilt by the runtime and need not equal the one given.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let reported = physical.reported_prop()?;
    /// assert_eq!(reported.location(), prop.location());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemGetAllocationPropertiesFromHandle")]
    pub fn reported_prop(&self) -> Result<PhysicalMemProp> {
        let mut raw = sys::aclrtPhysicalMemProp::default();
        // SAFETY: a live handle and a valid out-pointer.
        check("aclrtMemGetAllocationPropertiesFromHandle", unsafe {
            sys::aclrtMemGetAllocationPropertiesFromHandle(self.as_raw(), &mut raw)
        })?;
        PhysicalMemProp::from_raw(&raw)
    }

    /// The raw handle, for `ascend-sys` calls. Do not free it.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut raw = ascend::sys::aclrtPhysicalMemProp::default();
    /// // SAFETY: a live handle and a valid out-pointer.
    /// let code = unsafe { ascend::sys::aclrtMemGetAllocationPropertiesFromHandle(physical.as_raw(), &mut raw) };
    /// ascend::check("aclrtMemGetAllocationPropertiesFromHandle", code)?;
    /// assert_eq!(PhysicalMemProp::from_raw(&raw)?.location(), prop.location());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtDrvMemHandle {
        self.handle.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    /// Frees the memory now (deferred by the runtime while mapped, which the
    /// borrow rules exclude here), reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtFreePhysical`; the value then tries
    /// once more as it drops.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// physical.free()?; // reports a failure, which a drop could only log
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtFreePhysical")]
    pub fn free(mut self) -> Result<()> {
        self.release()
    }

    /// Frees the allocation now; when the runtime refuses, the reference
    /// is kept (a later call, or the drop, tries again).
    pub(crate) fn release(&mut self) -> Result<()> {
        let Some(handle) = self.handle.take() else {
            return Ok(());
        };
        // SAFETY: the handle is live and this value owns one reference,
        // released once (`take` above; put back only when the runtime
        // refused to release it).
        let outcome = check("aclrtFreePhysical", unsafe { sys::aclrtFreePhysical(handle.as_ptr()) });
        match outcome {
            Ok(()) => log::trace!("aclrtFreePhysical: handle {:p}", handle.as_ptr()),
            // Refused: the reference is still ours; `Drop` tries once more.
            Err(_) => self.handle = Some(handle),
        }
        outcome
    }
}

/// The device whose context operations on memory with `prop` use: its own
/// device, or device 0 for host memory.
pub(super) fn context_device(prop: &PhysicalMemProp) -> Result<Device> {
    match prop.location() {
        MemLocation::Device(id) => Device::new(id),
        MemLocation::Host | MemLocation::HostNuma(_) => Device::new(0),
    }
}

impl Drop for PhysicalAlloc {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("PhysicalAlloc drop: {error}; the handle is left to the runtime");
        }
    }
}

impl fmt::Debug for PhysicalAlloc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhysicalAlloc")
            .field("handle", &self.as_raw())
            .field("size", &self.size)
            .field("prop", &self.prop)
            .finish()
    }
}
