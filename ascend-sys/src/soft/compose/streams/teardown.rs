//! What happens to a device's streams and events when its primary context
//! is torn down (the last `aclrtResetDevice` retain goes).

use super::{Stream, StreamEntry, Streams};
use std::sync::Arc;

/// The streams of a torn-down device, taken out of the table: their queued
/// tasks still run to the end (as for `aclrtDestroyStream`) once
/// [`Detached::finish`] closes them, which must happen with the runtime
/// lock released (a worker takes it to move bytes).
pub(crate) struct Detached {
    entries: Vec<StreamEntry>,
    /// The device's default stream, which stays in the table (it lives as
    /// long as the process) but whose queued tasks must have run before the
    /// device's memory is given back.
    default: Option<Arc<Stream>>,
}

impl Streams {
    /// Removes every stream created on `device` and every event and notify
    /// created on it: later calls with their handles fail with
    /// `ACL_ERROR_RT_INVALID_HANDLE`, as for destroyed handles (so does the
    /// handle `aclrtCtxGetCurrentDefaultStream` gave for its default
    /// stream). Returns the
    /// count of events removed with the streams.
    pub(crate) fn detach_device(&mut self, device: i32) -> (Detached, usize) {
        let handles: Vec<usize> = self
            .created
            .iter()
            .filter(|(_, entry)| entry.stream.device == device)
            .map(|(&handle, _)| handle)
            .collect();
        let entries = handles
            .iter()
            .filter_map(|handle| self.created.remove(handle))
            .collect();
        let default = self.defaults.get(&device).map(|entry| Arc::clone(&entry.stream));
        self.default_aliases.retain(|_, &mut of| of != device);
        super::faulted_devices::clear(device);
        let events_before = self.events.len();
        self.events.retain(|_, event| event.device != device);
        // The device's notifies go too; a wait still queued on one ends
        // (recorded as misuse) instead of holding the teardown.
        self.notifies.retain(|_, signal| {
            let keep = signal.device != device;
            if !keep {
                signal.destroy();
            }
            keep
        });
        (Detached { entries, default }, events_before - self.events.len())
    }
}

impl Detached {
    /// How many streams were taken out.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Lets every taken stream run its queued tasks, then joins its worker;
    /// waits for the default stream's queued tasks too (an unreported task
    /// failure of the torn-down context is dropped, with a log line). Value
    /// waits among those tasks end at once.
    pub(crate) fn finish(self) {
        // A value wait queued before the teardown can no longer be ended by
        // the context's streams: it ends now (recorded as misuse) rather
        // than holding the teardown forever.
        for stream in self.entries.iter().map(|entry| &entry.stream).chain(&self.default) {
            stream.give_up_value_waits("aclrtResetDevice");
        }
        if let Some(default) = self.default {
            if let Err(failure) = default.synchronize(None) {
                log::warn!(
                    "the default stream of a torn-down device had an unreported task failure: {} (error {})",
                    failure.message,
                    failure.code
                );
            }
            crate::soft::check::sanitize::host_synchronized_stream(default.site());
        }
        for mut entry in self.entries {
            entry.stream.close();
            if let Some(worker) = entry.worker.take()
                && worker.join().is_err()
            {
                log::error!("a stream worker panicked while its device was torn down");
            }
            super::callbacks::forget_stream(entry.stream.id, "aclrtResetDevice");
            crate::soft::check::sanitize::stream_destroyed(entry.stream.site());
        }
    }
}
