//! Local buffers registered with a pool (`smem_bm_register_user_mem` …
//! `smem_bm_unregister_user_mem`): [`RegisteredDevice`],
//! [`RegisteredHost`], and the local sides of copies they hand out.

use super::handle::{self, Handle};
use super::member::byte_range;
use super::{FabricError, Member};
use crate::Device;
use crate::memory::{DeviceStorageMut, PinnedHostBuf};
use bytemuck::Pod;
use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// The registration of a local buffer: address, bytes, pool.
struct Registration<'m> {
    member: &'m Member<'m>,
    address: u64,
    len: usize,
    live: bool,
}

impl<'m> Registration<'m> {
    fn new(member: &'m Member<'m>, method: &'static str, address: u64, len: usize) -> Result<Self, FabricError> {
        // SAFETY: a live, joined handle (`member`); `address` is `len` bytes
        // of memory that the caller's registration borrows exclusively
        // until it unregisters them.
        unsafe { handle::register(member.handle(), member.pool().id(), method, address, len) }?;
        Ok(Registration {
            member,
            address,
            len,
            live: true,
        })
    }

    fn unregister(&mut self) -> Result<(), FabricError> {
        if !std::mem::replace(&mut self.live, false) {
            return Ok(());
        }
        // SAFETY: the address this value registered with this live handle;
        // every copy using it borrows the registration, so none is queued.
        unsafe { handle::unregister(self.member.handle(), self.address) }
    }

    fn side(&self, method: &'static str, range: impl RangeBounds<usize>) -> Result<Raw, FabricError> {
        Raw::whole(self.member.handle(), self.address, self.len).slice(method, range)
    }

    fn whole(&self) -> Raw {
        Raw::whole(self.member.handle(), self.address, self.len)
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.unregister() {
            log::warn!("unregistering {:#x}: {error}", self.address);
        }
    }
}

/// A side of a copy, as the library sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw {
    pub(super) handle: usize,
    pub(super) address: u64,
    pub(super) len: usize,
}

impl Raw {
    /// All `len` bytes at `address`, registered with the pool of `handle`.
    pub(super) fn whole(handle: Handle, address: u64, len: usize) -> Self {
        Raw {
            handle: handle.id(),
            address,
            len,
        }
    }

    /// Bytes `range` of it, checked.
    pub(super) fn slice(self, method: &'static str, range: impl RangeBounds<usize>) -> Result<Raw, FabricError> {
        let (start, end) = byte_range(method, self.len, range)?;
        Ok(Raw {
            address: self.address + start as u64,
            len: end - start,
            ..self
        })
    }

    /// Whether its bytes lie inside `outer`'s.
    pub(super) fn within(&self, outer: &Raw) -> bool {
        self.handle == outer.handle
            && self.address >= outer.address
            && self.address + self.len as u64 <= outer.address + outer.len as u64
    }

    fn split(self, method: &'static str, mid: usize) -> Result<(Raw, Raw), FabricError> {
        if mid > self.len {
            return Err(FabricError::InvalidArgument {
                method,
                reason: format!("split at {mid} of {} bytes", self.len),
            });
        }
        Ok((
            Raw { len: mid, ..self },
            Raw {
                address: self.address + mid as u64,
                len: self.len - mid,
                ..self
            },
        ))
    }
}

