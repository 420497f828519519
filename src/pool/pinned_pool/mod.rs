//! [`PinnedPool`]: a caching pool of pinned host buffers.

mod recycle;
mod shards;
mod state;

use state::Shared;
#[cfg(test)]
mod tests;

#[cfg(feature = "testing")]
use super::watch::Watch;
use crate::Call;
use crate::Device;
use crate::error::{Error, Result};
use crate::host_register::HostMallocConfig;
use crate::memory::PinnedHostBuf;
use crate::memory::pinned_host::HOST_ALIGN;
use crate::pool::config::env::{PinnedSettings, parse_both, read_env};
use crate::pool::per_thread::thread_token::token;
use crate::stream::{Carried, Carrier, Ordered, Recycle, Settled, Tracks};
use bytemuck::Pod;
use shards::{Cached, Shard, SharedTotal, new_shard, shard_of};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A caching pool of pinned host buffers (torch_npu's caching host
/// allocator): requests up to a threshold are rounded up to a power of two
/// ([`PinnedPool::DEFAULT_ROUND_THRESHOLD`], torch_npu's
/// `pinned_max_round_threshold_mb`), larger ones are kept at their size,
/// and a freed buffer waits in its size's bucket for the next request.
/// A buffer's length is the request, its
/// [`capacity`](PinnedHostBuf::capacity) its bucket's size (as with `Vec`):
/// the slice, the views and the copies cover the request only.
///
/// A buffer is an [`Ordered`] owner, so the async copies that use it are
/// ordered like any other; when it is dropped, it goes back to its bucket
/// with the uses that may still be queued on it. The next owner inherits
/// them: its host access ([`Ordered::get_mut`]) waits for them, and its
/// copies on another stream are ordered after them. So a buffer is never
/// touched by the host while a copy that used it may still run.
///
/// New buffers come from `aclrtMallocHostWithCfg` with the pool's
/// [`HostMallocConfig`], or from `aclrtMallocHost` once that symbol proved
/// missing; they start zeroed, cached ones hold what their last owner left.
///
/// ```
/// use ascend::pool::PinnedPool;
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let pool = PinnedPool::new(&device);
/// let mut staging = pool.alloc(3000)?; // 3000 bytes of a 4096-byte buffer
/// assert_eq!((staging.len(), staging.capacity()), (3000, 4096));
/// staging.get_mut()?[..4].copy_from_slice(&[1, 2, 3, 4]);
/// drop(staging);
/// let again = pool.alloc(4000)?; // the same buffer, from the cache
/// assert_eq!((pool.stats().hits, pool.stats().cached_bytes), (1, 0));
/// # drop(again);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `PinnedPool` is `Send` and `Sync`: share it with `Arc` and
/// allocate from any thread. Each thread allocates from and gives back to
/// a shard of the cache of its own (falling back on the other shards
/// before it allocates), so threads' hits do not wait for each other and
/// a hit makes no atomic read-modify-write for its shard — as long as the
/// threads' shards differ (8 of them, by thread token; a shard met by a
/// second thread is held by an atomic swap from then on) and no thread is
/// taking buffers from the other shards (a steal holds them all).
///
/// **Guide:** [Memory pools, for a torch_npu user](crate::guide::pools).
pub struct PinnedPool {
    shared: Arc<Shared>,
    /// Requests up to this many bytes are rounded up to a power of two.
    round_threshold: usize,
}

/// A [`PinnedPool`]'s statistics, from [`PinnedPool::stats`].
///
/// ```
/// use ascend::pool::{PinnedPool, PinnedStats};
/// # let device = ascend::Device::new(0)?;
/// let pool = PinnedPool::new(&device);
/// assert_eq!(pool.stats(), PinnedStats::default());
/// let buffer = pool.alloc(3000)?;
/// let stats = pool.stats();
/// assert_eq!((stats.allocated, stats.requested, stats.misses), (4096, 3000, 1));
/// drop(buffer);
/// assert_eq!((pool.stats().cached_bytes, pool.stats().reserved_peak), (4096, 4096));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PinnedStats {
    /// Bytes in buffers handed out, by capacity (their buckets' sizes; a
    /// buffer taken out of its `Ordered` with `into_inner` has left the
    /// pool and stays counted).
    pub allocated: usize,
    /// Bytes requested by the buffers handed out (their lengths; at most
    /// `allocated`): torch's requested bytes.
    pub requested: usize,
    /// The most bytes handed out at once.
    pub allocated_peak: usize,
    /// Bytes in cached buffers.
    pub cached_bytes: usize,
    /// The most pinned bytes the pool held at once (handed out and
    /// cached): torch's peak reserved host memory.
    pub reserved_peak: usize,
    /// Requests served from the cache.
    pub hits: u64,
    /// Requests that allocated.
    pub misses: u64,
}

