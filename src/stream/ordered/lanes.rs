//! [`Lanes`]: an owner's [`Tracks`], split by byte range into lanes with
//! a lock each, so that operations on bytes far apart never take one
//! lock; and [`Locked`], the lanes one operation holds.
//!
//! Memory of less than two MiB has one lane. Larger memory has lanes of a
//! power of two bytes, at least one MiB, at most 16 lanes, each on its own
//! cache line. A use is noted, and
//! marked in flight, in every lane its bytes touch, cut to that lane's
//! bytes; so an operation that locks the lanes of its bytes sees every use
//! it may conflict with. Lanes are locked in ascending order (and two
//! owners in address order), and a thread waits for a lane with no other
//! lane locked, so no two threads wait for each other.

use super::tracks::{Settled, Tracks, WHOLE, complete_all, wait_for};
use crate::error::Result;
use crate::stream::Stream;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The bytes of the smallest lane: memory of less than two has one lane.
const LANE_BYTES: usize = 1 << 20;

/// The most lanes of one owner (fewer when the lane size, a power of two,
/// rounds up).
const MOST_LANES: usize = 16;

/// The tracks of one lane of the memory, and the condition that its uses
/// in flight landed.
#[derive(Default)]
pub(super) struct Lane {
    tracks: Mutex<Tracks>,
    /// Woken when a use in flight in this lane lands.
    landed: Condvar,
}

/// A lane on its own cache line, so that threads working in neighbouring
/// lanes do not write one line.
#[repr(align(64))]
#[derive(Default)]
struct PaddedLane(Lane);

/// The lanes of memory of two lanes or more.
pub(super) struct ManyLanes {
    /// Every lane but the last, which reaches to the end, holds
    /// `1 << shift` bytes.
    shift: u32,
    lanes: Box<[PaddedLane]>,
}

/// An owner's tracks, in one lane or several.
pub(super) enum Lanes {
    /// Small memory (a pool's small blocks): one lane, inline.
    One(Lane),
    /// Memory of two lanes or more.
    Many(Box<ManyLanes>),
}