impl<'m> Member<'m> {
    /// Registers device memory (`smem_bm_register_user_mem`) — a
    /// [`DeviceBuf`](crate::DeviceBuf), a [`DevicePool`](crate::pool::DevicePool)
    /// block, any [`DeviceStorageMut`] — so that it can be the local HBM
    /// side of copies (the library's "L"). The registration borrows the
    /// storage exclusively: it cannot be freed, moved or written by anyone
    /// else until it is unregistered (on drop, or
    /// [`RegisteredDevice::unregister`]).
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for empty storage or storage on
    /// another device than the BM's; the library's error.
    ///
    /// ```
    /// use ascend::DeviceBuf;
    /// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// let device = ascend::Device::new(0)?;
    /// let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// let member = pool.join()?;
    /// let mut kv = DeviceBuf::from_slice(&device, &[5u8; 4096])?;
    /// let mut registered = member.register_device(&mut kv)?;
    /// let global = member.peer_hbm(0)?.slice(..4096)?;
    /// member.copy(registered.read(), global)?; // L2G
    /// member.copy(global, registered.write())?; // G2L
    /// drop(registered); // unregisters
    /// assert_eq!(kv.to_vec()?, [5u8; 4096]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_register_user_mem")]
    pub fn register_device<'b, S: DeviceStorageMut + ?Sized>(
        &self,
        storage: &'b mut S,
    ) -> Result<RegisteredDevice<'b, '_, S>, FabricError> {
        same_device(
            self.pool().big_memory().device(),
            storage.device(),
            "Member::register_device",
        )?;
        let address = storage.device_ptr_mut() as u64;
        let len = storage.byte_len();
        let registration = Registration::new(self, "Member::register_device", address, len)?;
        Ok(RegisteredDevice { registration, storage })
    }

    /// Registers pinned host memory (`smem_bm_register_user_mem`), so that
    /// it can be the local DRAM side of copies (the library's "H"). The
    /// registration borrows the buffer exclusively; its elements stay
    /// reachable through it ([`RegisteredHost::as_slice`],
    /// [`RegisteredHost::as_mut_slice`]) while no copy uses them.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for an empty buffer; the library's
    /// error.
    ///
    /// ```
    /// use ascend::PinnedHostBuf;
    /// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// let device = ascend::Device::new(0)?;
    /// let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram(2 << 20))?;
    /// let member = pool.join()?;
    /// let mut staging = PinnedHostBuf::<u32>::zeroed(&device, 1024)?;
    /// let mut registered = member.register_host(&mut staging)?;
    /// registered.as_mut_slice().fill(7);
    /// let global = member.peer_dram(0)?.slice(..4096)?;
    /// member.copy(registered.read(), global)?; // H2GH
    /// registered.as_mut_slice().fill(0);
    /// member.copy(global, registered.write())?; // GH2H
    /// assert!(registered.as_slice().iter().all(|&x| x == 7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_register_user_mem")]
    pub fn register_host<'b, T: Pod>(
        &self,
        buffer: &'b mut PinnedHostBuf<T>,
    ) -> Result<RegisteredHost<'b, '_, T>, FabricError> {
        let address = buffer.as_mut_ptr() as u64;
        let len = std::mem::size_of_val::<[T]>(buffer);
        let registration = Registration::new(self, "Member::register_host", address, len)?;
        Ok(RegisteredHost { registration, buffer })
    }
}

/// Refuses storage on another device than the BM's.
pub(super) fn same_device(bm: &Device, storage: &Device, method: &'static str) -> Result<(), FabricError> {
    if storage == bm {
        return Ok(());
    }
    Err(FabricError::InvalidArgument {
        method,
        reason: format!("storage on device {}, the BM on device {}", storage.id(), bm.id()),
    })
}

/// Device memory registered with a pool: the local HBM side of copies. It
/// borrows the storage (`'b`) and the [`Member`] (`'m`); dropping it
/// unregisters (`smem_bm_unregister_user_mem`; a failure is logged).
///
/// [`read`](Self::read) hands out the source side of a copy (under
/// `&self`), [`write`](Self::write) the destination side (under `&mut
/// self`); [`slice`](Self::slice) and [`slice_mut`](Self::slice_mut) the
/// same for a byte range.
///
/// # Examples
///
/// ```
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
/// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
/// # let member = pool.join()?;
/// let mut kv = ascend::DeviceBuf::from_slice(&device, &[5u8; 1024])?;
/// let mut registered = member.register_device(&mut kv)?;
/// let hbm = member.peer_hbm(0)?.slice(..1024)?;
/// member.copy(registered.read(), hbm)?; // L2G
/// member.copy(hbm, registered.write())?; // G2L
/// registered.unregister()?; // or drop it; `kv` is free to use again
/// assert_eq!(kv.to_vec()?, [5u8; 1024]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RegisteredDevice<'b, 'm, S: DeviceStorageMut + ?Sized> {
    registration: Registration<'m>,
    storage: &'b mut S,
}