impl PinnedPool {
    /// The default rounding threshold: 16 MiB. A power of two can waste
    /// almost half of a buffer (torch users have pinned 32 GiB for a
    /// 20.4 GiB request), which costs little below this size and too much
    /// pinned memory above it.
    pub const DEFAULT_ROUND_THRESHOLD: usize = PinnedSettings::DEFAULT_ROUND_THRESHOLD;

    /// A pool for buffers used with `device`, allocated with the default
    /// [`HostMallocConfig`].
    ///
    /// ```
    /// use ascend::pool::PinnedPool;
    /// let device = ascend::Device::new(0)?;
    /// let pool = PinnedPool::new(&device); // nothing allocated yet
    /// assert_eq!(pool.stats().reserved_peak, 0);
    /// let staging = pool.alloc(1 << 20)?;
    /// assert_eq!(staging.len(), 1 << 20);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(device: &Device) -> Self {
        Self::with_config(device, HostMallocConfig::new())
    }

    /// A pool whose new buffers are allocated with `config`.
    ///
    /// ```
    /// use ascend::host_register::HostMallocConfig;
    /// use ascend::pool::PinnedPool;
    /// let device = ascend::Device::new(0)?;
    /// let config = HostMallocConfig::new().with_module_id(7); // the caller's module
    /// let pool = PinnedPool::with_config(&device, config);
    /// let buffer = pool.alloc(4096)?;
    /// assert_eq!((buffer.capacity(), pool.stats().misses), (4096, 1));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_config(device: &Device, config: HostMallocConfig) -> Self {
        let shared = Arc::new(Shared {
            carrier: recycle::CARRIER,
            device: device.clone(),
            config,
            max_cached: AtomicUsize::new(usize::MAX),
            closed: AtomicBool::new(false),
            shards: std::array::from_fn(|_| new_shard()),
            allocated: SharedTotal::default(),
            reserved: Mutex::new((0, 0)),
            #[cfg(feature = "testing")]
            watch: Mutex::new(Watch::default()),
        });
        #[cfg(feature = "testing")]
        super::watch::register({
            let weak: std::sync::Weak<Shared> = Arc::downgrade(&shared);
            weak
        });
        Self {
            shared,
            round_threshold: Self::DEFAULT_ROUND_THRESHOLD,
        }
    }

    /// A pool configured by `text`, the syntax of [`ENV_ALLOC_CONF`](super::ENV_ALLOC_CONF): its
    /// keys `pinned_max_round_threshold_mb` ([`PinnedPool::with_round_threshold`])
    /// and `pinned_max_cached_size_mb` ([`PinnedPool::with_max_cached_size`]),
    /// as torch_npu reads them from `PYTORCH_NPU_ALLOC_CONF`. The device
    /// pool's keys are checked and left to [`PoolConfig::parse`](super::PoolConfig::parse).
    ///
    /// ```
    /// use ascend::pool::PinnedPool;
    /// let device = ascend::Device::new(0)?;
    /// let pool = PinnedPool::from_conf(&device, "large_chunk_mb:40,pinned_max_round_threshold_mb:1")?;
    /// assert_eq!(pool.alloc(1_500_000)?.capacity(), 1_500_000); // above 1 MiB: not rounded
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`PoolConfig::parse`](super::PoolConfig::parse): [`Error::InvalidArgument`] naming the
    /// entry for an unknown key or a malformed entry or number.
    pub fn from_conf(device: &Device, text: &str) -> Result<Self> {
        // Every entry is checked, the device pool's too.
        Self::from_conf_for(Call::rust("PinnedPool::from_conf"), device, text)
    }

    /// [`PinnedPool::from_conf`] for the public method `call`.
    fn from_conf_for(call: Call, device: &Device, text: &str) -> Result<Self> {
        let (_, pinned) = parse_both(call, text)?;
        Ok(Self::new(device)
            .with_round_threshold(pinned.round_threshold)
            .with_max_cached_size(pinned.max_cached))
    }

    /// [`PinnedPool::from_conf`] of [`ENV_ALLOC_CONF`](super::ENV_ALLOC_CONF), or
    /// [`PinnedPool::new`] when it is unset.
    ///
    /// # Errors
    ///
    /// As [`PinnedPool::from_conf`], and for a value that is not UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{ENV_ALLOC_CONF, PinnedPool};
    /// let device = ascend::Device::new(0)?;
    /// // e.g. ASCEND_ALLOC_CONF=pinned_max_round_threshold_mb:1 in the environment
    /// let pool = PinnedPool::from_env(&device)?;
    /// let like = match std::env::var(ENV_ALLOC_CONF) {
    ///     Ok(text) => PinnedPool::from_conf(&device, &text)?,
    ///     Err(_) => PinnedPool::new(&device),
    /// };
    /// assert_eq!(pool.alloc(3_000_000)?.capacity(), like.alloc(3_000_000)?.capacity());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_env(device: &Device) -> Result<Self> {
        const CALL: Call = Call::rust("PinnedPool::from_env");
        match read_env(CALL)? {
            Some(text) => Self::from_conf_for(CALL, device, &text),
            None => Ok(Self::new(device)),
        }
    }

    /// The pool with requests up to `bytes` rounded up to a power of two
    /// and larger ones kept at their size (`usize::MAX`: every request is
    /// rounded, as torch_npu does by default; 0: none is).
    ///
    /// ```
    /// use ascend::pool::PinnedPool;
    /// let device = ascend::Device::new(0)?;
    /// let pool = PinnedPool::new(&device).with_round_threshold(1 << 20);
    /// assert_eq!(pool.alloc(3000)?.capacity(), 4096);
    /// assert_eq!(pool.alloc(1_500_000)?.capacity(), 1_500_000);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub fn with_round_threshold(mut self, bytes: usize) -> Self {
        self.round_threshold = bytes;
        self
    }

    /// The pool with buffers larger than `bytes` freed when dropped
    /// (once the copies that used them are proven finished) instead of
    /// cached: torch_npu's `pinned_max_cached_size_mb`. By default every
    /// buffer is cached.
    ///
    /// ```
    /// use ascend::pool::PinnedPool;
    /// let device = ascend::Device::new(0)?;
    /// let pool = PinnedPool::new(&device).with_max_cached_size(1 << 20);
    /// drop(pool.alloc(4 << 20)?); // freed, not cached
    /// drop(pool.alloc(4096)?); // cached
    /// assert_eq!(pool.stats().cached_bytes, 4096);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub fn with_max_cached_size(self, bytes: usize) -> Self {
        self.shared.max_cached.store(bytes, Ordering::Relaxed);
        self
    }

    /// The size of the buffer that serves a request of `bytes` bytes (at
    /// least 1): the next power of two up to the threshold, `bytes` above
    /// it; `None` when the power of two overflows.
    fn bucket_size(&self, bytes: usize) -> Option<usize> {
        let bytes = bytes.max(1);
        if bytes > self.round_threshold {
            return Some(bytes);
        }
        bytes.checked_next_power_of_two()
    }

    /// A buffer of `bytes` bytes (its length), in an allocation of the next
    /// power of two up to the pool's rounding threshold and of exactly
    /// `bytes` above it (its capacity, which the statistics count).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the power of two overflows (only
    /// with a threshold above 2^63); the runtime's code of the allocation
    /// (a request larger than the host can pin among them).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// # use ascend::pool::PinnedPool;
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = PinnedPool::new(&device);
    /// let mut staging = pool.alloc(1000)?;
    /// assert_eq!((staging.len(), staging.capacity()), (1000, 1024));
    /// staging.get_mut()?.fill(9); // host access: waits for the buffer's queued copies
    /// let rounds_all = PinnedPool::new(&device).with_round_threshold(usize::MAX);
    /// let overflow = rounds_all.alloc(usize::MAX); // no power of two that large
    /// assert!(matches!(overflow, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[inline(always)]
    pub fn alloc(&self, bytes: usize) -> Result<Ordered<PinnedHostBuf<u8>>> {
        let Some(size) = self.bucket_size(bytes) else {
            return Err(overflow(bytes));
        };
        let token = token();
        // The hit, inlined into the caller, and the slow paths meet before
        // the owner is built, so that it goes to the caller's place in
        // registers: built in returned memory instead, a move out of it
        // (any `?`) read the word-by-word stores with wider loads, which
        // cannot be forwarded from them (as for `DevicePool::alloc`).
        let (buffer, tracks, carried) = match self.shared.take_owned(token, size, bytes) {
            // SAFETY: the cached buffer held a count of the state, which
            // moves to its `Ordered` (see `Shared`).
            Some((buffer, tracks)) => (buffer, tracks, unsafe { Carried::from_raw(self.carrier()) }),
            None => self.take_or_allocate(token, size, bytes)?,
        };
        Ok(self.hand_out(buffer, tracks, carried, size, bytes))
    }

    /// `len` elements of `T` (its length), in a buffer of the pool: the
    /// typed form of [`PinnedPool::alloc`], for staging typed data with no
    /// cast of the bytes either way.
    ///
    /// The buffer shares the pool's buckets and cache with byte buffers
    /// and with other types: its bucket is the one [`PinnedPool::alloc`]
    /// picks for `len * size_of::<T>()` bytes, rounded up to a whole number
    /// of elements when `T`'s size is not a power of two; dropped, it goes
    /// back as bytes, for any request of its bucket. Its
    /// [`capacity`](PinnedHostBuf::capacity) is the bucket's, in elements.
    /// A fresh buffer is zeroed; a cached one holds what its last owner
    /// left, read as `T` (any bit pattern is a valid `Pod`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `T` is zero-sized, needs an
    /// alignment above the 64 bytes the runtime guarantees for pinned
    /// memory, or when `len * size_of::<T>()` (or its bucket) overflows
    /// `usize`; the runtime's code of the allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::PinnedPool;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, Error};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = PinnedPool::new(&device);
    /// let mut staging = pool.alloc_typed::<f32>(1000)?; // 4000 bytes of a 4096-byte bucket
    /// assert_eq!((staging.len(), staging.capacity()), (1000, 1024));
    /// staging.get_mut()?.fill(1.5);
    /// let on_device = Ordered::new(DeviceBuf::<f32>::zeroed(&device, 1000)?);
    /// on_device.copy_from_host(&staging, &stream)?;
    /// let mut back = pool.alloc_typed::<f32>(1000)?;
    /// back.copy_from_device(&on_device, &stream)?;
    /// assert!(back.get_mut()?.iter().all(|&x| x == 1.5)); // waits for the copy
    /// drop((staging, back));
    /// // A typed buffer comes back as bytes, for any request of its bucket.
    /// let mut bytes = pool.alloc(4096)?;
    /// assert_eq!(&bytes.get_mut()?[..4], &1.5f32.to_ne_bytes());
    /// assert_eq!((pool.stats().hits, pool.stats().misses), (1, 2));
    /// let too_many = pool.alloc_typed::<u64>(usize::MAX / 4); // the byte size overflows
    /// assert!(matches!(too_many, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn alloc_typed<T: Pod>(&self, len: usize) -> Result<Ordered<PinnedHostBuf<T>>> {
        const CALL: Call = Call::rust("PinnedPool::alloc_typed");
        let element = size_of::<T>();
        if element == 0 {
            return Err(Error::invalid(CALL, "the element type is zero-sized"));
        }
        if align_of::<T>() > HOST_ALIGN {
            return Err(Error::invalid(
                CALL,
                format!(
                    "alignment {} is above the {HOST_ALIGN} bytes the runtime guarantees",
                    align_of::<T>()
                ),
            ));
        }
        let bytes = len
            .checked_mul(element)
            .ok_or_else(|| Error::invalid(CALL, format!("{len} elements of {element} bytes overflow usize")))?;
        let size = self
            .bucket_size(bytes)
            .and_then(|size| size.checked_next_multiple_of(element))
            .ok_or_else(|| {
                Error::invalid(
                    CALL,
                    format!("{bytes} bytes overflow usize when rounded up to their bucket"),
                )
            })?;
        let token = token();
        let (buffer, tracks, carried) = match self.shared.take_owned(token, size, bytes) {
            // SAFETY: as in `alloc`.
            Some((buffer, tracks)) => (buffer, tracks, unsafe { Carried::from_raw(self.carrier()) }),
            None => self.take_or_allocate(token, size, bytes)?,
        };
        match buffer.into_typed::<T>(len) {
            Ok(typed) => {
                self.shared.watch_out(typed.as_ptr() as usize, size);
                let recycle = Recycle::CarriedBytes {
                    carried,
                    into_bytes: PinnedHostBuf::<T>::into_bytes,
                };
                Ok(Ordered::recycled(typed, bytes, tracks, recycle))
            }
            // Never: the bucket is whole elements, and the runtime's
            // alignment is checked above. The buffer goes back.
            Err(buffer) => {
                drop(self.hand_out(buffer, tracks, carried, size, bytes));
                Err(Error::invalid(
                    CALL,
                    format!("a {size}-byte buffer does not hold {len} aligned elements of {element} bytes"),
                ))
            }
        }
    }

    /// A buffer of `size` bytes for a request of `bytes` past an owner's
    /// hit of the caller's shard (from the shards, or allocated), with its
    /// uses and its count of the state.
    #[allow(clippy::type_complexity)]
    #[inline(never)]
    fn take_or_allocate(
        &self,
        token: usize,
        size: usize,
        bytes: usize,
    ) -> Result<(PinnedHostBuf<u8>, Tracks, Carried<PinnedHostBuf<u8>>)> {
        Ok(match self.shared.take_slowly(token, size, bytes) {
            // SAFETY: as in `alloc`.
            Some((buffer, tracks)) => (buffer, tracks, unsafe { Carried::from_raw(self.carrier()) }),
            None => {
                let buffer = self.shared.fresh_counted(token, size, bytes)?;
                // The new buffer's count of the state.
                let count = Arc::into_raw(Arc::clone(&self.shared));
                // SAFETY: `count` is from `Arc::into_raw`: the count made
                // for the buffer's `Ordered`, at the state's carrier.
                let carried = unsafe { Carried::from_raw(recycle::carrier_of(count)) };
                (buffer, Tracks::default(), carried)
            }
        })
    }

    /// `buffer` of `size` bytes, with its uses and its count of the state,
    /// handed out for a request of `bytes`.
    #[inline(always)]
    fn hand_out(
        &self,
        mut buffer: PinnedHostBuf<u8>,
        tracks: Tracks,
        carried: Carried<PinnedHostBuf<u8>>,
        size: usize,
        bytes: usize,
    ) -> Ordered<PinnedHostBuf<u8>> {
        self.shared.watch_out(buffer.as_ptr() as usize, size);
        // SAFETY: the pool's buffers are zeroed when allocated, so all
        // their elements up to the capacity are initialised.
        let fits = unsafe { buffer.set_len(bytes) };
        // Never false: the bucket's size is at least `bytes`.
        debug_assert!(fits, "a {size}-byte bucket for {bytes} bytes");
        Ordered::recycled(buffer, bytes, tracks, Recycle::Carried(carried))
    }

    /// The state's carrier, by a pointer that may reach the whole state.
    fn carrier(&self) -> std::ptr::NonNull<Carrier<PinnedHostBuf<u8>>> {
        // SAFETY: from `Arc::as_ptr`.
        unsafe { recycle::carrier_of(Arc::as_ptr(&self.shared)) }
    }

    /// Frees the cached buffers whose work is proven finished (each
    /// stream that used them is synchronised first).
    ///
    /// # Errors
    ///
    /// The first error: a synchronisation that could not prove the work
    /// finished (that buffer stays cached), or a failed free.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::pool::PinnedPool;
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = PinnedPool::new(&device);
    /// drop(pool.alloc(1 << 20)?);
    /// assert_eq!(pool.stats().cached_bytes, 1 << 20);
    /// pool.empty_cache()?; // the pinned memory goes back to the host
    /// assert_eq!(pool.stats().cached_bytes, 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn empty_cache(&self) -> Result<()> {
        let mut first = None;
        // Taken out of every shard at once (one barrier for all); settled
        // and freed with no shard held.
        let cached = self.shared.take_all_cached();
        let (mut freed, mut freed_buffers) = (0, 0);
        let mut kept: Vec<Cached> = Vec::new();
        for (buffer, mut tracks) in cached {
            match tracks.settle("PinnedPool::empty_cache") {
                Settled::Proven(_) => {
                    let size = buffer.capacity();
                    if let Err(error) = buffer.free() {
                        first.get_or_insert(error);
                    }
                    freed += size;
                    freed_buffers += 1;
                }
                Settled::Unproven(error) => {
                    first.get_or_insert(error);
                    kept.push((buffer, tracks));
                }
            }
        }
        self.shared.count_freed(freed);
        self.release_counts(freed_buffers);
        if !kept.is_empty() {
            // Back into the calling thread's shard, counted there.
            let token = token();
            let mut held = self.shared.shards[shard_of(token)].hold(token);
            let (state, counts) = held.parts();
            for cached in kept {
                counts.cached(cached.0.capacity() as isize);
                state.keep(cached);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// The statistics now.
    ///
    /// ```
    /// # use ascend::pool::PinnedPool;
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = PinnedPool::new(&device);
    /// drop(pool.alloc(4096)?);
    /// let again = pool.alloc(3000)?; // the same 4096-byte bucket
    /// let stats = pool.stats();
    /// assert_eq!((stats.hits, stats.misses, stats.requested), (1, 1, 3000));
    /// # drop(again);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stats(&self) -> PinnedStats {
        self.shared.stats()
    }
}

