//! Owned registrations (`smem_bm_register_user_mem` …
//! `smem_bm_unregister_user_mem`): [`OwnedRegisteredDevice`] and
//! [`OwnedRegisteredHost`] take their buffer by value and hold an `Arc` of
//! their [`OwnedMember`]; [`RegisterError`] and [`UnregisterError`] give
//! the buffer or the registration back when a call fails.

use super::handle;
use super::registration::{Raw, same_device};
use super::{DeviceRead, DeviceWrite, FabricError, HostRead, HostWrite, OwnedMember};
use crate::memory::{DeviceStorageMut, PinnedHostBuf};
use bytemuck::Pod;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::RangeBounds;
use std::sync::Arc;

/// The registration of a buffer owned by value: what both owned forms
/// share.
struct Owned<S> {
    member: Arc<OwnedMember>,
    /// Leaked, never dropped, when unregistering fails in `Drop`.
    storage: ManuallyDrop<S>,
    address: u64,
    len: usize,
}

impl<S> Owned<S> {
    fn new(
        member: &Arc<OwnedMember>,
        method: &'static str,
        mut storage: S,
        place: impl FnOnce(&mut S) -> (u64, usize),
    ) -> Result<Self, RegisterError<S>> {
        let (address, len) = place(&mut storage);
        let pool = member.pool().id();
        // SAFETY: a live, joined handle (`member`); the `len` bytes at
        // `address` belong to `storage`, which this value owns and hands
        // out only through its sides until it unregisters them (or leaks
        // `storage` when it cannot).
        let registered = member.call(|raw| unsafe { handle::register(raw, pool, method, address, len) });
        match registered {
            Ok(()) => Ok(Owned {
                member: Arc::clone(member),
                storage: ManuallyDrop::new(storage),
                address,
                len,
            }),
            Err(error) => Err(RegisterError { storage, error }),
        }
    }

    fn unregister(&self) -> Result<(), FabricError> {
        let address = self.address;
        // SAFETY: the address this value registered with this member's
        // handle; every copy that uses it borrows this value or, queued
        // asynchronously, is waited for by the transfer holding it before
        // it lets go.
        self.member.call(|raw| unsafe { handle::unregister(raw, address) })
    }

    fn whole(&self) -> Raw {
        Raw::whole(self.member.pool_key().0, self.address, self.len)
    }

    fn side(&self, method: &'static str, range: impl RangeBounds<usize>) -> Result<Raw, FabricError> {
        self.whole().slice(method, range)
    }

    /// The storage, once unregistered (`self` is not dropped: no second
    /// unregistration).
    fn into_storage(self) -> S {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: each field is
        // taken or dropped exactly once here.
        unsafe {
            std::ptr::drop_in_place(&mut this.member);
            ManuallyDrop::take(&mut this.storage)
        }
    }
}

impl<S> Drop for Owned<S> {
    fn drop(&mut self) {
        match self.unregister() {
            // SAFETY: dropped once, here; the field is not used again.
            Ok(()) => unsafe { ManuallyDrop::drop(&mut self.storage) },
            Err(error) => log::error!(
                "unregistering {} bytes at {:#x} from pool {} failed ({error}): the buffer is leaked, not \
                 freed, as MemFabric may still reach it",
                self.len,
                self.address,
                self.member.pool().id()
            ),
        }
    }
}

/// A registration that failed: the library's error, and the buffer, given
/// back unregistered.
///
/// ```
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let empty = ascend::DeviceBuf::<u8>::zeroed(&device, 0)?;
/// let Err(RegisterError { storage, error }) = member.register_device(empty) else {
///     panic!("an empty buffer is refused");
/// };
/// assert!(matches!(error, FabricError::InvalidArgument { .. }));
/// assert_eq!(storage.len(), 0); // the buffer came back
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RegisterError<S> {
    /// The buffer, not registered.
    pub storage: S,
    /// Why it was not registered.
    pub error: FabricError,
}

/// An unregistration that failed (`smem_bm_unregister_user_mem`): the
/// library's error, and the registration, still registered, given back to
/// try again. Dropping it tries once more and, if that fails too, leaks the
/// buffer (logged): memory MemFabric may still reach is never freed.
///
/// ```
/// use ascend::fabric::sys::{self, soft};
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let host = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[1u8; 64])?)?;
/// soft::inject_fault("smem_bm_unregister_user_mem", 1, soft::Fault::Fail(sys::SMEM_ERROR))?;
/// let Err(UnregisterError { registration, error }) = host.into_inner() else {
///     panic!("the injected fault fails the unregistration");
/// };
/// assert_eq!(error.code(), Some(sys::SMEM_ERROR));
/// let buffer = registration.into_inner().map_err(|failed| failed.error)?; // again: it works
/// assert_eq!(&buffer[..], &[1u8; 64][..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct UnregisterError<R> {
    /// The registration, still registered.
    pub registration: R,
    /// What `smem_bm_unregister_user_mem` returned.
    pub error: FabricError,
}

