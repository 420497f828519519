//! Owners that borrowed values may be stored beside.
//!
//! A `MappedRegion<'a>` borrows its `VirtualRange` and `PhysicalAlloc`, and
//! a `HostRegistration<'a>` borrows its host buffer: that is how the crate
//! makes "unmap before free, unregister before reuse" a compile-time rule.
//! A test that keeps *lists* of live objects and disposes of them in a
//! random order cannot express those borrows with plain locals, so it
//! stores each borrowing value together with a strong reference to what it
//! borrows:
//!
//! - ranges and physical allocations live in `Rc`s; a [`HeldMapping`] holds
//!   clones of both `Rc`s plus the `MappedRegion`, created from references
//!   whose lifetime is extended to `'static`. The region is a field declared
//!   *before* the `Rc`s, so it is dropped (unmapped) first, and while it
//!   lives the `Rc`s keep both borrowed values alive and unmoved. The driver
//!   frees a range or an allocation with `Rc::try_unwrap`, which fails while
//!   any mapping still holds it: the borrow rule, checked at run time.
//!   A wrong model can therefore make a case fail, never cause a dangling
//!   reference.
//! - a [`HeldRegistration`] owns its `AlignedHostBuf` through a raw pointer
//!   from `Box::into_raw` (so moving the holder never moves or re-asserts
//!   uniqueness of the buffer) and drops the registration before freeing
//!   the buffer.
//!
//! The extended lifetimes never leave these types: only methods that
//! borrow `self` reach the inner values.

use ascend::Device;
use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegisterType, HostRegistration};
use ascend::vmm::{MappedRegion, PhysicalAlloc, VirtualRange};
use std::ptr::NonNull;
use std::rc::Rc;

/// A mapping stored with the owners it borrows.
pub struct HeldMapping {
    // Declared first: dropped (unmapped) before the `Rc`s below. `None`
    // only inside `unmap`.
    region: Option<MappedRegion<'static>>,
    physical: Rc<PhysicalAlloc>,
    range: Rc<VirtualRange>,
}

/// How to map.
#[derive(Clone, Copy)]
pub enum MapHow {
    ReadWrite,
    NoAccess,
}

impl HeldMapping {
    /// `range.map(offset, physical)` (or `map_no_access`).
    pub fn map(
        range: &Rc<VirtualRange>,
        physical: &Rc<PhysicalAlloc>,
        offset: usize,
        how: MapHow,
    ) -> ascend::Result<Self> {
        let (range, physical) = (Rc::clone(range), Rc::clone(physical));
        // SAFETY: both values live in `Rc` allocations whose clones are
        // stored in the returned value next to the region and dropped only
        // after it (field order); an `Rc`'s value never moves. The
        // `'static` references never escape this type: it hands out the
        // region only behind a borrow of itself.
        let (range_ref, physical_ref): (&'static VirtualRange, &'static PhysicalAlloc) =
            unsafe { (&*Rc::as_ptr(&range), &*Rc::as_ptr(&physical)) };
        let region = match how {
            MapHow::ReadWrite => range_ref.map(offset, physical_ref)?,
            MapHow::NoAccess => range_ref.map_no_access(offset, physical_ref)?,
        };
        Ok(Self {
            region: Some(region),
            physical,
            range,
        })
    }

