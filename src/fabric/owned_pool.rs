//! [`OwnedPool`]: a global pool that owns a share of its [`BigMemory`]
//! (`smem_bm_create2` … `smem_bm_destroy`), `'static + Send + Sync`, and the
//! lock that serialises the calls on its handle.

use super::handle::{self, Handle};
use super::{BigMemory, FabricError, OwnedMember, PoolOptions, sys};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One global pool of the BM world (`smem_bm_create2`), destroyed when its
/// last owner is gone (`smem_bm_destroy`): the owned form of
/// [`GlobalPool`](super::GlobalPool), for an engine that keeps its pool in
/// a long-lived structure.
///
/// It holds its [`BigMemory`] in an [`Arc`], so `smem_bm_uninit` cannot come
/// before `smem_bm_destroy`; its [`OwnedMember`] holds the pool in an `Arc`
/// (made by [`OwnedPool::join`] on an `Arc<OwnedPool>`), so the pool cannot
/// be destroyed while this rank is joined. The order init → create → join
/// → … → leave → destroy → uninit is kept by ownership: drop the `Arc`s in
/// any order and the last owner tears down in the right one.
///
/// **Threads:** `OwnedPool` is `Send`, `Sync` and `'static`. MemFabric's
/// documentation does not say whether its calls on one handle may run
/// concurrently, so every call the owned forms make on this pool's handle
/// (join, leave, the global ranges, registrations, copies, waits) is
/// serialised by a lock of the pool, and made on the calling thread with the
/// BM's device current ([`Device::make_current`](crate::Device::make_current)),
/// which stays current on that thread afterwards.
/// The library's last error is per thread, and each call reads its own
/// under the lock. Copies from several threads therefore take turns; a
/// batch ([`OwnedMember::copy_batch`]) moves many blocks in one call.
///
/// ```
/// use std::sync::Arc;
/// use ascend::fabric::{BigMemory, BmConfig, OwnedPool, PoolOptions, StoreUrl, Transport};
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
/// let device = ascend::Device::new(0)?;
/// let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// let member = Arc::new(pool.join()?);
/// drop((bm, pool)); // the member keeps both alive
/// let hbm = std::thread::spawn(move || member.peer_hbm(0).map(|range| range.len()))
///     .join()
///     .expect("no panic")?;
/// assert_eq!(hbm, 2 << 20); // and the last owner, on that thread, left, destroyed, uninitialised
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OwnedPool {
    bm: Arc<BigMemory>,
    handle: Handle,
    id: u32,
    options: PoolOptions,
    joined: AtomicBool,
    /// Serialises the calls on `handle`.
    calls: Mutex<()>,
}

impl OwnedPool {
    /// Creates the global pool `id` of `bm`, to which this rank contributes
    /// what `options` says (`smem_bm_create2`), as
    /// [`BigMemory::create_pool`] does, keeping `bm` alive until the pool is
    /// destroyed. Wrap it in an [`Arc`] to [join](Self::join) it.
    ///
    /// # Errors
    ///
    /// As [`BigMemory::create_pool`]: [`FabricError::InvalidArgument`] for
    /// refused `options` or a pool `id` alive in this process (borrowed or
    /// owned; nothing is called); the library's error.
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
    /// assert!(OwnedPool::create(Arc::clone(&bm), 1, &options).is_err()); // pool 1 is alive
    /// let other = OwnedPool::create(Arc::clone(&bm), 2, &options)?;
    /// assert_eq!(other.id(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_create2")]
    pub fn create(bm: Arc<BigMemory>, id: u32, options: &PoolOptions) -> Result<Self, FabricError> {
        let handle = handle::create(&bm, id, options)?;
        Ok(OwnedPool {
            bm,
            handle,
            id,
            options: options.clone(),
            joined: AtomicBool::new(false),
            calls: Mutex::new(()),
        })
    }

    /// The pool's id.
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
    /// assert_eq!(pool.id(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self) -> u32 {
        self.id
    }

    /// What this rank contributes.
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
    /// assert_eq!(pool.options(), &options);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn options(&self) -> &PoolOptions {
        &self.options
    }

    /// The BM this pool keeps alive.
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
    /// assert!(Arc::ptr_eq(pool.big_memory(), &bm));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn big_memory(&self) -> &Arc<BigMemory> {
        &self.bm
    }

    /// Joins this rank to the pool (`smem_bm_join`), as
    /// [`GlobalPool::join`](super::GlobalPool::join) does; the
    /// [`OwnedMember`] holds this `Arc` and leaves the pool when its last
    /// owner is gone.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] when this rank has joined the pool
    /// already (its member is alive); [`FabricError::Device`]; the
    /// library's error (a timeout when a rank never comes, for example).
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
    /// assert!(pool.join().is_err()); // `member` is alive
    /// drop(member); // leaves
    /// let again = pool.join()?;
    /// assert_eq!(again.rank(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_join")]
    pub fn join(self: &Arc<Self>) -> Result<OwnedMember, FabricError> {
        if self.joined.swap(true, Ordering::AcqRel) {
            return Err(FabricError::InvalidArgument {
                method: "OwnedPool::join",
                reason: format!("this rank has joined pool {} already", self.id),
            });
        }
        if let Err(error) = self.call(|handle| handle::join(handle, self.bm.rank(), self.id)) {
            self.joined.store(false, Ordering::Release);
            return Err(error);
        }
        Ok(OwnedMember::new(Arc::clone(self)))
    }

    /// The raw handle, for what this module does not wrap (it stays owned
    /// by the pool: do not destroy it, and serialise your calls with the
    /// pool's own, which this type cannot do for you).
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
    /// assert!(!pool.as_raw().is_null());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_raw(&self) -> sys::smem_bm_t {
        self.handle.0
    }

    /// Runs `call` with the handle, under the pool's lock, with the BM's
    /// device current on this thread.
    pub(super) fn call<T>(&self, call: impl FnOnce(Handle) -> Result<T, FabricError>) -> Result<T, FabricError> {
        let _turn = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        self.bm.device().make_current().map_err(FabricError::Device)?;
        call(self.handle)
    }

    /// Marks the pool left (its member left).
    pub(super) fn left(&self) {
        self.joined.store(false, Ordering::Release);
    }
}

impl fmt::Debug for OwnedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPool")
            .field("id", &self.id)
            .field("handle", &self.handle)
            .field("options", &self.options)
            .field("joined", &self.joined.load(Ordering::Acquire))
            .finish()
    }
}

impl Drop for OwnedPool {
    fn drop(&mut self) {
        // The device current for the call, as every other call of the pool
        // (best effort: destroying is not skipped when it fails).
        if let Err(error) = self.bm.device().make_current() {
            log::warn!("OwnedPool: making device {} current: {error}", self.bm.device().id());
        }
        // SAFETY: this pool's handle, from `handle::create` with its BM and
        // id; its member holds the pool (and each registration and transfer
        // holds the member), so none is alive now: nothing uses the handle.
        unsafe { handle::destroy(&self.bm, self.handle, self.id) };
    }
}

const _: () = {
    const fn owned<T: Send + Sync + 'static>() {}
    owned::<OwnedPool>();
};