impl<'b, 'm, S: DeviceStorageMut + ?Sized> RegisteredDevice<'b, 'm, S> {
    /// The registered bytes.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u16>::zeroed(&device, 100)?;
    /// assert_eq!(member.register_device(&mut buffer)?.len(), 200);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.registration.len
    }

    /// Always false: empty storage is not registered.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// assert!(!member.register_device(&mut buffer)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.registration.len == 0
    }

    /// The storage, for reading (`&S`: no one writes it meanwhile).
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::from_slice(&device, &[1u8, 2, 3])?;
    /// let registered = member.register_device(&mut buffer)?;
    /// assert_eq!(registered.storage().to_vec()?, [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn storage(&self) -> &S {
        self.storage
    }

    /// The whole buffer as the source of a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut kv = ascend::DeviceBuf::from_slice(&device, &[1u8; 64])?;
    /// let registered = member.register_device(&mut kv)?;
    /// member.copy(registered.read(), member.peer_dram(0)?.slice(..64)?)?; // L2GH
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(&self) -> DeviceRead<'_> {
        DeviceRead::new(self.registration.whole())
    }

    /// The whole buffer as the destination of a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut kv = ascend::DeviceBuf::<u8>::zeroed(&device, 64)?;
    /// let mut registered = member.register_device(&mut kv)?;
    /// member.copy(member.peer_dram(0)?.slice(..64)?, registered.write())?; // GH2L
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self) -> DeviceWrite<'_> {
        DeviceWrite::new(self.registration.whole())
    }

    /// Bytes `range` as the source of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u8>::zeroed(&device, 64)?;
    /// let registered = member.register_device(&mut buffer)?;
    /// assert_eq!(registered.slice(16..32)?.len(), 16);
    /// assert!(registered.slice(60..70).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceRead<'_>, FabricError> {
        Ok(DeviceRead::new(
            self.registration.side("RegisteredDevice::slice", range)?,
        ))
    }

    /// Bytes `range` as the destination of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u8>::zeroed(&device, 64)?;
    /// let mut registered = member.register_device(&mut buffer)?;
    /// assert_eq!(registered.slice_mut(32..)?.len(), 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceWrite<'_>, FabricError> {
        Ok(DeviceWrite::new(
            self.registration.side("RegisteredDevice::slice_mut", range)?,
        ))
    }

    /// Unregisters now, returning the library's error, which dropping only
    /// logs; the storage is free again either way.
    ///
    /// # Errors
    ///
    /// The library's error.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u8>::zeroed(&device, 64)?;
    /// member.register_device(&mut buffer)?.unregister()?;
    /// buffer.free()?; // free again
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_unregister_user_mem")]
    pub fn unregister(mut self) -> Result<(), FabricError> {
        self.registration.unregister()
    }
}

impl<S: DeviceStorageMut + ?Sized> fmt::Debug for RegisteredDevice<'_, '_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredDevice")
            .field("address", &format_args!("{:#x}", self.registration.address))
            .field("len", &self.registration.len)
            .finish()
    }
}

/// Pinned host memory registered with a pool: the local DRAM side of
/// copies. It borrows the buffer (`'b`) and the [`Member`] (`'m`);
/// dropping it unregisters (`smem_bm_unregister_user_mem`; a failure is
/// logged). Lengths and ranges are in bytes.
///
/// # Examples
///
/// ```
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
/// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
/// # let member = pool.join()?;
/// let mut staging = ascend::PinnedHostBuf::from_slice(&device, &[7u8; 512])?;
/// let mut registered = member.register_host(&mut staging)?;
/// let dram = member.peer_dram(0)?.slice(..512)?;
/// member.copy(registered.read(), dram)?; // H2GH
/// registered.as_mut_slice().fill(0);
/// member.copy(dram, registered.write())?; // GH2H
/// assert_eq!(registered.as_slice(), &[7u8; 512][..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RegisteredHost<'b, 'm, T: Pod> {
    registration: Registration<'m>,
    buffer: &'b mut PinnedHostBuf<T>,
}

