//! [`RuntimePool`]: the runtime's stream-ordered memory pool
//! (`aclrtMemPool*`), with allocations that are [`Ordered`] owners.

use crate::error::{Call, Error, Result, check};
use crate::memory::{DeviceStorage, DeviceStorageMut};
use crate::stream::{Ordered, Recycle, Settled, Stream, Tracks, WHOLE, complete_all, wait_for};
use crate::{Device, sys};
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// The settings of a [`RuntimePool`].
///
/// `max_size` 0 lets the pool grow to the device's memory; the runtime
/// rounds it up to 2 MiB. The reuse flags are the pool's
/// `ACL_RT_MEM_POOL_REUSE_*` attributes: with all of them off (the
/// runtime's default) memory freed on one stream is reused on another only
/// once that free is known complete.
///
/// ```
/// use ascend::Device;
/// use ascend::pool::{RuntimePool, RuntimePoolConfig};
/// let device = Device::new(0)?;
/// let config = RuntimePoolConfig {
///     max_size: 64 << 20,           // at most 64 MiB
///     release_threshold: 16 << 20, // keep up to 16 MiB cached when idle
///     ..RuntimePoolConfig::default()
/// };
/// let pool = RuntimePool::new(&device, config)?;
/// assert_eq!(pool.stats()?.used_current, 0);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimePoolConfig {
    /// The most memory the pool may reserve, in bytes (0: the device's).
    pub max_size: usize,
    /// Idle memory the pool keeps cached (`ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD`).
    pub release_threshold: u64,
    /// `ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES`.
    pub follow_event_dependencies: bool,
    /// `ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC`.
    pub allow_opportunistic: bool,
    /// `ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES`.
    pub allow_internal_dependencies: bool,
}

/// A [`RuntimePool`]'s sizes in bytes (its `*_MEM_CURRENT` and `*_MEM_HIGH`
/// attributes).
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{RuntimePool, RuntimePoolConfig};
/// use ascend::{Device, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
/// let block = pool.alloc::<u8>(1 << 20, &stream)?;
/// let stats = pool.stats()?;
/// assert!(stats.used_current >= 1 << 20 && stats.reserved_current >= stats.used_current);
/// drop(block); // freed on `stream`
/// assert!(pool.stats()?.used_high >= 1 << 20);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimePoolStats {
    /// Memory the pool holds now (handed out or cached).
    pub reserved_current: u64,
    /// The most it held.
    pub reserved_high: u64,
    /// Memory handed out now.
    pub used_current: u64,
    /// The most handed out at once.
    pub used_high: u64,
}

/// The pool handle, destroyed when the pool and its last allocation go.
struct Inner {
    device: Device,
    raw: usize,
    /// The streams allocations were freed on: synchronised before the pool
    /// is destroyed, so no queued work still uses its memory.
    streams: Mutex<Vec<Arc<Stream>>>,
}

impl Inner {
    fn raw(&self) -> sys::aclrtMemPool {
        self.raw as sys::aclrtMemPool
    }

    fn freed_on(&self, stream: &Arc<Stream>) {
        let mut streams = self.streams.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !streams.iter().any(|known| known.as_raw() == stream.as_raw()) {
            streams.push(Arc::clone(stream));
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let streams = std::mem::take(self.streams.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if let Settled::Unproven(_) = complete_all("RuntimePool", &streams) {
            log::error!("RuntimePool: its frees cannot be proven finished; the pool is leaked, not destroyed");
            return;
        }
        if let Err(error) = self.device.make_current() {
            log::error!("RuntimePool: cannot make its device current ({error}); the pool is leaked");
            return;
        }
        // SAFETY: a live pool handle, destroyed once; no allocation of it
        // is live, and every free's stream has finished.
        if let Err(error) = check("aclrtMemPoolDestroy", unsafe { sys::aclrtMemPoolDestroy(self.raw()) }) {
            log::error!("RuntimePool: aclrtMemPoolDestroy failed ({error}); the pool is leaked");
        }
    }
}

/// A stream-ordered memory pool of the runtime (`aclrtMemPoolCreate`).
///
/// [`RuntimePool::alloc`] takes memory with `aclrtMemPoolMallocAsync` on a
/// stream and returns it as an [`Ordered`] owner: every ordered copy,
/// memset and view works on it, on any stream. Dropping it frees it with
/// `aclrtMemPoolFreeAsync` on its stream, after making that stream wait for
/// its uses on other streams, so the runtime may hand the memory out again
/// at once on that stream. If a wait or the free fails, the memory is
/// leaked (and logged), never freed while work may use it.
///
/// The pool lives while it or any of its allocations does; the last one
/// synchronises the streams its memory was freed on and destroys it.
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{RuntimePool, RuntimePoolConfig};
/// use ascend::{Device, stream::Stream};
/// let device = Device::new(0)?;
/// let (upload, compute) = (Arc::new(Stream::new(&device)?), Arc::new(Stream::new(&device)?));
/// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
/// let data = Arc::new(pool.alloc::<u32>(1024, &upload)?);
/// data.fill_u32(7, &upload)?;
/// let copy = Arc::new(pool.alloc::<u32>(1024, &compute)?);
/// copy.copy_from_device(&data, &compute)?; // waits for the fill on `upload`
/// assert_eq!(copy.view().to_vec::<u32>()?, vec![7; 1024]);
/// assert!(pool.stats()?.used_current >= 2 * 4096);
/// drop(data); // freed on `upload` after `compute` is done with it
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `RuntimePool` is `Send + Sync`; clone it to share it.
#[derive(Clone)]
#[doc(alias = "aclrtMemPoolDestroy")]
pub struct RuntimePool {
    inner: Arc<Inner>,
}

impl fmt::Debug for RuntimePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimePool")
            .field("device", &self.inner.device.id())
            .field("handle", &(self.inner.raw as *const c_void))
            .finish()
    }
}

