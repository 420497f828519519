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
#[doc(alias = "aclrtAllocatorDestroyDesc")]
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # struct Never;
    /// # // SAFETY: it never returns a block.
    /// # unsafe impl DeviceAllocator for Never {
    /// #     fn alloc(&self, _: usize) -> Option<Block> { None }
    /// #     fn free(&self, _: Block) {}
    /// # }
    /// use ascend::allocator::AllocatorRegistration;
    /// use ascend::{Device, Error, Stream};
    /// use std::sync::Arc;
    /// let stream = Stream::new(&Device::new(0)?)?;
    /// let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
    /// // A second allocator on the same stream is refused.
    /// let error = AllocatorRegistration::register(&stream, Arc::new(Never)).unwrap_err();
    /// assert!(matches!(error, Error::InvalidArgument { .. }));
    /// drop(registration); // unregisters
    /// assert!(!ascend::allocator::registered_on(&stream)?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias("aclrtAllocatorCreateDesc", "aclrtAllocatorSetObjToDesc", "aclrtAllocatorRegister"))]
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # struct Never;
    /// # // SAFETY: it never returns a block.
    /// # unsafe impl DeviceAllocator for Never {
    /// #     fn alloc(&self, _: usize) -> Option<Block> { None }
    /// #     fn free(&self, _: Block) {}
    /// # }
    /// use ascend::allocator::{AllocatorRegistration, registered_on};
    /// use ascend::{Device, Stream};
    /// use std::sync::Arc;
    /// let stream = Stream::new(&Device::new(0)?)?;
    /// // SAFETY: `stream` outlives the registration, which ends below.
    /// let registration = unsafe { AllocatorRegistration::register_raw(stream.as_raw(), Arc::new(Never)) }?;
    /// assert!(registered_on(&stream)?);
    /// registration.unregister()?;
    /// stream.destroy()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # struct Never;
    /// # // SAFETY: it never returns a block.
    /// # unsafe impl DeviceAllocator for Never {
    /// #     fn alloc(&self, _: usize) -> Option<Block> { None }
    /// #     fn free(&self, _: Block) {}
    /// # }
    /// use ascend::allocator::AllocatorRegistration;
    /// use ascend::{Device, Stream};
    /// use std::sync::Arc;
    /// let stream = Stream::new(&Device::new(0)?)?;
    /// let allocator = Arc::new(Never);
    /// let registration = AllocatorRegistration::register(&stream, allocator.clone())?;
    /// assert!(std::ptr::addr_eq(Arc::as_ptr(registration.allocator()), Arc::as_ptr(&allocator)));
    /// assert!(registration.allocator().alloc(64).is_none()); // `Never` has no memory
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn allocator(&self) -> &Arc<dyn DeviceAllocator> {
        &self.allocator
    }

    /// Blocks handed to the runtime and not given back yet.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # use std::ptr::NonNull;
    /// # struct Fresh(ascend::Device, std::sync::Mutex<Vec<DeviceBuf<u8>>>);
    /// # // SAFETY: each block is a live buffer, kept until `free`.
    /// # unsafe impl DeviceAllocator for Fresh {
    /// #     fn alloc(&self, size: usize) -> Option<Block> {
    /// #         let buf = DeviceBuf::<u8>::zeroed(&self.0, size).ok()?;
    /// #         let block = Block::new(NonNull::new(buf.as_raw())?, size);
    /// #         self.1.lock().ok()?.push(buf);
    /// #         Some(block)
    /// #     }
    /// #     fn free(&self, block: Block) {
    /// #         if let Ok(mut live) = self.1.lock() {
    /// #             live.retain(|buf| buf.as_raw() != block.address().as_ptr());
    /// #         }
    /// #     }
    /// # }
    /// # use ascend::allocator::AllocatorRegistration;
    /// # use ascend::{Device, DeviceBuf, Stream, sys};
    /// # use std::ptr::null_mut;
    /// # use std::sync::Arc;
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// // `Fresh` gives each block a buffer of its own.
    /// let allocator = Arc::new(Fresh(device.clone(), Default::default()));
    /// let registration = AllocatorRegistration::register(&stream, allocator)?;
    /// assert_eq!(registration.outstanding_blocks(), 0);
    /// // Allocate and free through the callbacks the runtime stored, as it does.
    /// let (mut descriptor, mut object, mut alloc, mut free) = (null_mut(), null_mut(), None, None);
    /// // SAFETY: a live stream; valid out-pointers, the rest optional (NULL).
    /// ascend::check("aclrtAllocatorGetByStream", unsafe {
    ///     let (advise, address) = (null_mut(), null_mut());
    ///     sys::aclrtAllocatorGetByStream(stream.as_raw(), &mut descriptor, &mut object, &mut alloc, &mut free, advise, address)
    /// })?;
    /// let (alloc, free) = (alloc.expect("stored"), free.expect("stored"));
    /// // SAFETY: the stored object and callbacks, called while registered.
    /// let block = unsafe { alloc(object, 1000) };
    /// assert_eq!(registration.outstanding_blocks(), 1);
    /// // SAFETY: a block from `alloc`, given back once.
    /// unsafe { free(object, block) };
    /// assert_eq!(registration.outstanding_blocks(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn outstanding_blocks(&self) -> usize {
        // SAFETY: the object lives until `release`, which takes `&mut self`.
        self.object.map_or(0, |object| {
            unsafe { object.as_ref() }.outstanding.load(Ordering::Relaxed)
        })
    }

    /// The raw stream handle.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # struct Never;
    /// # // SAFETY: it never returns a block.
    /// # unsafe impl DeviceAllocator for Never {
    /// #     fn alloc(&self, _: usize) -> Option<Block> { None }
    /// #     fn free(&self, _: Block) {}
    /// # }
    /// use ascend::allocator::{AllocatorRegistration, registered_on_raw};
    /// use ascend::{Device, Stream};
    /// use std::sync::Arc;
    /// let stream = Stream::new(&Device::new(0)?)?;
    /// let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
    /// assert_eq!(registration.stream_raw(), stream.as_raw());
    /// assert!(registered_on_raw(registration.stream_raw())?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stream_raw(&self) -> sys::aclrtStream {
        self.stream.as_ptr()
    }

    /// The raw descriptor handle (owned by the registration: do not
    /// destroy it or change its fields).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # struct Never;
    /// # // SAFETY: it never returns a block.
    /// # unsafe impl DeviceAllocator for Never {
    /// #     fn alloc(&self, _: usize) -> Option<Block> { None }
    /// #     fn free(&self, _: Block) {}
    /// # }
    /// use ascend::allocator::AllocatorRegistration;
    /// use ascend::{Device, Stream, sys};
    /// use std::ptr::null_mut;
    /// use std::sync::Arc;
    /// let stream = Stream::new(&Device::new(0)?)?;
    /// let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
    /// let mut stored = null_mut();
    /// // SAFETY: a live stream; a valid out-pointer, the rest optional (NULL).
    /// ascend::check("aclrtAllocatorGetByStream", unsafe {
    ///     sys::aclrtAllocatorGetByStream(stream.as_raw(), &mut stored, null_mut(), null_mut(), null_mut(), null_mut(), null_mut())
    /// })?;
    /// assert_eq!(stored, registration.descriptor_raw());
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # struct Never;
    /// # // SAFETY: it never returns a block.
    /// # unsafe impl DeviceAllocator for Never {
    /// #     fn alloc(&self, _: usize) -> Option<Block> { None }
    /// #     fn free(&self, _: Block) {}
    /// # }
    /// use ascend::allocator::{AllocatorRegistration, registered_on};
    /// use ascend::{Device, Stream};
    /// use std::sync::Arc;
    /// let stream = Stream::new(&Device::new(0)?)?;
    /// let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
    /// registration.unregister()?; // reports a failure, which a drop could only log
    /// assert!(!registered_on(&stream)?);
    /// stream.destroy()?; // the borrow has ended
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAllocatorUnregister")]
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
///
/// ```
/// use ascend::allocator::{AllocatorRegistration, registered_on};
/// use ascend::{Device, Stream};
/// use std::sync::Arc;
/// # use ascend::allocator::{Block, DeviceAllocator};
/// # struct Never;
/// # // SAFETY: it never returns a block.
/// # unsafe impl DeviceAllocator for Never {
/// #     fn alloc(&self, _: usize) -> Option<Block> { None }
/// #     fn free(&self, _: Block) {}
/// # }
/// let stream = Stream::new(&Device::new(0)?)?;
/// assert!(!registered_on(&stream)?);
/// let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
/// assert!(registered_on(&stream)?);
/// drop(registration);
/// assert!(!registered_on(&stream)?);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtAllocatorGetByStream")]
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
///
/// ```
/// use ascend::allocator::registered_on_raw;
/// use ascend::{Device, Error, Stream};
/// let stream = Stream::new(&Device::new(0)?)?;
/// assert!(!registered_on_raw(stream.as_raw())?);
/// // The default stream (NULL) is refused.
/// let error = registered_on_raw(std::ptr::null_mut()).unwrap_err();
/// assert!(matches!(error, Error::InvalidArgument { .. }));
/// # Ok::<(), ascend::Error>(())
/// ```
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
