//! [`Member::scope`] and [`FabricScope`]: asynchronous copies that borrow
//! their sides until `smem_bm_wait` has proven them finished.

use super::copy::{Submit, checked_pair, copy_batch_raw, copy_raw};
use super::handle;
use super::{CopyTo, FabricError, Member, Side};
use std::fmt;
use std::marker::PhantomData;

/// Asynchronous copies of one [`Member`], queued with `ASYNC_COPY_FLAG`
/// inside [`Member::scope`]. Every side given to it stays borrowed until
/// the scope has waited for the copies (`smem_bm_wait`), so no registered
/// buffer is read, written, unregistered or freed while a copy may still
/// use it.
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
/// let mut host = ascend::PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
/// let mut host = member.register_host(&mut host)?;
/// let dram = member.peer_dram(0)?.slice(..4096)?;
/// // `s` is the FabricScope: what it queues is waited for before `scope` returns.
/// member.scope(|s| s.copy(dram, host.write()))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FabricScope<'scope, 'env: 'scope> {
    member: &'env Member<'env>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// Waits for the scope's copies if the closure unwinds.
struct WaitOnUnwind<'a> {
    member: &'a Member<'a>,
    armed: bool,
}

impl WaitOnUnwind<'_> {
    fn finish(mut self) -> Result<(), FabricError> {
        self.armed = false;
        wait_or_abort(self.member, "Member::scope")
    }
}

impl Drop for WaitOnUnwind<'_> {
    fn drop(&mut self) {
        if self.armed
            && let Err(error) = wait_or_abort(self.member, "Member::scope (unwinding from a panic)")
        {
            log::warn!("FabricScope: waiting after a panic: {error}");
        }
    }
}

/// `smem_bm_wait`, again if it fails; the first result once one of them
/// succeeds (the copies are then finished). When both fail, the copies may
/// still be running into memory whose borrows end with the scope: the
/// process aborts, naming the pool and both errors (the crate's rule for
/// scoped work, as [`Stream::scope`](crate::Stream::scope)).
fn wait_or_abort(member: &Member<'_>, context: &str) -> Result<(), FabricError> {
    let wait = || handle::wait(member.handle());
    let first = match wait() {
        Ok(()) => return Ok(()),
        Err(error) => error,
    };
    let again = match wait() {
        Ok(()) => return Err(first),
        Err(error) => error,
    };
    let message = format!(
        "ascend: aborting: {context} on pool {} (rank {}) cannot prove its asynchronous copies finished, and ending \
         their borrows would let them write memory that may be freed or reused. Attempts: {first}; {again}",
        member.pool().id(),
        member.rank()
    );
    log::error!("{message}");
    eprintln!("{message}");
    std::process::abort()
}

