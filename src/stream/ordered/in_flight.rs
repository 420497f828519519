//! [`InFlight`]: a use of an [`Ordered`] owner's bytes that is being
//! queued, or a host access under way, outside the owner's locks.
//!
//! An operation orders itself and marks its range in flight with the
//! lanes of its bytes locked ([`Locked`]), then queues its work (or
//! touches the bytes from the host) with them released, so that
//! operations on disjoint ranges, from any thread, run at once. An
//! operation whose range conflicts with one in flight waits for it to land
//! ([`Ordered::tracks_clear`]): until then the work it would have to wait
//! for may not be queued yet.

use super::Ordered;
use super::lanes::{Lanes, Locked, clip};
use crate::stream::Stream;
use std::ops::Range;
use std::sync::Arc;

/// A use in flight; it lands when dropped, lane by lane: the mark goes,
/// the use is noted on its stream (unless [`InFlight::not_queued`]), and
/// the threads waiting for it are woken. Each lane changes under its own
/// lock, from "in flight" to "noted", so an operation sees one or the
/// other in each lane it locks.
pub(super) struct InFlight<'a> {
    lanes: &'a Lanes,
    range: Range<usize>,
    write: bool,
    /// The stream the work is queued on; `None` for a host access, or
    /// when nothing was queued.
    stream: Option<&'a Arc<Stream>>,
}

impl<'a> InFlight<'a> {
    /// Marks a use of `range` in flight, in the `locked` lanes of its
    /// owner.
    pub(super) fn take_off(
        locked: &mut Locked<'a>,
        range: Range<usize>,
        write: bool,
        stream: Option<&'a Arc<Stream>>,
    ) -> Self {
        locked.take_off(&range, write);
        Self {
            lanes: locked.lanes(),
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
        for index in self.lanes.covering(&self.range) {
            let part = clip(&self.range, &self.lanes.bounds(index));
            let lane = self.lanes.lane(index);
            let mut tracks = lane.lock();
            let wake = tracks.land(&part, self.write);
            // Noted on every path but a reported failure: had the work been
            // queued before an unwind, a missing note would let the memory
            // go under it; a note too many only adds a wait.
            if let Some(stream) = self.stream {
                tracks.note(stream, part, self.write);
            }
            drop(tracks);
            if wake {
                lane.wake();
            }
        }
    }
}

impl<S> Ordered<S> {
    /// The lanes of `range`, locked once no use in flight conflicts with
    /// a use of it (a write if `write`).
    pub(super) fn tracks_clear(&self, range: &Range<usize>, write: bool) -> Locked<'_> {
        self.lanes.lock_clear(&[(range, write)])
    }
}
