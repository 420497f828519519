//! [`AllocatorRegistration`]: a Rust allocator registered as a stream's
//! custom allocator.

use super::block::DeviceAllocator;
use super::descriptor::Descriptor;
use super::trampolines::AllocatorObject;
use crate::Call;
use crate::error::{Error, Result, check};
use crate::stream::Stream;
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{NonNull, null_mut};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

/// Serialises this crate's check-then-register steps.
static REGISTERING: Mutex<()> = Mutex::new(());

/// A [`DeviceAllocator`] registered on a stream (`aclrtAllocatorRegister`),
/// borrowing the stream for `'s` so it cannot be destroyed meanwhile.
/// Dropping it (or [`AllocatorRegistration::unregister`]) unregisters
/// (`aclrtAllocatorUnregister`), then destroys the descriptor and releases
/// the allocator — in that order, so no callback can reach a freed object.
///
/// The C API offers no way to wait for a callback already in flight: end a
/// registration only when no other thread is submitting work that
/// allocates on the stream.
///
/// The runtime keeps a copy of the descriptor per stream and a second
/// registration on a stream silently replaces the first, so registering on
/// a stream that already has an allocator is refused.
///
/// ```
/// use ascend::allocator::{AllocatorRegistration, Block, DeviceAllocator};
/// use ascend::{Device, DeviceBuf, stream::Stream};
/// use std::collections::HashMap;
/// use std::ptr::NonNull;
/// use std::sync::{Arc, Mutex};
///
/// /// Hands out one `DeviceBuf` per block.
/// struct PerBlock {
///     device: Device,
///     live: Mutex<HashMap<usize, DeviceBuf<u8>>>,
/// }
///
/// // SAFETY: each block is a live `DeviceBuf` of at least `size` bytes,
/// // kept until `free` takes it back.
/// unsafe impl DeviceAllocator for PerBlock {
///     fn alloc(&self, size: usize) -> Option<Block> {
///         let buf = DeviceBuf::<u8>::zeroed(&self.device, size).ok()?;
///         let address = NonNull::new(buf.as_raw())?;
///         self.live.lock().ok()?.insert(address.as_ptr() as usize, buf);
///         Some(Block::new(address, size))
///     }
///     fn free(&self, block: Block) {
///         if let Ok(mut live) = self.live.lock() {
///             live.remove(&(block.address().as_ptr() as usize));
///         }
///     }
/// }
///
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let allocator = Arc::new(PerBlock { device: device.clone(), live: Mutex::default() });
/// let registration = AllocatorRegistration::register(&stream, allocator)?;
/// assert!(ascend::allocator::registered_on(&stream)?);
/// registration.unregister()?;
/// assert!(!ascend::allocator::registered_on(&stream)?);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// # Leaking a registration
///
/// [`std::mem::forget`] on a registration leaves the allocator registered
/// and leaks it: the runtime can keep calling it, and it stays valid because
/// it is never freed (the allocator is `'static`).
///
/// **Threads:** `AllocatorRegistration` is `Send` and `Sync`.
pub struct AllocatorRegistration<'s> {
    stream: NonNull<c_void>,
    /// Destroyed after unregistering; `None` once released.
    descriptor: Option<Descriptor>,
    /// The allocator behind the descriptor's object pointer (from
    /// `Box::leak`); `None` once released.
    object: Option<NonNull<AllocatorObject>>,
    /// Whether the runtime holds this registration.
    registered: bool,
    /// The allocator (also held by the object).
    allocator: Arc<dyn DeviceAllocator>,
    _stream: PhantomData<&'s Stream>,
}

// SAFETY: the stream and descriptor handles are tokens of ACL-side
// bookkeeping, usable from any thread; the object holds an
// `Arc<dyn DeviceAllocator>`, which is `Send + Sync`.
unsafe impl Send for AllocatorRegistration<'_> {}
// SAFETY: shared access only reads handles and the allocator (`Sync`).
unsafe impl Sync for AllocatorRegistration<'_> {}