impl Lane {
    #[inline]
    fn new(tracks: Tracks) -> Self {
        Self {
            tracks: Mutex::new(tracks),
            landed: Condvar::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Tracks> {
        self.tracks.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get_mut(&mut self) -> &mut Tracks {
        self.tracks.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[inline]
    fn into_tracks(self) -> Tracks {
        self.tracks
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits, with this lane alone locked, until `blocked` no longer
    /// holds.
    fn wait_while(&self, blocked: impl Fn(&Tracks) -> bool) {
        let mut tracks = self.lock();
        while blocked(&tracks) {
            tracks.count_waiter(true);
            tracks = self
                .landed
                .wait(tracks)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            tracks.count_waiter(false);
        }
    }

    /// Wakes the threads waiting for a use in this lane to land.
    pub(super) fn wake(&self) {
        self.landed.notify_all();
    }
}

/// The bytes of lane `index` of `count` lanes of `1 << shift` bytes.
fn lane_bytes(shift: u32, count: usize, index: usize) -> Range<usize> {
    let end = if index + 1 == count {
        usize::MAX
    } else {
        (index + 1) << shift
    };
    index << shift..end
}

/// The part of `range` in `bounds`.
pub(super) fn clip(range: &Range<usize>, bounds: &Range<usize>) -> Range<usize> {
    range.start.max(bounds.start)..range.end.min(bounds.end)
}

impl Lanes {
    /// The lanes of `len` bytes of memory that queued work may use as
    /// `tracks` say.
    #[inline]
    pub(super) fn new(len: usize, tracks: Tracks) -> Self {
        if len < 2 * LANE_BYTES {
            Self::One(Lane::new(tracks))
        } else {
            // Boxed out of line, wrapped here: a `Lanes` returned by the
            // cold call would be built in memory, where the common branch
            // then built its own, read back with wider loads than its
            // stores (a store-forwarding stall on every pool hit of a
            // size unknown at compile time).
            Self::Many(Self::split(len, tracks))
        }
    }

    /// The lanes of `len` bytes (at least two lanes' worth).
    #[cold]
    #[inline(never)]
    fn split(len: usize, tracks: Tracks) -> Box<ManyLanes> {
        let span = LANE_BYTES.max((len / MOST_LANES).next_power_of_two());
        let (shift, count) = (span.trailing_zeros(), len.div_ceil(span));
        let lanes = (0..count)
            .map(|index| PaddedLane(Lane::new(tracks.clipped(&lane_bytes(shift, count, index)))))
            .collect();
        Box::new(ManyLanes { shift, lanes })
    }

    fn count(&self) -> usize {
        match self {
            Self::One(_) => 1,
            Self::Many(many) => many.lanes.len(),
        }
    }

    pub(super) fn lane(&self, index: usize) -> &Lane {
        match self {
            Self::One(lane) => lane,
            Self::Many(many) => &many.lanes[index].0,
        }
    }

    /// The bytes of lane `index`.
    pub(super) fn bounds(&self, index: usize) -> Range<usize> {
        match self {
            Self::One(_) => WHOLE,
            Self::Many(many) => lane_bytes(many.shift, many.lanes.len(), index),
        }
    }

    /// The lanes that the bytes `range` touch (the first one's, for no
    /// bytes).
    pub(super) fn covering(&self, range: &Range<usize>) -> Range<usize> {
        match self {
            Self::One(_) => 0..1,
            Self::Many(many) => {
                let last_lane = many.lanes.len() - 1;
                let first = (range.start >> many.shift).min(last_lane);
                let last = (range.end.saturating_sub(1) >> many.shift).clamp(first, last_lane);
                first..last + 1
            }
        }
    }

    /// Whether any lane notes a use.
    pub(super) fn is_busy(&self) -> bool {
        (0..self.count()).any(|index| !self.lane(index).lock().is_empty())
    }

    /// Runs `visit` on every lane's tracks, through `&mut`: no lock taken.
    fn for_each_mut(&mut self, mut visit: impl FnMut(&mut Tracks)) {
        match self {
            Self::One(lane) => visit(lane.get_mut()),
            Self::Many(many) => many.lanes.iter_mut().for_each(|lane| visit(lane.0.get_mut())),
        }
    }

    /// Proves every noted use finished, through `&mut` (see
    /// [`Tracks::settle`]).
    pub(super) fn settle_mut(&mut self, context: &str) -> Settled {
        if let Self::One(lane) = self {
            return lane.get_mut().settle(context);
        }
        let mut streams = Vec::new();
        self.for_each_mut(|tracks| tracks.all_streams(&mut streams));
        let settled = complete_all(context, &streams);
        if let Settled::Proven(_) = settled {
            self.for_each_mut(Tracks::forget_noted);
        }
        settled
    }

    /// Whether the memory has one lane (a pool's small blocks).
    #[inline(always)]
    pub(super) fn is_one(&self) -> bool {
        matches!(self, Self::One(_))
    }

    /// The tracks of every lane as one (for a pool, or the drop).
    #[inline]
    pub(super) fn into_tracks(self) -> Tracks {
        match self {
            Self::One(lane) => lane.into_tracks(),
            Self::Many(many) => Self::join(many),
        }
    }

    /// Takes the box itself, so that its release stays out of the
    /// inlined drop of the one-lane case (a pool hit).
    #[cold]
    #[inline(never)]
    #[allow(clippy::boxed_local)]
    fn join(many: Box<ManyLanes>) -> Tracks {
        many.lanes
            .into_vec()
            .into_iter()
            .fold(Tracks::default(), |tracks, lane| tracks.merge(lane.0.into_tracks()))
    }

    /// The lanes of `uses` (ranges, and whether each writes), locked once
    /// none of them conflicts with a use in flight.
    pub(super) fn lock_clear(&self, uses: &[(&Range<usize>, bool)]) -> Locked<'_> {
        loop {
            let locked = Locked::lock(self, uses);
            match locked.blocked(uses) {
                None => return locked,
                Some(index) => {
                    drop(locked);
                    self.wait_for_lane(index, uses);
                }
            }
        }
    }

    /// Waits, with no other lane locked, until lane `index` has no use in
    /// flight that one of `uses` conflicts with.
    pub(super) fn wait_for_lane(&self, index: usize, uses: &[(&Range<usize>, bool)]) {
        self.lane(index)
            .wait_while(|tracks| uses.iter().any(|(range, write)| tracks.blocked(range, *write)));
    }
}

/// The lanes of one owner that an operation holds, locked: a run of
/// lanes from `first`.
pub(super) struct Locked<'a> {
    lanes: &'a Lanes,
    first: usize,
    guards: Guards<'a>,
}

/// The guards of a run of lanes: one (the common case, with no
/// allocation) or more.
enum Guards<'a> {
    One(MutexGuard<'a, Tracks>),
    Run(Vec<MutexGuard<'a, Tracks>>),
}

impl<'a> Locked<'a> {
    /// Locks, in ascending order, the run of lanes from the first to the
    /// last that the bytes of `uses` touch (one use, or the two of a copy
    /// within one owner; at least one).
    pub(super) fn lock(lanes: &'a Lanes, uses: &[(&Range<usize>, bool)]) -> Self {
        let mut run = 0..0;
        for (range, _) in uses {
            let more = lanes.covering(range);
            run = if run.is_empty() {
                more
            } else {
                run.start.min(more.start)..run.end.max(more.end)
            };
        }
        let guards = if run.len() == 1 {
            Guards::One(lanes.lane(run.start).lock())
        } else {
            Guards::Run(run.clone().map(|index| lanes.lane(index).lock()).collect())
        };
        Self {
            lanes,
            first: run.start,
            guards,
        }
    }

    /// The owner's lanes.
    pub(super) fn lanes(&self) -> &'a Lanes {
        self.lanes
    }

    /// The tracks held, from lane `first` on.
    fn held(&self) -> &[MutexGuard<'a, Tracks>] {
        match &self.guards {
            Guards::One(guard) => std::slice::from_ref(guard),
            Guards::Run(guards) => guards,
        }
    }

    fn held_mut(&mut self) -> &mut [MutexGuard<'a, Tracks>] {
        match &mut self.guards {
            Guards::One(guard) => std::slice::from_mut(guard),
            Guards::Run(guards) => guards,
        }
    }

    /// The first lane held in which one of `uses` must wait for a use in
    /// flight. (A lane holds its part of each use, so the whole range
    /// tests the same as its part.)
    pub(super) fn blocked(&self, uses: &[(&Range<usize>, bool)]) -> Option<usize> {
        self.held()
            .iter()
            .position(|tracks| uses.iter().any(|(range, write)| tracks.blocked(range, *write)))
            .map(|offset| self.first + offset)
    }

    /// Applies `change` to the part of `range` in each lane it touches.
    fn each_part(&mut self, range: &Range<usize>, mut change: impl FnMut(&mut Tracks, Range<usize>)) {
        let (lanes, first) = (self.lanes, self.first);
        let held = self.held_mut();
        for index in lanes.covering(range) {
            if let Some(tracks) = index.checked_sub(first).and_then(|offset| held.get_mut(offset)) {
                change(tracks, clip(range, &lanes.bounds(index)));
            }
        }
    }

    /// Queues on `stream` the waits a use of `range` (a write if `write`)
    /// must follow: one per other stream with a conflicting use.
    ///
    /// # Errors
    ///
    /// The runtime's code of an event record or wait.
    pub(super) fn order(&self, stream: &Stream, range: &Range<usize>, write: bool) -> Result<()> {
        let mut others = Vec::new();
        for tracks in self.held() {
            tracks.streams_to_wait_for(stream, range, write, &mut others);
        }
        for other in &others {
            wait_for(stream, other)?;
        }
        Ok(())
    }

    /// Marks a use of `range` in flight.
    pub(super) fn take_off(&mut self, range: &Range<usize>, write: bool) {
        self.each_part(range, |tracks, part| tracks.take_off(part, write));
    }

    /// Notes work queued on `stream` outside this crate that may write
    /// `range` ([`Tracks::add_writer`]).
    pub(super) fn add_writer(&mut self, stream: &Arc<Stream>, range: &Range<usize>) {
        self.each_part(range, |tracks, part| tracks.add_writer(stream, part));
    }

    /// Proves every use noted in the lanes held finished (see
    /// [`Tracks::settle`]).
    pub(super) fn settle(&mut self, context: &str) -> Settled {
        let mut streams = Vec::new();
        for tracks in self.held() {
            tracks.all_streams(&mut streams);
        }
        self.settle_streams(context, &streams)
    }

    /// Proves finished the uses a host access to `range` (a write if
    /// `write`) must follow: every use of their streams in the lanes held
    /// is then over and is forgotten. On an unproven stream nothing is
    /// forgotten.
    pub(super) fn settle_for(&mut self, context: &str, range: &Range<usize>, write: bool) -> Settled {
        let mut streams = Vec::new();
        for tracks in self.held() {
            tracks.streams_in_conflict(range, write, &mut streams);
        }
        self.settle_streams(context, &streams)
    }

    fn settle_streams(&mut self, context: &str, streams: &[Arc<Stream>]) -> Settled {
        if streams.is_empty() {
            return Settled::Proven(Ok(()));
        }
        let settled = complete_all(context, streams);
        if let Settled::Proven(_) = settled {
            for tracks in self.held_mut() {
                tracks.forget_streams(streams);
            }
        }
        settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    fn shift_and_count(lanes: &Lanes) -> (u32, usize) {
        match lanes {
            Lanes::One(_) => (0, 1),
            Lanes::Many(many) => (many.shift, many.lanes.len()),
        }
    }

    #[test]
    fn small_memory_has_one_lane_and_large_memory_at_most_sixteen() {
        assert_eq!(shift_and_count(&Lanes::new(2 * MIB - 1, Tracks::default())), (0, 1));
        assert_eq!(shift_and_count(&Lanes::new(2 * MIB, Tracks::default())), (20, 2));
        assert_eq!(shift_and_count(&Lanes::new(3 * MIB + 1, Tracks::default())), (20, 4));
        assert_eq!(shift_and_count(&Lanes::new(64 * MIB, Tracks::default())), (22, 16));
        // 33 MiB: lanes of 4 MiB (2 MiB and a bit, rounded up), 9 of them.
        assert_eq!(shift_and_count(&Lanes::new(33 * MIB, Tracks::default())), (22, 9));
    }

    #[test]
    fn a_range_covers_the_lanes_its_bytes_touch() {
        let lanes = Lanes::new(4 * MIB, Tracks::default());
        assert_eq!(lanes.covering(&(0..1)), 0..1);
        assert_eq!(
            lanes.covering(&(0..MIB)),
            0..1,
            "an end on a boundary stays in the lane"
        );
        assert_eq!(lanes.covering(&(MIB - 1..MIB + 1)), 0..2);
        assert_eq!(lanes.covering(&(3 * MIB..4 * MIB)), 3..4);
        assert_eq!(lanes.covering(&WHOLE), 0..4);
        assert_eq!(lanes.covering(&(MIB..MIB)), 1..2, "no bytes: the lane of the start");
        assert_eq!(lanes.bounds(0), 0..MIB);
        assert_eq!(lanes.bounds(3), 3 * MIB..usize::MAX, "the last lane reaches to the end");
        assert_eq!(clip(&(MIB - 8..MIB + 8), &lanes.bounds(1)), MIB..MIB + 8);
        let one = Lanes::new(4096, Tracks::default());
        assert_eq!(one.covering(&WHOLE), 0..1);
        assert_eq!(one.bounds(0), WHOLE);
    }
}