impl RuntimePool {
    /// Creates a pool on `device` (`aclrtMemPoolCreate`) and sets its
    /// release threshold and reuse flags.
    ///
    /// # Errors
    ///
    /// The runtime's code: `max_size` above the device's memory, a release
    /// threshold above the pool's size.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let config = RuntimePoolConfig { max_size: 32 << 20, ..RuntimePoolConfig::default() };
    /// let pool = RuntimePool::new(&device, config)?;
    /// assert_eq!(pool.stats()?.reserved_current, 0); // nothing reserved yet
    /// // A threshold above the pool's size is refused by the runtime.
    /// let too_high = RuntimePoolConfig { release_threshold: 1 << 40, ..config };
    /// assert!(RuntimePool::new(&device, too_high).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias("aclrtMemPoolCreate", "aclrtMemPoolSetAttr"))]
    pub fn new(device: &Device, config: RuntimePoolConfig) -> Result<Self> {
        device.make_current()?;
        // SAFETY: a plain C struct; all zeros is valid (reserved bytes 0).
        let mut props: sys::aclrtMemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::ACL_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type_ = sys::ACL_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = device.id() as u32;
        props.maxSize = config.max_size;
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer and properties.
        check("aclrtMemPoolCreate", unsafe {
            sys::aclrtMemPoolCreate(&mut raw, &props)
        })?;
        let pool = Self {
            inner: Arc::new(Inner {
                device: device.clone(),
                raw: raw as usize,
                streams: Mutex::new(Vec::new()),
            }),
        };
        for (attr, on) in [
            (
                sys::ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                config.follow_event_dependencies,
            ),
            (
                sys::ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC,
                config.allow_opportunistic,
            ),
            (
                sys::ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                config.allow_internal_dependencies,
            ),
        ] {
            let mut value = u32::from(on);
            // SAFETY: a live pool; a u32 for a reuse flag.
            check("aclrtMemPoolSetAttr", unsafe {
                sys::aclrtMemPoolSetAttr(pool.inner.raw(), attr, (&raw mut value).cast())
            })?;
        }
        pool.set_release_threshold(config.release_threshold)?;
        Ok(pool)
    }