impl<'s> AllocatorRegistration<'s> {
    /// Registers `allocator` as `stream`'s custom allocator.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the stream already has an allocator
    /// registered; the runtime's code.
    pub fn register(stream: &'s Stream, allocator: Arc<dyn DeviceAllocator>) -> Result<Self> {
        // SAFETY: the borrow keeps the stream alive (and its handle valid)
        // for `'s`, the registration's lifetime.
        unsafe { Self::register_for("AllocatorRegistration::register", stream.as_raw(), allocator) }
    }

    /// Registers `allocator` on a raw stream handle.
    ///
    /// # Safety
    ///
    /// `stream` must be a live stream that is not destroyed before the
    /// registration ends (for `'s`, which the caller chooses).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a NULL stream (the default stream
    /// cannot take an allocator) or one that already has an allocator
    /// registered; the runtime's code.
    pub unsafe fn register_raw(stream: sys::aclrtStream, allocator: Arc<dyn DeviceAllocator>) -> Result<Self> {
        // SAFETY: forwarded contract.
        unsafe { Self::register_for("AllocatorRegistration::register_raw", stream, allocator) }
    }

    /// [`AllocatorRegistration::register_raw`] for the public method
    /// `method`.
    ///
    /// # Safety
    ///
    /// As [`AllocatorRegistration::register_raw`].
    unsafe fn register_for(
        method: &'static str,
        stream: sys::aclrtStream,
        allocator: Arc<dyn DeviceAllocator>,
    ) -> Result<Self> {
        const API: &str = "aclrtAllocatorRegister";
        let stream = NonNull::new(stream).ok_or_else(|| {
            Error::invalid(
                Call::new(method, API),
                "the stream is NULL: the default stream cannot take an allocator",
            )
        })?;
        // The check and the registration are one step for this crate's
        // registrations (the runtime would silently replace the first).
        let _one_at_a_time = REGISTERING.lock().unwrap_or_else(PoisonError::into_inner);
        if registered_on_raw(stream.as_ptr())? {
            return Err(Error::invalid(
                Call::new(method, API),
                "the stream already has a custom allocator; end that registration first (registering again would silently replace it)",
            ));
        }
        let object = NonNull::from(Box::leak(Box::new(AllocatorObject::new(Arc::clone(&allocator)))));
        // From here `Drop` frees the object and the descriptor on failure.
        let mut registration = Self {
            stream,
            descriptor: None,
            object: Some(object),
            registered: false,
            allocator,
            _stream: PhantomData,
        };
        let descriptor = registration.descriptor.insert(Descriptor::new(object)?).raw();
        // SAFETY: a live stream (the caller's contract) and a live, complete
        // descriptor whose object outlives the registration (freed only
        // after unregistering).
        check(API, unsafe { sys::aclrtAllocatorRegister(stream.as_ptr(), descriptor) })?;
        registration.registered = true;
        Ok(registration)
    }

    /// The registered allocator.
    pub fn allocator(&self) -> &Arc<dyn DeviceAllocator> {
        &self.allocator
    }

    /// Blocks handed to the runtime and not given back yet.
    pub fn outstanding_blocks(&self) -> usize {
        // SAFETY: the object lives until `release`, which takes `&mut self`.
        self.object.map_or(0, |object| {
            unsafe { object.as_ref() }.outstanding.load(Ordering::Relaxed)
        })
    }

    /// The raw stream handle.
    pub fn stream_raw(&self) -> sys::aclrtStream {
        self.stream.as_ptr()
    }

    /// The raw descriptor handle (owned by the registration: do not
    /// destroy it or change its fields).
    pub fn descriptor_raw(&self) -> sys::aclrtAllocatorDesc {
        self.descriptor.as_ref().map_or(null_mut(), Descriptor::raw)
    }

    /// Unregisters now, reporting a failure. When unregistering fails the
    /// allocator is leaked rather than freed, since the runtime may still
    /// call it.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtAllocatorGetByStream`,
    /// `aclrtAllocatorUnregister` or `aclrtAllocatorDestroyDesc`.
    pub fn unregister(mut self) -> Result<()> {
        self.release()
    }

