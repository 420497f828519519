//! [`InFlight`]: a use of an [`Ordered`] owner's bytes that is being
//! queued, or a host access under way, outside the owner's lock.
//!
//! An operation orders itself and marks its range in flight under the
//! lock, then queues its work (or touches the bytes from the host) with
//! the lock released, so that operations on disjoint ranges, from any
//! thread, run at once. An operation whose range conflicts with one in
//! flight waits for it to land ([`Ordered::tracks_clear`]): until then the
//! work it would have to wait for may not be queued yet.

use super::Ordered;
use super::tracks::Tracks;
use crate::stream::Stream;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A use in flight; it lands when dropped: the mark goes, the use is
/// noted on its stream (unless [`InFlight::not_queued`]), and the threads
/// waiting for it are woken.
pub(super) struct InFlight<'a> {
    tracks: &'a Mutex<Tracks>,
    landed: &'a Condvar,
    range: Range<usize>,
    write: bool,
    /// The stream the work is queued on; `None` for a host access, or
    /// when nothing was queued.
    stream: Option<&'a Arc<Stream>>,
}

impl<'a> InFlight<'a> {
    /// Marks a use of `range` of `owner` in flight, on its locked `tracks`.
    pub(super) fn take_off<S>(
        owner: &'a Ordered<S>,
        tracks: &mut Tracks,
        range: Range<usize>,
        write: bool,
        stream: Option<&'a Arc<Stream>>,
    ) -> Self {
        tracks.take_off(range.clone(), write);
        Self {
            tracks: &owner.tracks,
            landed: &owner.landed,
            range,
            write,
            stream,
        }
    }

    /// Nothing was queued (the call failed): land without noting a use.
    pub(super) fn not_queued(mut self) {
        self.stream = None;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut tracks = self.tracks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let wake = tracks.land(&self.range, self.write);
        // Noted on every path but a reported failure: had the work been
        // queued before an unwind, a missing note would let the memory go
        // under it; a note too many only adds a wait.
        if let Some(stream) = self.stream {
            tracks.note(stream, self.range.clone(), self.write);
        }
        drop(tracks);
        if wake {
            self.landed.notify_all();
        }
    }
}

impl<S> Ordered<S> {
    /// The tracks, locked once no use in flight conflicts with a use of
    /// `range` (a write if `write`).
    pub(super) fn tracks_clear(&self, range: &Range<usize>, write: bool) -> MutexGuard<'_, Tracks> {
        let tracks = self.tracks();
        self.wait_landed(tracks, |tracks| tracks.blocked(range, write))
    }

    /// Waits on the locked `tracks` while `blocked` holds.
    pub(super) fn wait_landed<'a>(
        &'a self,
        mut tracks: MutexGuard<'a, Tracks>,
        blocked: impl Fn(&Tracks) -> bool,
    ) -> MutexGuard<'a, Tracks> {
        while blocked(&tracks) {
            tracks.count_waiter(true);
            tracks = self
                .landed
                .wait(tracks)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            tracks.count_waiter(false);
        }
        tracks
    }
}