    fn get(&self) -> &MappedRegion<'static> {
        self.region.as_ref().expect("a held mapping has its region")
    }

    fn get_mut(&mut self) -> &mut MappedRegion<'static> {
        self.region.as_mut().expect("a held mapping has its region")
    }

    /// Grants access.
    pub fn set_access(&mut self, grants: &[ascend::vmm::AccessDesc]) -> ascend::Result<()> {
        self.get_mut().set_access(grants)
    }

    /// Writes `data` at byte `offset`.
    pub fn write(&mut self, offset: usize, data: &[u8]) -> ascend::Result<()> {
        self.get_mut()
            .as_mut_slice::<u8>()?
            .slice_mut(offset..offset + data.len())?
            .write_from_host(data)
    }

    /// Reads `len` bytes at byte `offset`.
    pub fn read(&self, offset: usize, len: usize) -> ascend::Result<Vec<u8>> {
        self.get().as_slice::<u8>()?.slice(offset..offset + len)?.to_vec()
    }

    /// A new owned reference to the mapped allocation.
    pub fn retain_physical(&self) -> ascend::Result<PhysicalAlloc> {
        self.get().retain_physical()
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.get().size()
    }

    /// The mapping's first device address.
    pub fn address(&self) -> *mut std::ffi::c_void {
        self.get().address()
    }

    /// Unmaps through the explicit method, returning its result; the
    /// owners are released afterwards.
    pub fn unmap(mut self) -> ascend::Result<()> {
        self.region.take().map_or(Ok(()), MappedRegion::unmap)
    }

    /// Whether this mapping borrows `physical`.
    pub fn uses_physical(&self, physical: &Rc<PhysicalAlloc>) -> bool {
        Rc::ptr_eq(&self.physical, physical)
    }

    /// Whether this mapping borrows `range`.
    pub fn uses_range(&self, range: &Rc<VirtualRange>) -> bool {
        Rc::ptr_eq(&self.range, range)
    }
}

/// A host registration stored with the buffer it borrows.
pub struct HeldRegistration {
    // `None` only while being taken apart.
    registration: Option<HostRegistration<'static, u8>>,
    buffer: Option<NonNull<AlignedHostBuf<u8>>>,
}

/// How to register.
#[derive(Clone, Copy, Debug)]
pub enum RegisterHow {
    V1,
    V2Mapped,
    V2Pinned,
}

impl HeldRegistration {
    /// Registers `buffer` with `device`.
    pub fn register(device: &Device, buffer: AlignedHostBuf<u8>, how: RegisterHow) -> ascend::Result<Self> {
        let raw = NonNull::from(Box::leak(Box::new(buffer)));
        // SAFETY: `raw` came from `Box::leak`; the buffer is reached only
        // through the registration until `into_buffer` or `Drop` drop the
        // registration and rebuild the box.
        let host: &'static mut [u8] = unsafe { &mut *raw.as_ptr() };
        let registered = match how {
            RegisterHow::V1 => HostRegistration::register(device, host, HostRegisterType::Mapped),
            RegisterHow::V2Mapped => HostRegistration::register_v2(device, host, HostRegisterFlags::MAPPED),
            RegisterHow::V2Pinned => HostRegistration::register_v2(device, host, HostRegisterFlags::PINNED),
        };
        let mut held = Self {
            registration: None,
            buffer: Some(raw),
        };
        held.registration = Some(registered?); // on error, `held` frees the buffer
        Ok(held)
    }

    /// The registered host memory.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.registration.as_mut().expect("registered").as_mut_slice()
    }

    /// The registered host memory.
    pub fn as_slice(&self) -> &[u8] {
        self.registration.as_ref().expect("registered").as_slice()
    }

    /// Unregisters (explicitly when `explicit`, else by drop) and gives the
    /// buffer back, with the unregistration's result.
    pub fn into_buffer(mut self, explicit: bool) -> (ascend::Result<()>, AlignedHostBuf<u8>) {
        let registration = self.registration.take().expect("registered");
        let result = if explicit {
            registration.unregister()
        } else {
            drop(registration);
            Ok(())
        };
        let raw = self.buffer.take().expect("a buffer");
        // SAFETY: the registration, the only user of the buffer, is gone;
        // the box from `register` is rebuilt once (`take` above).
        let buffer = unsafe { Box::from_raw(raw.as_ptr()) };
        (result, *buffer)
    }
}

impl Drop for HeldRegistration {
    fn drop(&mut self) {
        drop(self.registration.take());
        if let Some(raw) = self.buffer.take() {
            // SAFETY: the registration that borrowed the buffer is gone;
            // the box from `register` is rebuilt once (`take` above).
            drop(unsafe { Box::from_raw(raw.as_ptr()) });
        }
    }
}
