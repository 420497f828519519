//! Owned transfers: [`Stream::upload_owned`], [`Stream::download_owned`] and
//! the [`Pending`] result that gives the buffers back.

use super::completion::Completion;
use super::lengths::{byte_len, same_bytes};
use super::stream::Stream;
use crate::Call;
use crate::error::{Error, Result};
use crate::memory::{DeviceStorage, DeviceStorageMut, PinnedHostBuf};
use bytemuck::Pod;
use std::fmt;

/// Buffers that queued work owns, given back by [`Pending::wait`] once the
/// work has run.
///
/// The transfer owns its buffers, so nothing can touch them meanwhile.
/// Dropping a `Pending` waits for the work before the buffers are dropped;
/// forgetting it (`std::mem::forget`) leaks the buffers, which is safe.
///
/// **When the runtime fails.** The buffers are released only once the work
/// is proven finished: a failed synchronisation is retried on the stream,
/// then on its device. If none succeeds, the work may still be running, so
/// the buffers are leaked (never freed, so no address is reused under the
/// device) and the error is returned (or, on drop, logged).
///
/// **Threads:** `Pending` is `Send` when its buffers `B` are, and `Sync` when
/// they are.
///
/// ```
/// use ascend::{Device, DeviceBuf, Error, PinnedHostBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let host = PinnedHostBuf::from_slice(&device, &[1u32, 2, 3])?;
/// let pending = stream.upload_owned(host, DeviceBuf::<u32>::zeroed(&device, 3)?)?;
/// // The buffers are inside `pending` until the copy is proven finished.
/// let (host, on_device) = pending.wait()?;
/// assert_eq!(on_device.to_vec()?, &host[..]);
/// // A length mismatch is refused before anything is queued.
/// let short = DeviceBuf::<u32>::zeroed(&device, 2)?;
/// assert!(matches!(stream.upload_owned(host, short), Err(Error::InvalidArgument { .. })));
/// # Ok::<(), ascend::Error>(())
/// ```
#[must_use = "dropping a Pending waits for the work and frees its buffers; call wait() to get them back"]
pub struct Pending<'s, B> {
    stream: &'s Stream,
    /// `None` only after `wait` took them.
    buffers: Option<B>,
}

impl<'s, B> Pending<'s, B> {
    /// The stream the work is queued on.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[8u8; 4])?;
    /// let pending = stream.download_owned(on_device, PinnedHostBuf::<u8>::zeroed(&device, 4)?)?;
    /// assert_eq!(pending.stream().as_raw(), stream.as_raw());
    /// let (_on_device, host) = pending.wait()?;
    /// assert_eq!(&host[..], [8; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stream(&self) -> &'s Stream {
        self.stream
    }

    /// Synchronises the stream and gives the buffers back.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[9u16; 8])?;
    /// let host = PinnedHostBuf::<u16>::zeroed(&device, 8)?;
    /// let (_on_device, host) = stream.download_owned(on_device, host)?.wait()?;
    /// assert_eq!(&host[..], &[9; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The first synchronisation's error (e.g. the queued copy failed). If a
    /// retry on the stream or its device proved the work finished, the
    /// buffers are dropped; if nothing could prove it, they are leaked.
    pub fn wait(mut self) -> Result<B> {
        let Some(buffers) = self.buffers.take() else {
            return Err(Error::invalid(
                Call::rust("Pending::wait"),
                "the buffers were already taken",
            ));
        };
        release_after(self.stream, buffers, "Pending::wait")
    }
}

/// Gives `buffers` back once `stream`'s work is proven finished; drops them
/// after a finished-but-failed synchronisation, leaks them when nothing
/// proves the work finished.
fn release_after<B>(stream: &Stream, buffers: B, context: &str) -> Result<B> {
    match stream.complete() {
        Completion::Finished(Ok(())) => Ok(buffers),
        Completion::Finished(Err(error)) => {
            drop(buffers);
            Err(error)
        }
        Completion::Unproven { first, later } => {
            log::error!(
                "{context}: the work queued on stream {:?} cannot be proven finished; its buffers are leaked \
                 so that the device cannot write freed memory: {}",
                stream.as_raw(),
                Completion::describe(&first, &later)
            );
            std::mem::forget(buffers);
            Err(first)
        }
    }
}

