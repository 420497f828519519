//! [`Stream::abort`] (`aclrtStreamAbort`): dropping the work queued on a
//! stream, and what that lets go of.
//!
//! Aborting never ends a borrow and never frees memory by itself. The work
//! queued before it touched memory that a scope borrows, that an
//! [`Ordered`](super::Ordered) owner or a pool block tracks; each of them
//! lets that memory go only once the runtime says the work is over (a
//! synchronisation, an event query or wait), exactly as without an abort.
//! An abort only makes that answer come sooner: once the runtime accepted
//! it, the dropped tasks will never run, so the stream's synchronisation
//! succeeds and the records it dropped count as reached.
//!
//! `aclrtStreamStop` has no safe form: the tasks it stops stay queued and
//! may run later, so it could never let anything go. (The runtime stops
//! only streams created with `ACL_STREAM_DEVICE_USE_ONLY`,
//! [`StreamFlags::DEVICE_USE_ONLY`](super::StreamFlags::DEVICE_USE_ONLY),
//! which the software device refuses to create.)

use super::Stream;
use crate::error::{Result, check};
use ascend_sys as sys;

impl Stream {
    /// Drops the work queued on this stream and stops the task it is
    /// running (`aclrtStreamAbort`), then synchronises the stream to see
    /// that done. The stream stays usable: work queued afterwards runs as
    /// usual.
    ///
    /// What becomes safe, and when:
    /// - When this returns `Ok`, every device task queued on the stream
    ///   before the call has either run or will never run, and the runtime
    ///   said so (its synchronisation succeeded). Host code is the
    ///   exception: a callback already handed to its thread, or a host
    ///   function already running, cannot be stopped and may still run or
    ///   finish after this returns (its closure is `'static`, so it borrows
    ///   nothing the abort could let go). Memory that work touched is let
    ///   go by whoever holds it, as after any completed work: a
    ///   [`scope`](Stream::scope) ends its borrows at its end, an
    ///   [`Ordered`](super::Ordered) owner or a pool block is free for other
    ///   streams once the event recorded after its use on this stream says
    ///   reached (the software device counts a record the abort dropped as
    ///   reached, since everything before it finished or never will).
    /// - When this returns `Err`, nothing is let go on its account: the
    ///   abort may not have happened (the work may still run), or its
    ///   completion was not confirmed. The holders keep waiting for their
    ///   own proof: a scope still synchronises at its end (and aborts the
    ///   process if it cannot prove completion), owners and pools keep the
    ///   memory until the runtime says the work is over.
    ///
    /// The bytes an aborted task would have written may or may not be
    /// there: a task the stream was running may have finished or not.
    ///
    /// # Errors
    ///
    /// The runtime's code for `aclrtStreamAbort`, or for the
    /// synchronisation after it (with [`FailureMode::Stop`](super::FailureMode::Stop),
    /// the task failure it reports).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::stream::{Event, EventFlags, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let never = Event::with_flags(&device, EventFlags::SYNC)?; // never recorded
    /// let on_device = DeviceBuf::from_slice(&device, &[7u8; 64])?;
    /// let mut host = PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    /// stream.scope(|s| {
    ///     s.wait_event(&never)?; // the stream would wait forever
    ///     s.copy_to_host(&on_device, &mut host)?;
    ///     stream.abort() // drops the wait and the copy
    /// })?;
    /// assert_eq!(&host[..], &[0u8; 64]); // the copy never ran
    /// stream.synchronize()?; // and the stream works on
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamAbort")]
    pub fn abort(&self) -> Result<()> {
        self.device().make_current()?;
        // SAFETY: the handle is live (owned by `self`); the call drops work
        // and ends nothing this crate relies on without asking the runtime.
        check("aclrtStreamAbort", unsafe { sys::aclrtStreamAbort(self.as_raw()) })?;
        self.synchronize()
    }
}