    /// The pool's device.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// assert_eq!(pool.device().id(), device.id());
    /// let stream = Arc::new(Stream::new(pool.device())?); // a stream for its allocations
    /// drop(pool.alloc::<u8>(64, &stream)?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// `len` elements of `T` from the pool, ordered on `stream`
    /// (`aclrtMemPoolMallocAsync`): work on `stream` uses them at once, work
    /// on another stream waits for `stream` first. The memory is not
    /// initialised. A `len` of 0 takes one byte (the runtime gives nothing
    /// for 0).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `len * size_of::<T>()` overflows or
    /// `stream` is on another device; the runtime's code when the pool is
    /// at its `max_size` (`ACL_ERROR_RT_INTERNAL_ERROR`) or out of memory.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// let first = pool.alloc::<u8>(100, &stream)?;
    /// let address = first.view().device_ptr();
    /// drop(first); // freed on `stream`...
    /// let again = pool.alloc::<u8>(100, &stream)?; // ...so reused at once there
    /// assert_eq!(again.view().device_ptr(), address);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemPoolMallocAsync")]
    pub fn alloc<T: Pod>(&self, len: usize, stream: &Arc<Stream>) -> Result<Ordered<RuntimePoolBuf<T>>> {
        let call = Call::new("RuntimePool::alloc", "aclrtMemPoolMallocAsync");
        let Some(bytes) = len.checked_mul(std::mem::size_of::<T>()) else {
            return Err(Error::invalid(call, format!("{len} elements overflow")));
        };
        if stream.device().id() != self.inner.device.id() {
            return Err(Error::invalid(call, "the stream is on another device than the pool"));
        }
        self.inner.device.make_current()?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, a live pool and stream.
        check("aclrtMemPoolMallocAsync", unsafe {
            sys::aclrtMemPoolMallocAsync(&mut ptr, bytes.max(1), self.inner.raw(), stream.as_raw())
        })?;
        let buf = RuntimePoolBuf {
            pool: Arc::clone(&self.inner),
            ptr: ptr as usize,
            len,
            stream: Arc::clone(stream),
            _element: PhantomData,
        };
        // The allocation is ordered on `stream`: a use elsewhere waits for it.
        let mut tracks = Tracks::default();
        tracks.add_writer(stream, WHOLE);
        Ok(Ordered::recycled(buf, bytes, tracks, Recycle::Owner(recycle::<T>)))
    }

    /// Releases idle cached memory until the pool reserves at most
    /// `min_bytes_to_keep` bytes (`aclrtMemPoolTrimTo`).
    ///
    /// # Errors
    ///
    /// The runtime's code: `min_bytes_to_keep` below the memory handed out
    /// or above the pool's size.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// let block = pool.alloc::<u8>(2 << 20, &stream)?;
    /// assert!(pool.trim_to(0).is_err(), "below the bytes handed out");
    /// drop(block);
    /// stream.synchronize()?; // the free has run
    /// pool.trim_to(0)?; // the idle memory goes back to the device
    /// assert_eq!(pool.stats()?.used_current, 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemPoolTrimTo")]
    pub fn trim_to(&self, min_bytes_to_keep: usize) -> Result<()> {
        self.inner.device.make_current()?;
        // SAFETY: a live pool.
        check("aclrtMemPoolTrimTo", unsafe {
            sys::aclrtMemPoolTrimTo(self.inner.raw(), min_bytes_to_keep)
        })
    }

    /// Sets how much idle memory the pool keeps cached
    /// (`ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD`).
    ///
    /// # Errors
    ///
    /// The runtime's code for a threshold above the pool's size.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig { max_size: 64 << 20, ..Default::default() })?;
    /// pool.set_release_threshold(8 << 20)?; // keep up to 8 MiB cached when idle
    /// assert!(pool.set_release_threshold(1 << 40).is_err(), "above the pool's size");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemPoolSetAttr")]
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        self.inner.device.make_current()?;
        let mut value = bytes;
        // SAFETY: a live pool; a u64 for the threshold.
        check("aclrtMemPoolSetAttr", unsafe {
            sys::aclrtMemPoolSetAttr(
                self.inner.raw(),
                sys::ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD,
                (&raw mut value).cast(),
            )
        })
    }

    fn attr(&self, attr: sys::aclrtMemPoolAttr) -> Result<u64> {
        let mut value = 0u64;
        // SAFETY: a live pool; a u64 for a size attribute.
        check("aclrtMemPoolGetAttr", unsafe {
            sys::aclrtMemPoolGetAttr(self.inner.raw(), attr, (&raw mut value).cast())
        })?;
        Ok(value)
    }

    /// The pool's reserved and used bytes, current and high-water.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtMemPoolGetAttr`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// let block = pool.alloc::<u32>(1024, &stream)?;
    /// let stats = pool.stats()?;
    /// assert!(stats.used_current >= 4096 && stats.reserved_current >= stats.used_current);
    /// drop(block);
    /// stream.synchronize()?;
    /// let stats = pool.stats()?;
    /// assert_eq!(stats.used_current, 0);
    /// assert!(stats.used_high >= 4096, "the high-water mark stays");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemPoolGetAttr")]
    pub fn stats(&self) -> Result<RuntimePoolStats> {
        self.inner.device.make_current()?;
        Ok(RuntimePoolStats {
            reserved_current: self.attr(sys::ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT)?,
            reserved_high: self.attr(sys::ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH)?,
            used_current: self.attr(sys::ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT)?,
            used_high: self.attr(sys::ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH)?,
        })
    }
}