macro_rules! failure {
    ($name:ident, $what:literal) => {
        impl<R> fmt::Debug for $name<R> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("error", &self.error)
                    .finish_non_exhaustive()
            }
        }

        impl<R> fmt::Display for $name<R> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($what, ": {}"), self.error)
            }
        }

        impl<R> std::error::Error for $name<R> {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.error)
            }
        }

        impl<R> From<$name<R>> for FabricError {
            fn from(failed: $name<R>) -> Self {
                failed.error
            }
        }
    };
}

failure!(
    RegisterError,
    "registering a buffer with the pool failed; the buffer is given back"
);
failure!(
    UnregisterError,
    "unregistering a buffer failed; the registration is given back"
);

impl OwnedMember {
    /// Registers device storage taken by value (`smem_bm_register_user_mem`)
    /// — a [`DeviceBuf`](crate::DeviceBuf), a
    /// [`DevicePool`](crate::pool::DevicePool) block (a
    /// [`PoolBlock`](crate::pool::PoolBlock), taken out of its
    /// [`Ordered`](crate::stream::Ordered) with `into_inner`), any
    /// [`DeviceStorageMut`] — so that it can be the local HBM side of
    /// copies: the owned form of [`Member::register_device`](super::Member::register_device).
    /// The registration holds this `Arc` and the storage, and gives the
    /// storage back from [`OwnedRegisteredDevice::into_inner`].
    ///
    /// # Errors
    ///
    /// [`RegisterError`], with the storage: [`FabricError::InvalidArgument`]
    /// for empty storage or storage on another device than the BM's;
    /// [`FabricError::Device`]; the library's error.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut kv = member.register_device(ascend::DeviceBuf::from_slice(&device, &[5u8; 4096])?)?;
    /// let hbm = member.peer_hbm(0)?.slice(..4096)?;
    /// member.copy(kv.read(), hbm)?; // L2G
    /// member.copy(hbm, kv.write())?; // G2L
    /// let kv = kv.into_inner()?; // unregistered: the buffer back
    /// assert_eq!(kv.to_vec()?, [5u8; 4096]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_register_user_mem")]
    pub fn register_device<S: DeviceStorageMut>(
        self: &Arc<Self>,
        storage: S,
    ) -> Result<OwnedRegisteredDevice<S>, RegisterError<S>> {
        const METHOD: &str = "OwnedMember::register_device";
        if let Err(error) = same_device(self.pool().big_memory().device(), storage.device(), METHOD) {
            return Err(RegisterError { storage, error });
        }
        let owned = Owned::new(self, METHOD, storage, |storage| {
            (storage.device_ptr_mut() as u64, storage.byte_len())
        })?;
        Ok(OwnedRegisteredDevice { owned })
    }

    /// Registers a pinned host buffer taken by value
    /// (`smem_bm_register_user_mem`), so that it can be the local DRAM side
    /// of copies: the owned form of [`Member::register_host`](super::Member::register_host).
    /// The registration holds this `Arc` and the buffer, and gives the
    /// buffer back from [`OwnedRegisteredHost::into_inner`].
    ///
    /// # Errors
    ///
    /// [`RegisterError`], with the buffer: [`FabricError::InvalidArgument`]
    /// for an empty buffer; [`FabricError::Device`]; the library's error.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut staging = member.register_host(ascend::PinnedHostBuf::<u32>::zeroed(&device, 1024)?)?;
    /// staging.as_mut_slice().fill(7);
    /// let dram = member.peer_dram(0)?.slice(..4096)?;
    /// member.copy(staging.read(), dram)?; // H2GH
    /// staging.as_mut_slice().fill(0);
    /// member.copy(dram, staging.write())?; // GH2H
    /// assert!(staging.into_inner()?.iter().all(|&x| x == 7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_register_user_mem")]
    pub fn register_host<T: Pod>(
        self: &Arc<Self>,
        buffer: PinnedHostBuf<T>,
    ) -> Result<OwnedRegisteredHost<T>, RegisterError<PinnedHostBuf<T>>> {
        let owned = Owned::new(self, "OwnedMember::register_host", buffer, |buffer| {
            (buffer.as_mut_ptr() as u64, std::mem::size_of_val::<[T]>(buffer))
        })?;
        Ok(OwnedRegisteredHost { owned })
    }
}