impl<'b, 'm, T: Pod> RegisteredHost<'b, 'm, T> {
    /// The registered bytes.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u32>::zeroed(&device, 10)?;
    /// assert_eq!(member.register_host(&mut buffer)?.len(), 40);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.registration.len
    }

    /// Always false: an empty buffer is not registered.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u32>::zeroed(&device, 10)?;
    /// assert!(!member.register_host(&mut buffer)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.registration.len == 0
    }

    /// The elements, for reading.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut host = ascend::PinnedHostBuf::from_slice(&device, &[4u16; 8])?;
    /// let registered = member.register_host(&mut host)?;
    /// assert_eq!(registered.as_slice(), &[4u16; 8][..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        self.buffer
    }

    /// The elements, for writing (not while a copy uses them: the copy's
    /// side borrows the registration).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut host = ascend::PinnedHostBuf::<u16>::zeroed(&device, 8)?;
    /// let mut registered = member.register_host(&mut host)?;
    /// registered.as_mut_slice()[0] = 9; // the host writes it between copies
    /// assert_eq!(registered.as_slice()[0], 9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.buffer
    }

    /// The whole buffer as the source of a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut host = ascend::PinnedHostBuf::from_slice(&device, &[2u8; 128])?;
    /// let registered = member.register_host(&mut host)?;
    /// member.copy(registered.read(), member.peer_hbm(0)?.slice(..128)?)?; // H2G
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(&self) -> HostRead<'_> {
        HostRead::new(self.registration.whole())
    }

    /// The whole buffer as the destination of a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut host = ascend::PinnedHostBuf::<u8>::zeroed(&device, 128)?;
    /// let mut registered = member.register_host(&mut host)?;
    /// member.copy(member.peer_hbm(0)?.slice(..128)?, registered.write())?; // G2H
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self) -> HostWrite<'_> {
        HostWrite::new(self.registration.whole())
    }

    /// Bytes `range` as the source of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    /// let registered = member.register_host(&mut buffer)?;
    /// assert_eq!(registered.slice(..8)?.len(), 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<HostRead<'_>, FabricError> {
        Ok(HostRead::new(self.registration.side("RegisteredHost::slice", range)?))
    }

    /// Bytes `range` as the destination of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    /// let mut registered = member.register_host(&mut buffer)?;
    /// assert_eq!(registered.slice_mut(8..)?.len(), 56);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<HostWrite<'_>, FabricError> {
        Ok(HostWrite::new(
            self.registration.side("RegisteredHost::slice_mut", range)?,
        ))
    }

    /// Unregisters now, returning the library's error, which dropping only
    /// logs; the buffer is free again either way.
    ///
    /// # Errors
    ///
    /// The library's error.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    /// member.register_host(&mut buffer)?.unregister()?;
    /// buffer.free()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_unregister_user_mem")]
    pub fn unregister(mut self) -> Result<(), FabricError> {
        self.registration.unregister()
    }
}

impl<T: Pod> fmt::Debug for RegisteredHost<'_, '_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredHost")
            .field("address", &format_args!("{:#x}", self.registration.address))
            .field("len", &self.registration.len)
            .finish()
    }
}