/// Makes the allocation's stream wait for its uses on other streams, then
/// drops it (which frees it on that stream); leaks it if a wait fails.
fn recycle<T>(buf: RuntimePoolBuf<T>, tracks: Tracks) {
    let mut streams = Vec::new();
    tracks.all_streams(&mut streams);
    for other in streams.iter().filter(|other| other.as_raw() != buf.stream.as_raw()) {
        if let Err(error) = wait_for(&buf.stream, other) {
            log::error!(
                "RuntimePool: cannot order the free of {:#x} after its uses on another stream ({error}); the memory \
                 is leaked",
                buf.ptr
            );
            std::mem::forget(buf);
            return;
        }
    }
    drop(buf);
}

/// Memory from a [`RuntimePool`]: `len` elements of `T`, ordered on the
/// stream it was allocated on. It lives in an [`Ordered`] (what
/// [`RuntimePool::alloc`] returns); taken out with
/// [`Ordered::into_inner`] it frees itself on that stream when dropped.
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{RuntimePool, RuntimePoolConfig};
/// use ascend::{Device, PinnedHostBuf, stream::{Ordered, Stream}};
/// let device = Device::new(0)?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
/// let tensor = pool.alloc::<u32>(256, &stream)?; // an Ordered<RuntimePoolBuf<u32>>
/// let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[7u32; 256])?);
/// tensor.copy_from_host(&staging, &stream)?;
/// assert_eq!(tensor.view().to_vec::<u32>()?, [7; 256]);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtMemPoolFreeAsync")]
pub struct RuntimePoolBuf<T> {
    pool: Arc<Inner>,
    ptr: usize,
    len: usize,
    stream: Arc<Stream>,
    _element: PhantomData<T>,
}

impl<T> RuntimePoolBuf<T> {
    /// The number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// let block = pool.alloc::<f32>(300, &stream)?.into_inner()?; // out of its Ordered
    /// assert_eq!(block.len(), 300);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// let empty = pool.alloc::<f32>(0, &stream)?.into_inner()?;
    /// assert!(empty.is_empty());
    /// assert!(!pool.alloc::<f32>(1, &stream)?.into_inner()?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The stream the memory is ordered on (and freed on).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::pool::{RuntimePool, RuntimePoolConfig};
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = RuntimePool::new(&device, RuntimePoolConfig::default())?;
    /// let block = pool.alloc::<u8>(64, &stream)?.into_inner()?;
    /// assert!(Arc::ptr_eq(block.stream(), &stream)); // freed on it when dropped
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stream(&self) -> &Arc<Stream> {
        &self.stream
    }
}

impl<T> fmt::Debug for RuntimePoolBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimePoolBuf")
            .field("address", &(self.ptr as *const c_void))
            .field("len", &self.len)
            .finish()
    }
}

impl<T> Drop for RuntimePoolBuf<T> {
    fn drop(&mut self) {
        // Every use on another stream was waited for (by `recycle`, or by
        // the host in `Ordered::into_inner`): the free's stream position
        // follows them all.
        let freed = self.pool.device.make_current().and_then(|()| {
            // SAFETY: a live allocation of the pool, freed once.
            check("aclrtMemPoolFreeAsync", unsafe {
                sys::aclrtMemPoolFreeAsync(self.ptr as *mut c_void, self.stream.as_raw())
            })
        });
        match freed {
            Ok(()) => self.pool.freed_on(&self.stream),
            Err(error) => {
                log::error!(
                    "RuntimePool: aclrtMemPoolFreeAsync of {:#x} failed ({error}); the memory is leaked",
                    self.ptr
                );
                // Keep the pool alive: its memory may still be in use.
                std::mem::forget(Arc::clone(&self.pool));
            }
        }
    }
}

// SAFETY: the address is the pool's device memory, `len * size_of::<T>()`
// bytes, stable while the value lives (freed only by its drop, or leaked),
// never overlapping another live allocation (the runtime's pool hands out
// disjoint blocks), and written only through `&mut self` or by the
// `Ordered` that owns it.
unsafe impl<T: Pod> DeviceStorage for RuntimePoolBuf<T> {
    fn device(&self) -> &Device {
        &self.pool.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.ptr as *const c_void
    }

    fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

// SAFETY: as above; exclusive access to the value is exclusive access to
// its bytes.
unsafe impl<T: Pod> DeviceStorageMut for RuntimePoolBuf<T> {}
