//! [`BorrowedStream`] and [`BorrowedEvent`]: stream and event handles
//! created elsewhere (by an operator library, a framework), lent to this
//! crate for a lifetime and never destroyed by it.

use super::event::Event;
use super::stream::Stream;
use crate::Device;
use crate::error::{Call, Error, Result};
use ascend_sys as sys;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;

/// An `aclrtStream` that someone else owns, usable as a [`Stream`] for `'a`
/// ([`Stream::borrow_raw`]). It derefs to `&Stream`, so scopes, event
/// records and waits all work on it; dropping it leaves the handle alone
/// (the owner destroys it). [`Ordered`](super::Ordered) buffers need an
/// `Arc<Stream>`, which a borrowed stream cannot give: their work could
/// outlive the borrow.
///
/// ```
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let library_stream = Stream::new(&device)?; // stands for a library's own stream
/// // SAFETY: the handle is a live stream of `device` until `library_stream`
/// // is dropped, after `borrowed` (the variables drop in reverse order).
/// let borrowed = unsafe { Stream::borrow_raw(library_stream.as_raw(), &device) }?;
/// let host = PinnedHostBuf::from_slice(&device, &[4u8; 64])?;
/// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 64)?;
/// borrowed.scope(|s| s.copy_to_device(&host, &mut on_device))?;
/// assert_eq!(on_device.to_vec()?, [4; 64]);
/// drop(borrowed); // the handle stays live
/// library_stream.synchronize()?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `BorrowedStream` is `Send` and `Sync`, like the `Stream` it
/// derefs to.
pub struct BorrowedStream<'a> {
    /// A `Stream` whose handle is cleared before it drops.
    stream: Stream,
    _handle: PhantomData<&'a ()>,
}

/// An `aclrtEvent` that someone else owns, usable as an [`Event`] for `'a`
/// ([`Event::borrow_raw`]). It derefs to `&Event`; dropping it leaves the
/// handle alone.
///
/// ```
/// use ascend::{Device, stream::{Event, Stream}};
/// let device = Device::new(0)?;
/// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
/// let library_event = Event::new(&device)?; // stands for a library's own event
/// library_event.record(&first)?;
/// // SAFETY: a live event of `device` until `library_event` is dropped, after `borrowed`.
/// let borrowed = unsafe { Event::borrow_raw(library_event.as_raw(), &device) }?;
/// second.wait_event(&borrowed)?; // used as an `&Event`
/// second.synchronize()?;
/// assert!(borrowed.query()?);
/// drop(borrowed); // leaves the handle alone
/// assert!(library_event.query()?);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `BorrowedEvent` is `Send` and `Sync`, like the `Event` it
/// derefs to.
pub struct BorrowedEvent<'a> {
    /// An `Event` whose handle is cleared before it drops.
    event: Event,
    _handle: PhantomData<&'a ()>,
}

/// `handle`, refused when NULL.
fn non_null(call: Call, handle: *mut std::ffi::c_void, what: &str) -> Result<NonNull<std::ffi::c_void>> {
    NonNull::new(handle).ok_or_else(|| Error::invalid(call, format!("a NULL handle is not {what}")))
}

impl Stream {
    /// Lends `handle`, a stream created outside this crate, to this crate
    /// for `'a`: the result is used as a [`Stream`] and never destroys the
    /// handle.
    ///
    /// # Safety
    ///
    /// `handle` is a stream created by `aclrtCreateStream*` on `device`
    /// (with a context of `device` current), and its owner does not destroy
    /// it during `'a`. Everything this crate queues through the borrowed
    /// stream is finished before the borrow ends (scopes synchronise it),
    /// so the owner may destroy it as soon as `'a` is over.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a NULL handle (NULL names the default
    /// stream: [`Device::default_stream`] lends that one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Stream};
    /// let device = Device::new(0)?;
    /// let library_stream = Stream::new(&device)?; // stands for a library's own stream
    /// // SAFETY: a live stream of `device` until `library_stream` is dropped,
    /// // after `borrowed`.
    /// let borrowed = unsafe { Stream::borrow_raw(library_stream.as_raw(), &device) }?;
    /// let on_device = DeviceBuf::from_slice(&device, &[1u8; 16])?;
    /// let mut host = ascend::PinnedHostBuf::<u8>::zeroed(&device, 16)?;
    /// borrowed.scope(|s| s.copy_to_host(&on_device, &mut host))?;
    /// assert_eq!(&host[..], [1; 16]);
    /// drop(borrowed);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub unsafe fn borrow_raw<'a>(handle: sys::aclrtStream, device: &Device) -> Result<BorrowedStream<'a>> {
        let handle = non_null(Call::rust("Stream::borrow_raw"), handle, "a stream")?;
        Ok(BorrowedStream {
            stream: Stream::lent(handle, device),
            _handle: PhantomData,
        })
    }
}