impl<B> Drop for Pending<'_, B> {
    fn drop(&mut self) {
        if let Some(buffers) = self.buffers.take()
            && let Err(error) = release_after(self.stream, buffers, "Pending drop")
        {
            log::warn!("Pending drop: {error}");
        }
    }
}

impl<B> fmt::Debug for Pending<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("stream", self.stream)
            .field("holds_buffers", &self.buffers.is_some())
            .finish()
    }
}

impl Stream {
    /// Queues a copy of `host` into `device` (`aclrtMemcpyAsync`, host to
    /// device) that owns both buffers until [`Pending::wait`] gives them
    /// back. The byte lengths must be equal.
    ///
    /// `device` is a [`DeviceBuf`](crate::DeviceBuf) or any other owned
    /// [`DeviceStorageMut`] (a framework's own block type, a `Box` of one).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let host = PinnedHostBuf::from_slice(&device, &[7u64; 16])?;
    /// let on_device = DeviceBuf::<u64>::zeroed(&device, 16)?;
    /// let pending = stream.upload_owned(host, on_device)?;
    /// // ... other host work runs meanwhile ...
    /// let (host, on_device) = pending.wait()?;
    /// assert_eq!(on_device.to_vec()?, &host[..]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on a length mismatch; the runtime's code.
    /// Nothing is queued then, and the buffers are dropped.
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn upload_owned<T: Pod, D: DeviceStorageMut + 'static>(
        &self,
        host: PinnedHostBuf<T>,
        mut device: D,
    ) -> Result<Pending<'_, (PinnedHostBuf<T>, D)>> {
        let bytes = byte_len::<T>(Call::new("Stream::upload_owned", "aclrtMemcpyAsync"), host.len())?;
        same_bytes(
            Call::new("Stream::upload_owned", "aclrtMemcpyAsync"),
            device.byte_len(),
            bytes,
        )?;
        // SAFETY: both sides hold `bytes` bytes and move into the
        // `Pending`, which keeps them until the stream is synchronised (or
        // leaks them if forgotten). `device` owns its range exclusively
        // (`DeviceStorageMut`) and frees it only when dropped; it is
        // `'static`, so forgetting the `Pending` ends no borrow.
        unsafe {
            self.enqueue_copy(
                device.device_ptr_mut(),
                host.as_ptr().cast(),
                bytes,
                ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        }?;
        Ok(Pending {
            stream: self,
            buffers: Some((host, device)),
        })
    }

    /// Queues a copy of `device` into `host` (`aclrtMemcpyAsync`, device to
    /// host) that owns both buffers until [`Pending::wait`] gives them back.
    /// The byte lengths must be equal.
    ///
    /// `device` is a [`DeviceBuf`](crate::DeviceBuf) or any other owned [`DeviceStorage`]
    /// (an `Arc` of a buffer that other owners share, a framework's own
    /// block type).
    ///
    /// # Errors
    ///
    /// As [`Stream::upload_owned`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[9u16; 32])?;
    /// let pending = stream.download_owned(on_device, PinnedHostBuf::<u16>::zeroed(&device, 32)?)?;
    /// let (_on_device, host) = pending.wait()?;
    /// assert_eq!(&host[..], [9; 32]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn download_owned<T: Pod, D: DeviceStorage + 'static>(
        &self,
        device: D,
        mut host: PinnedHostBuf<T>,
    ) -> Result<Pending<'_, (D, PinnedHostBuf<T>)>> {
        let bytes = byte_len::<T>(Call::new("Stream::download_owned", "aclrtMemcpyAsync"), host.len())?;
        same_bytes(
            Call::new("Stream::download_owned", "aclrtMemcpyAsync"),
            bytes,
            device.byte_len(),
        )?;
        // SAFETY: as in `upload_owned`; the device side is only read, and
        // nothing writes it while shared holders of it may exist
        // (`DeviceStorage`).
        unsafe {
            self.enqueue_copy(
                host.as_mut_ptr().cast(),
                device.device_ptr(),
                bytes,
                ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        }?;
        Ok(Pending {
            stream: self,
            buffers: Some((device, host)),
        })
    }
}