impl PinnedPool {
    /// Lets go of the counts of the state that `buffers` cached buffers,
    /// freed or leaked, held (see [`Shared`]).
    fn release_counts(&self, buffers: usize) {
        for _ in 0..buffers {
            // SAFETY: each such buffer held one count, which nothing holds
            // any more; the pool's own count keeps the state alive
            // meanwhile.
            unsafe { Arc::decrement_strong_count(Arc::as_ptr(&self.shared)) };
        }
    }
}

impl Drop for PinnedPool {
    /// Frees the cached buffers whose work is proven finished (leaks the
    /// others); buffers still handed out are freed when they come back.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Relaxed);
        // Every shard held after `closed` is set: a buffer coming back
        // either is in its shard already (and taken here) or, holding its
        // shard after this, sees `closed`.
        let cached = self.shared.take_all_cached();
        let (mut freed, buffers) = (0, cached.len());
        for (buffer, mut tracks) in cached {
            freed += buffer.capacity();
            match tracks.settle("PinnedPool drop") {
                Settled::Proven(_) => drop(buffer),
                Settled::Unproven(_) => std::mem::forget(buffer),
            }
        }
        self.shared.count_freed(freed);
        // A leaked buffer's count goes too: nothing gives it back.
        self.release_counts(buffers);
    }
}

impl fmt::Debug for PinnedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedPool")
            .field("device", &self.shared.device.id())
            .field("round_threshold", &self.round_threshold)
            .field("max_cached", &self.shared.max_cached.load(Ordering::Relaxed))
            .field("stats", &self.stats())
            .finish()
    }
}

/// [`PinnedPool::alloc`]'s error for `bytes` whose power of two overflows.
#[cold]
#[inline(never)]
fn overflow(bytes: usize) -> Error {
    Error::invalid(
        Call::rust("PinnedPool::alloc"),
        format!("{bytes} bytes overflow usize when rounded up to a power of two"),
    )
}