impl Member<'_> {
    /// Runs `f`, which queues asynchronous copies on a [`FabricScope`]
    /// (`ASYNC_COPY_FLAG`), then waits for them (`smem_bm_wait`) before
    /// returning — also when `f` fails or panics. The sides given to the
    /// scope stay borrowed until then: a registered buffer cannot be read,
    /// written, unregistered or freed while a copy may use it.
    ///
    /// When the wait fails it is tried again; when that fails too, the
    /// copies cannot be proven finished and the process aborts with a
    /// message naming both errors (ending the borrows could let a copy
    /// write freed memory). A wait that succeeds the second time returns the
    /// first one's error.
    ///
    /// # Errors
    ///
    /// `f`'s error (the wait's is logged), or else the first wait's.
    ///
    /// ```
    /// use ascend::{DeviceBuf, PinnedHostBuf};
    /// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// let device = ascend::Device::new(0)?;
    /// let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// let member = pool.join()?;
    /// let mut kv = DeviceBuf::from_slice(&device, &[9u8; 4096])?;
    /// let mut back = PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
    /// let kv_registered = member.register_device(&mut kv)?;
    /// let mut back_registered = member.register_host(&mut back)?;
    /// let (hbm, dram) = (member.peer_hbm(0)?.slice(..4096)?, member.peer_dram(0)?.slice(..4096)?);
    /// member.scope(|s| {
    ///     s.copy(kv_registered.read(), hbm)?; // L2G, queued
    ///     s.copy(kv_registered.read(), dram)?; // L2GH, queued
    ///     Ok(())
    /// })?; // waited for
    /// member.scope(|s| s.copy(dram, back_registered.write()))?; // GH2H
    /// assert_eq!(back_registered.as_slice(), &[9u8; 4096][..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_wait")]
    pub fn scope<'env, F, R>(&'env self, f: F) -> Result<R, FabricError>
    where
        F: for<'scope> FnOnce(&'scope FabricScope<'scope, 'env>) -> Result<R, FabricError>,
    {
        let scope = FabricScope {
            member: self,
            _scope: PhantomData,
            _env: PhantomData,
        };
        let guard = WaitOnUnwind {
            member: self,
            armed: true,
        };
        let outcome = f(&scope);
        let waited = guard.finish();
        match (outcome, waited) {
            (Ok(value), Ok(())) => Ok(value),
            (Ok(_), Err(error)) => Err(error),
            (Err(error), waited) => {
                if let Err(wait_error) = waited {
                    log::warn!("FabricScope: waiting after a failed closure: {wait_error}");
                }
                Err(error)
            }
        }
    }
}

impl<'scope, 'env> FabricScope<'scope, 'env> {
    /// The member whose copies these are.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// member.scope(|s| {
    ///     assert_eq!(s.member().rank(), 0);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn member(&self) -> &'env Member<'env> {
        self.member
    }

    /// Queues a copy of `src` to `dst` (`smem_bm_copy` with
    /// `ASYNC_COPY_FLAG`); both stay borrowed until the scope has waited.
    /// Zero bytes: nothing is called.
    ///
    /// # Errors
    ///
    /// As [`Member::copy`].
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
    /// let mut kv = ascend::DeviceBuf::from_slice(&device, &[3u8; 256])?;
    /// let kv = member.register_device(&mut kv)?;
    /// let hbm = member.peer_hbm(0)?.slice(..256)?;
    /// member.scope(|s| s.copy(kv.read(), hbm))?; // L2G, queued, then waited for
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy")]
    pub fn copy<S, D>(&self, src: S, dst: D) -> Result<(), FabricError>
    where
        S: CopyTo<D> + 'scope,
        D: Side + 'scope,
    {
        let pair = checked_pair(self.member.pool_key(), "FabricScope::copy", &src, &dst)?;
        copy_raw(self.member.handle(), pair, S::COPY_TYPE, Submit::ASYNC)
    }

    /// Queues a batch of copies of one direction (`smem_bm_copy_batch` with
    /// `ASYNC_COPY_FLAG`); every side stays borrowed until the scope has
    /// waited. An empty batch calls nothing.
    ///
    /// # Errors
    ///
    /// As [`Member::copy_batch`].
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let (hbm, dram) = (member.peer_hbm(0)?, member.peer_dram(0)?);
    /// member.scope(|s| {
    ///     s.copy_batch(&[(hbm.slice(..64)?, dram.slice(..64)?), (hbm.slice(64..128)?, dram.slice(512..576)?)])
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy_batch")]
    pub fn copy_batch<S, D>(&self, pairs: &[(S, D)]) -> Result<(), FabricError>
    where
        S: CopyTo<D> + 'scope,
        D: Side + 'scope,
    {
        const METHOD: &str = "FabricScope::copy_batch";
        let checked = pairs
            .iter()
            .map(|(src, dst)| checked_pair(self.member.pool_key(), METHOD, src, dst));
        copy_batch_raw(self.member.handle(), METHOD, checked, S::COPY_TYPE, Submit::ASYNC)
    }
}

impl fmt::Debug for FabricScope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FabricScope").field("member", self.member).finish()
    }
}