/// Device storage registered with an [`OwnedMember`]'s pool, owning the
/// storage and an `Arc` of the member: the owned form of
/// [`RegisteredDevice`](super::RegisteredDevice), `'static`, and `Send` and
/// `Sync` when the storage is. It hands out the same copy sides
/// ([`DeviceRead`] under `&self`, [`DeviceWrite`] under `&mut self`).
/// Dropping it unregisters and frees the storage; if unregistering fails,
/// the storage is leaked (logged), never freed.
/// [`into_inner`](Self::into_inner) unregisters and gives the storage back.
///
/// ```
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let blocks = ascend::pool::DevicePool::new(&device, ascend::pool::PoolConfig::default())?;
/// let block = blocks.alloc(4096)?.into_inner()?; // a PoolBlock
/// let mut block = member.register_device(block)?;
/// member.copy(member.peer_hbm(0)?.slice(..4096)?, block.write())?; // G2L
/// drop(block); // unregistered, and back to the pool's cache
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OwnedRegisteredDevice<S: DeviceStorageMut> {
    owned: Owned<S>,
}

/// A pinned host buffer registered with an [`OwnedMember`]'s pool, owning
/// the buffer and an `Arc` of the member: the owned form of
/// [`RegisteredHost`](super::RegisteredHost), `'static + Send + Sync`. It
/// hands out the same copy sides ([`HostRead`] under `&self`, [`HostWrite`]
/// under `&mut self`) and its elements between copies. Dropping it
/// unregisters and frees the buffer; if unregistering fails, the buffer is
/// leaked (logged), never freed. [`into_inner`](Self::into_inner)
/// unregisters and gives the buffer back.
///
/// ```
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let staging = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[2u16; 64])?)?;
/// let held: Arc<OwnedRegisteredHost<u16>> = Arc::new(staging); // shareable: reads only
/// let (copier, other) = (Arc::clone(&member), Arc::clone(&held));
/// let copy = move || copier.copy(other.read(), copier.peer_dram(0)?.slice(..128)?); // H2GH
/// std::thread::spawn(copy).join().expect("no panic")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OwnedRegisteredHost<T: Pod> {
    owned: Owned<PinnedHostBuf<T>>,
}

impl<S: DeviceStorageMut> OwnedRegisteredDevice<S> {
    /// The registered bytes.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert_eq!(member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.owned.len
    }

    /// Always false: an empty buffer is not registered.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert!(!member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.owned.len == 0
    }

    /// The member this registration keeps joined.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert!(Arc::ptr_eq(member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?.member(), &member));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn member(&self) -> &Arc<OwnedMember> {
        &self.owned.member
    }

    /// The whole buffer as the source of a copy.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.copy(registered.read(), member.peer_hbm(0)?.slice(..64)?)?; // L2G
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(&self) -> DeviceRead<'_> {
        DeviceRead::new(self.owned.whole())
    }

    /// The whole buffer as the destination of a copy.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut registered = member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.copy(member.peer_dram(0)?.slice(..64)?, registered.write())?; // GH2L
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self) -> DeviceWrite<'_> {
        DeviceWrite::new(self.owned.whole())
    }

    /// Bytes `range` as the source of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?;
    /// assert_eq!(registered.slice(..8)?.len(), 8);
    /// assert!(registered.slice(..65).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceRead<'_>, FabricError> {
        Ok(DeviceRead::new(self.owned.side("OwnedRegisteredDevice::slice", range)?))
    }

    /// Bytes `range` as the destination of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut registered = member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?;
    /// assert_eq!(registered.slice_mut(8..)?.len(), 56);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceWrite<'_>, FabricError> {
        Ok(DeviceWrite::new(
            self.owned.side("OwnedRegisteredDevice::slice_mut", range)?,
        ))
    }

    /// Unregisters (`smem_bm_unregister_user_mem`) and gives the storage
    /// back, with its bytes.
    ///
    /// # Errors
    ///
    /// [`UnregisterError`]: the library's error (or
    /// [`FabricError::Device`]), and this registration, still registered,
    /// to try again or drop (which leaks the storage if it fails again).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?;
    /// let buffer = registered.into_inner()?;
    /// assert_eq!(buffer.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::result_large_err,
        reason = "the failure gives the registration back by value, as `OwnedMapping::unmap` does; a failed \
                  unregistration is rare"
    )]
    #[doc(alias = "smem_bm_unregister_user_mem")]
    pub fn into_inner(self) -> Result<S, UnregisterError<Self>> {
        match self.owned.unregister() {
            Ok(()) => Ok(self.owned.into_storage()),
            Err(error) => Err(UnregisterError {
                registration: self,
                error,
            }),
        }
    }
}