macro_rules! local_side {
    ($(#[$doc:meta])* $name:ident, $borrow:ty, $($copy:ident)?) => {
        $(#[$doc])*
        #[derive($($copy, Clone,)?)]
        pub struct $name<'a> {
            pub(super) raw: Raw,
            _borrow: PhantomData<$borrow>,
        }

        impl<'a> $name<'a> {
            pub(super) fn new(raw: Raw) -> Self {
                $name { raw, _borrow: PhantomData }
            }

            /// Bytes.
            ///
            /// # Examples
            ///
            #[doc = concat!("See [`", stringify!($name), "`].")]
            pub fn len(&self) -> usize {
                self.raw.len
            }

            /// Whether it has no bytes.
            ///
            /// # Examples
            ///
            #[doc = concat!("See [`", stringify!($name), "`].")]
            pub fn is_empty(&self) -> bool {
                self.raw.len == 0
            }

            /// The first `mid` bytes and the rest, as two sides.
            ///
            /// # Errors
            ///
            /// [`FabricError::InvalidArgument`] when `mid` is past the end.
            ///
            /// # Examples
            ///
            #[doc = concat!("See [`", stringify!($name), "`].")]
            pub fn split_at(self, mid: usize) -> Result<(Self, Self), FabricError> {
                let (head, tail) = self.raw.split(concat!(stringify!($name), "::split_at"), mid)?;
                Ok((Self::new(head), Self::new(tail)))
            }
        }

        impl fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("address", &format_args!("{:#x}", self.raw.address))
                    .field("len", &self.raw.len)
                    .finish()
            }
        }
    };
}

local_side!(
    /// Registered device memory (local HBM) as the source of a copy: from
    /// [`RegisteredDevice::read`] or [`RegisteredDevice::slice`]; it borrows
    /// the registration shared, so it can be copied.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u8>::zeroed(&device, 8192)?;
    /// let registered = member.register_device(&mut buffer)?;
    /// let (head, tail) = registered.read().split_at(4096)?;
    /// assert_eq!((head.len(), tail.len(), head.is_empty()), (4096, 4096, false));
    /// let dram = member.peer_dram(0)?;
    /// member.copy_batch(&[(head, dram.slice(..4096)?), (tail, dram.slice(8192..12288)?)])?; // L2GH
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    DeviceRead, &'a (), Copy
);
local_side!(
    /// Registered device memory (local HBM) as the destination of a copy:
    /// from [`RegisteredDevice::write`] or [`RegisteredDevice::slice_mut`];
    /// it borrows the registration exclusively.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::DeviceBuf::<u8>::zeroed(&device, 8192)?;
    /// let mut registered = member.register_device(&mut buffer)?;
    /// let (head, tail) = registered.write().split_at(4096)?;
    /// assert_eq!((head.len(), tail.len(), tail.is_empty()), (4096, 4096, false));
    /// let hbm = member.peer_hbm(0)?;
    /// member.copy_batch(&[(hbm.slice(..4096)?, head), (hbm.slice(..4096)?, tail)])?; // G2L
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    DeviceWrite, &'a mut (),
);
local_side!(
    /// Registered pinned host memory (local DRAM) as the source of a copy:
    /// from [`RegisteredHost::read`] or [`RegisteredHost::slice`]; it
    /// borrows the registration shared, so it can be copied.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u8>::zeroed(&device, 8192)?;
    /// let registered = member.register_host(&mut buffer)?;
    /// let (head, tail) = registered.read().split_at(4096)?;
    /// assert_eq!((head.len(), tail.len(), head.is_empty()), (4096, 4096, false));
    /// let hbm = member.peer_hbm(0)?;
    /// member.copy(head, hbm.slice(..4096)?)?; // H2G
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    HostRead, &'a (), Copy
);
local_side!(
    /// Registered pinned host memory (local DRAM) as the destination of a
    /// copy: from [`RegisteredHost::write`] or [`RegisteredHost::slice_mut`];
    /// it borrows the registration exclusively.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let mut buffer = ascend::PinnedHostBuf::<u8>::zeroed(&device, 8192)?;
    /// let mut registered = member.register_host(&mut buffer)?;
    /// let (head, tail) = registered.write().split_at(4096)?;
    /// assert_eq!((head.len(), tail.len(), tail.is_empty()), (4096, 4096, false));
    /// let dram = member.peer_dram(0)?;
    /// member.copy(dram.slice(..4096)?, tail)?; // GH2H
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    HostWrite, &'a mut (),
);