impl Device {
    /// The default stream of the device's primary context
    /// (`aclrtCtxGetCurrentDefaultStream`), the stream a NULL handle names
    /// in the C API, usable as a [`Stream`] while `self` lives. Dropping it
    /// leaves the stream alone: the runtime owns it and ends it with the
    /// context. Work queued on it is ordered with work other code queues on
    /// the default stream (through NULL or this handle).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let default = device.default_stream()?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 16)?;
    /// default.scope(|s| s.fill_bytes(&mut on_device, 7))?;
    /// assert_eq!(on_device.to_vec()?, [7; 16]);
    /// assert_eq!(default.id()?, device.default_stream()?.id()?); // the same stream
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCtxGetCurrentDefaultStream")]
    pub fn default_stream(&self) -> Result<BorrowedStream<'_>> {
        self.make_current()?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: `handle` is a valid out-pointer.
        crate::error::check("aclrtCtxGetCurrentDefaultStream", unsafe {
            sys::aclrtCtxGetCurrentDefaultStream(&mut handle)
        })?;
        // SAFETY: the handle names the default stream of `self`'s primary
        // context (made current above), which lives as long as `self`
        // retains the device; nobody destroys a default stream.
        unsafe { Stream::borrow_raw(handle, self) }
    }
}

impl Event {
    /// Lends `handle`, an event created outside this crate, to this crate
    /// for `'a`: the result is used as an [`Event`] and never destroys the
    /// handle.
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let library_event = Event::new(&device)?; // stands for a library's own event
    /// // SAFETY: a live event of `device` until `library_event` is dropped,
    /// // after `borrowed`.
    /// let borrowed = unsafe { Event::borrow_raw(library_event.as_raw(), &device) }?;
    /// borrowed.record(&stream)?;
    /// borrowed.synchronize()?;
    /// assert!(library_event.query()?); // the same event
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Safety
    ///
    /// For all of `'a`, `handle` is a live event created by
    /// `aclrtCreateEvent*` on `device` (with a context of `device`
    /// current), usable from any thread, that its owner does not destroy.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a NULL handle.
    pub unsafe fn borrow_raw<'a>(handle: sys::aclrtEvent, device: &Device) -> Result<BorrowedEvent<'a>> {
        let handle = non_null(Call::rust("Event::borrow_raw"), handle, "an event")?;
        Ok(BorrowedEvent {
            event: Event::lent(handle, device),
            _handle: PhantomData,
        })
    }
}

impl Deref for BorrowedStream<'_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        &self.stream
    }
}

impl Deref for BorrowedEvent<'_> {
    type Target = Event;
    fn deref(&self) -> &Event {
        &self.event
    }
}

impl Drop for BorrowedStream<'_> {
    fn drop(&mut self) {
        // The flags of value work queued through this borrow stay held
        // until the work is proven finished: the stream lives on (its owner
        // destroys it), so wait for the work, within the limit a stream's
        // own destruction gives a value wait, and keep (leak) the flags if
        // that proves nothing.
        let values = self.stream.values();
        if !values.is_empty() {
            match self.stream.synchronize_timeout(Stream::VALUE_WAIT_LIMIT) {
                Ok(()) => values.release(u64::MAX),
                Err(error) => {
                    log::warn!(
                        "borrowed stream {:?} dropped with value work queued that did not finish: \
                         its flags are kept (leaked): {error}",
                        self.stream.as_raw()
                    );
                    values.leak_all();
                }
            }
        }
        // The owner destroys the handle: the inner `Stream` forgets it.
        self.stream.forget_handle();
    }
}

impl Drop for BorrowedEvent<'_> {
    fn drop(&mut self) {
        // The owner destroys the handle: the inner `Event` forgets it.
        self.event.forget_handle();
    }
}

impl fmt::Debug for BorrowedStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BorrowedStream").field(&self.stream).finish()
    }
}

impl fmt::Debug for BorrowedEvent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BorrowedEvent").field(&self.event).finish()
    }
}