    /// Whether the runtime's allocator for the stream is still this one
    /// (raw calls may have replaced or unregistered it).
    fn still_registered(&self) -> Result<bool> {
        let mut descriptor = null_mut();
        let mut object = null_mut();
        // SAFETY: a stream handle (only looked up) and valid out-pointers;
        // the other outputs are optional (NULL).
        let code = unsafe {
            sys::aclrtAllocatorGetByStream(
                self.stream.as_ptr(),
                &mut descriptor,
                &mut object,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        };
        if code == sys::ACL_ERROR_INVALID_PARAM {
            return Ok(false);
        }
        check("aclrtAllocatorGetByStream", code)?;
        Ok(self.object.is_some_and(|ours| object == ours.as_ptr().cast()))
    }

    fn release(&mut self) -> Result<()> {
        let mut result = Ok(());
        let mut object_reachable = false;
        if std::mem::take(&mut self.registered) {
            match self.still_registered() {
                Ok(true) => {
                    // SAFETY: a stream handle, only looked up.
                    let code = unsafe { sys::aclrtAllocatorUnregister(self.stream.as_ptr()) };
                    if let Err(error) = check("aclrtAllocatorUnregister", code) {
                        object_reachable = true;
                        result = Err(error);
                    }
                }
                Ok(false) => log::warn!(
                    "AllocatorRegistration: the stream's allocator was replaced or unregistered outside this registration"
                ),
                Err(error) => {
                    object_reachable = true;
                    result = Err(error);
                }
            }
        }
        if let Some(descriptor) = self.descriptor.take() {
            let destroyed = descriptor.destroy();
            if result.is_ok() {
                result = destroyed;
            }
        }
        if let Some(object) = self.object.take() {
            if object_reachable {
                log::warn!("AllocatorRegistration: the allocator is leaked, since the runtime may still call it");
            } else {
                // SAFETY: from `Box::leak` in `register_raw`; the runtime no
                // longer holds it, and it is freed once (`take`).
                let object = unsafe { Box::from_raw(object.as_ptr()) };
                let outstanding = object.outstanding.load(Ordering::Relaxed);
                if outstanding != 0 {
                    log::warn!("AllocatorRegistration: {outstanding} block(s) the runtime allocated were never freed");
                }
            }
        }
        result
    }
}

impl Drop for AllocatorRegistration<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("AllocatorRegistration drop: {error}");
        }
    }
}

impl fmt::Debug for AllocatorRegistration<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllocatorRegistration")
            .field("stream", &self.stream)
            .field("descriptor", &self.descriptor_raw())
            .field("registered", &self.registered)
            .field("outstanding_blocks", &self.outstanding_blocks())
            .finish()
    }
}

/// Whether `stream` has a custom allocator registered
/// (`aclrtAllocatorGetByStream`).
///
/// # Errors
///
/// The runtime's code.
pub fn registered_on(stream: &Stream) -> Result<bool> {
    registered_on_raw(stream.as_raw())
}

/// Whether the raw stream handle has a custom allocator registered. The
/// handle is only looked up, never used.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a NULL stream; the runtime's code.
// The handle is only a key in the ACL layer's table (acl-behaviour.md §10:
// "stream handle itself not validated"); nothing dereferences it.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn registered_on_raw(stream: sys::aclrtStream) -> Result<bool> {
    const API: &str = "aclrtAllocatorGetByStream";
    if stream.is_null() {
        return Err(Error::invalid(
            Call::new("allocator::registered_on_raw", API),
            "the stream is NULL",
        ));
    }
    crate::backend()?;
    let mut descriptor = null_mut();
    // SAFETY: the handle is only a lookup key; the descriptor out-pointer
    // is valid and the other outputs are optional (NULL).
    let code = unsafe {
        sys::aclrtAllocatorGetByStream(
            stream,
            &mut descriptor,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        )
    };
    if code == sys::ACL_ERROR_INVALID_PARAM {
        return Ok(false);
    }
    check(API, code)?;
    Ok(true)
}
