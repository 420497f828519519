//! Destroying a [`Stream`]: after its queued work (`aclrtDestroyStream`) or
//! at once, dropping it (`aclrtDestroyStreamForce`), and what happens to a
//! stream whose value wait may never be satisfied.

use super::stream::Stream;
use crate::ErrorCode;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::time::Duration;

impl Stream {
    /// How long [`Stream::destroy`] and `drop` wait for a stream that has
    /// a queued [`Stream::wait_value`] before they destroy it by force: a
    /// wait nobody satisfies would otherwise hold the thread forever.
    pub const VALUE_WAIT_LIMIT: Duration = Duration::from_secs(2);

    /// Destroys the stream now (`aclrtDestroyStream`, after its queued work
    /// has finished), reporting a failure.
    ///
    /// A stream with a value wait ([`Stream::wait_value`]) queued since its
    /// last synchronisation is given [`Stream::VALUE_WAIT_LIMIT`] to finish;
    /// if it does not, it is destroyed by force (as [`Stream::destroy_force`]:
    /// its queued work is dropped, and the software device records it as
    /// misuse) and the timeout is returned.
    ///
    /// # Errors
    ///
    /// The runtime's code; `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` when a value
    /// wait held it past the limit. The handle is not used again either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// stream.scope(|s| s.fill_bytes(&mut on_device, 5))?;
    /// stream.destroy()?; // unlike a drop, a failure would be seen here
    /// assert_eq!(on_device.to_vec()?, [5; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDestroyStream")]
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    /// Destroys the stream at once (`aclrtDestroyStreamForce`): work still
    /// queued on it is dropped and never runs, and a wait it is blocked in
    /// (for an event or a value) ends. Memory queued work used is released
    /// only when that is proven safe: a [`DeviceFlag`] this stream was to
    /// write stays allocated (leaked), in case the write had started.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ascend::Device;
    /// use ascend::stream::{DeviceFlag, Stream, ValueCondition};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let never = DeviceFlag::new(&device, 0)?;
    /// stream.wait_value(&never, 1, ValueCondition::Equal)?; // nobody writes 1
    /// assert!(stream.synchronize_timeout(Duration::from_millis(10)).is_err());
    /// stream.destroy_force()?; // does not wait
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// [`DeviceFlag`]: super::DeviceFlag
    ///
    /// # Errors
    ///
    /// The runtime's code; the handle is not used again either way (and
    /// after a failure every flag held for queued work is leaked).
    #[doc(alias = "aclrtDestroyStreamForce")]
    pub fn destroy_force(mut self) -> Result<()> {
        self.release_force()
    }

    /// Inside a stream callback or host function the stream cannot be
    /// destroyed: the destruction would wait for the queued work, which the
    /// running callback holds back (and the runtime could not prove it ran).
    /// The handle and every flag held for queued work are leaked instead.
    fn leak_inside_callback(&mut self, api: &'static str) -> Result<()> {
        let handle = self.handle.take();
        self.values().leak_all();
        log::error!(
            "stream {handle:?} dropped inside a stream callback or host function: leaked, not destroyed (its \
             queued work could still run)"
        );
        Err(Error::invalid(
            Call::new("Stream::destroy", api),
            "called inside a stream callback or host function: the stream and what its queued work holds are \
             leaked instead",
        ))
    }

    fn release(&mut self) -> Result<()> {
        if self.handle.is_some() && super::host_fn::in_stream_callback() {
            return self.leak_inside_callback("aclrtDestroyStream");
        }
        if self.handle.is_some()
            && self.values().has_waits()
            && let Err(error) = self.synchronize_timeout(Self::VALUE_WAIT_LIMIT)
            && error.code() == Some(ErrorCode::RT_STREAM_SYNC_TIMEOUT)
        {
            log::error!(
                "stream {:?}: a value wait was not satisfied within {:?}; destroying the stream by force, \
                 dropping its queued work: {error}",
                self.as_raw(),
                Self::VALUE_WAIT_LIMIT
            );
            self.release_force()?;
            return Err(error);
        }
        // Any other failure of that synchronisation (a failed task, which
        // leaves the stream drained) changes nothing: the destruction below
        // waits for the queued work as documented.
        let Some(handle) = self.handle else {
            return Ok(());
        };
        // The runtime destroys only a stream of the current device; if that
        // fails, keep the handle so a later attempt (or `Drop`) can retry.
        self.device().make_current()?;
        self.handle = None;
        // SAFETY: the handle came from `aclrtCreateStream*` and is destroyed
        // once (cleared above).
        let outcome = check("aclrtDestroyStream", unsafe {
            sys::aclrtDestroyStream(handle.as_ptr())
        });
        match outcome {
            // The queued work ran to the end before the stream went.
            Ok(()) => self.values().release(u64::MAX),
            Err(_) => self.values().leak_all(),
        }
        outcome
    }

    fn release_force(&mut self) -> Result<()> {
        if self.handle.is_some() && super::host_fn::in_stream_callback() {
            return self.leak_inside_callback("aclrtDestroyStreamForce");
        }
        let Some(handle) = self.handle else {
            return Ok(());
        };
        self.device().make_current()?;
        self.handle = None;
        // SAFETY: the handle came from `aclrtCreateStream*` and is destroyed
        // once (cleared above).
        let outcome = check("aclrtDestroyStreamForce", unsafe {
            sys::aclrtDestroyStreamForce(handle.as_ptr())
        });
        match outcome {
            Ok(()) => self.values().release_after_force(),
            Err(_) => self.values().leak_all(),
        }
        outcome
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("Stream drop: {error}");
        }
    }
}