impl<S: DeviceStorageMut> fmt::Debug for OwnedRegisteredDevice<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedRegisteredDevice")
            .field("pool", &self.owned.member.pool().id())
            .field("address", &format_args!("{:#x}", self.owned.address))
            .field("len", &self.owned.len)
            .finish()
    }
}

impl<S: DeviceStorageMut> OwnedRegisteredDevice<S> {
    /// The storage, for reading (`&S`: no copy writes it meanwhile).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_device(ascend::DeviceBuf::from_slice(&device, &[1u8, 2, 3])?)?;
    /// assert_eq!(registered.storage().to_vec()?, [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn storage(&self) -> &S {
        &self.owned.storage
    }
}

impl<T: Pod> OwnedRegisteredHost<T> {
    /// The registered bytes.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert_eq!(member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.owned.len
    }

    /// Always false: an empty buffer is not registered.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert!(!member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.owned.len == 0
    }

    /// The member this registration keeps joined.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert!(Arc::ptr_eq(member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?.member(), &member));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn member(&self) -> &Arc<OwnedMember> {
        &self.owned.member
    }

    /// The whole buffer as the source of a copy.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.copy(registered.read(), member.peer_hbm(0)?.slice(..64)?)?; // H2G
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(&self) -> HostRead<'_> {
        HostRead::new(self.owned.whole())
    }

    /// The whole buffer as the destination of a copy.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut registered = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.copy(member.peer_dram(0)?.slice(..64)?, registered.write())?; // GH2H
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self) -> HostWrite<'_> {
        HostWrite::new(self.owned.whole())
    }

    /// Bytes `range` as the source of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// assert_eq!(registered.slice(..8)?.len(), 8);
    /// assert!(registered.slice(..65).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<HostRead<'_>, FabricError> {
        Ok(HostRead::new(self.owned.side("OwnedRegisteredHost::slice", range)?))
    }

    /// Bytes `range` as the destination of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut registered = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// assert_eq!(registered.slice_mut(8..)?.len(), 56);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<HostWrite<'_>, FabricError> {
        Ok(HostWrite::new(
            self.owned.side("OwnedRegisteredHost::slice_mut", range)?,
        ))
    }

    /// Unregisters (`smem_bm_unregister_user_mem`) and gives the buffer
    /// back, with its bytes.
    ///
    /// # Errors
    ///
    /// [`UnregisterError`]: the library's error (or
    /// [`FabricError::Device`]), and this registration, still registered,
    /// to try again or drop (which leaks the buffer if it fails again).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// let buffer = registered.into_inner()?;
    /// assert_eq!(buffer.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::result_large_err,
        reason = "the failure gives the registration back by value, as `OwnedMapping::unmap` does; a failed \
                  unregistration is rare"
    )]
    #[doc(alias = "smem_bm_unregister_user_mem")]
    pub fn into_inner(self) -> Result<PinnedHostBuf<T>, UnregisterError<Self>> {
        match self.owned.unregister() {
            Ok(()) => Ok(self.owned.into_storage()),
            Err(error) => Err(UnregisterError {
                registration: self,
                error,
            }),
        }
    }
}

impl<T: Pod> fmt::Debug for OwnedRegisteredHost<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedRegisteredHost")
            .field("pool", &self.owned.member.pool().id())
            .field("address", &format_args!("{:#x}", self.owned.address))
            .field("len", &self.owned.len)
            .finish()
    }
}

impl<T: Pod> OwnedRegisteredHost<T> {
    /// The elements, for reading.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let registered = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[4u16; 8])?)?;
    /// assert_eq!(registered.as_slice(), &[4u16; 8][..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        &self.owned.storage
    }

    /// The elements, for writing (not while a copy uses them: the copy's
    /// side borrows the registration).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut registered = member.register_host(ascend::PinnedHostBuf::<u16>::zeroed(&device, 8)?)?;
    /// registered.as_mut_slice()[0] = 9;
    /// assert_eq!(registered.as_slice()[0], 9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.owned.storage
    }
}

const _: () = {
    const fn owned<T: Send + Sync + 'static>() {}
    owned::<OwnedRegisteredDevice<crate::DeviceBuf<u8>>>();
    owned::<OwnedRegisteredDevice<crate::pool::PoolBlock>>();
    owned::<OwnedRegisteredHost<u8>>();
};
