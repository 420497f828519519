//! [`Tracks`]: the uses of one owner's memory that may still be queued,
//! per byte range and stream, and the waits that order a new use after
//! them.

use super::super::completion::Completion;
use crate::error::{Error, Result};
use crate::stream::{Event, EventFlags, Stream};
use std::ops::Range;
use std::sync::Arc;

/// Every byte of the memory: the range of a use of the whole owner, and of
/// every use once the owner goes back to a pool ([`Tracks::widen`]).
pub(crate) const WHOLE: Range<usize> = 0..usize::MAX;

/// Above this many noted uses, the uses of each stream and kind are
/// joined into the range that covers them all ([`Tracks::coarsen`]): a
/// larger range only adds waits, so the bound costs precision, never
/// soundness.
const MOST_USES: usize = 32;

/// What [`Tracks::settle`] proved.
pub(crate) enum Settled {
    /// Every noted use finished; the first task error reported, if any.
    Proven(Result<()>),
    /// A stream's work cannot be proven finished: its first error.
    Unproven(Error),
}

/// The uses of one owner's memory whose work may still be queued: for
/// each, the byte range, the stream and whether it writes. Work on one
/// stream runs in order, so only uses on *other* streams need a wait, and
/// only those whose ranges overlap the new use's: a write waits for every
/// overlapping use, a read for the overlapping writes.
///
/// A write replaces the uses of its bytes (each was waited for or is on
/// its own stream, so waiting for the write covers them); a read is added.
/// Uses of one stream and kind that touch are joined, so a run of
/// appends on one stream stays one use.
///
/// Memory with no use noted (the common case: a pool hit, a buffer used
/// synchronously) holds one null pointer, so moving and dropping it costs
/// almost nothing.
#[derive(Default, Clone)]
pub(crate) struct Tracks {
    /// `None` when no use was noted since the last settle.
    uses: Option<Box<Uses>>,
}

/// The noted uses and those in flight, behind one pointer.
#[derive(Default, Clone)]
struct Uses {
    /// Uses whose work may be queued.
    noted: Vec<Use>,
    /// Uses being queued, or host accesses under way, outside the lock
    /// ([`InFlight`](super::in_flight::InFlight)): a conflicting use waits
    /// until they end.
    in_flight: Vec<InFlightUse>,
    /// Threads waiting for an in-flight use to end.
    waiters: usize,
}

#[derive(Clone)]
struct InFlightUse {
    range: Range<usize>,
    write: bool,
}

#[derive(Clone)]
struct Use {
    range: Range<usize>,
    stream: Arc<Stream>,
    write: bool,
}

fn same(a: &Stream, b: &Stream) -> bool {
    a.as_raw() == b.as_raw()
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Whether `a` and `b` overlap or touch (their union is one range).
fn touches(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Makes `stream` wait for the work queued on `other` so far: an event
/// recorded on `other` now covers every use queued there before. A stream
/// in stop mode is waited for on the host instead (see
/// [`after_stop_mode`]); one flag test here.
///
/// # Errors
///
/// The runtime's code of the record or the wait; [`Error::StreamStopped`]
/// when `other` is in stop mode and has failed.
pub(crate) fn wait_for(stream: &Stream, other: &Stream) -> Result<()> {
    if other.stop_state() != 0 {
        return after_stop_mode(other);
    }
    let event = Event::with_flags(other.device(), EventFlags::SYNC)?;
    event.record(other)?;
    stream.wait_event(&event)
    // The event may go now: the wait is for a record already issued.
}

/// Orders new work after `other`, a stream in stop mode, without an event:
/// a task of `other` queued before the record may fail, and the record,
/// skipped then, would never complete, nor the wait for it. So `other` is
/// synchronised on the host: its work queued so far is over when that
/// succeeds (nothing to wait for on the device), and when it reports a
/// failure (or one was reported before) the stream is stopped and the
/// work is refused.
#[cold]
#[inline(never)]
fn after_stop_mode(other: &Stream) -> Result<()> {
    if other.is_stopped() {
        return Err(other.stopped_error(None));
    }
    match other.synchronize() {
        Ok(()) => Ok(()),
        Err(failure) if other.is_stopped() => Err(other.stopped_error(Some(failure))),
        Err(error) => Err(error),
    }
}

impl Use {
    /// Whether a use of `range` (a write if `write`) must come after this
    /// one.
    fn conflicts(&self, range: &Range<usize>, write: bool) -> bool {
        (self.write || write) && overlaps(&self.range, range)
    }
}

impl Tracks {
    #[inline]
    fn uses(&self) -> &[Use] {
        self.uses.as_deref().map_or(&[], |uses| &uses.noted[..])
    }

    /// Adds to `into` each stream of a noted use for which `pick` holds,
    /// once.
    fn streams_into(&self, into: &mut Vec<Arc<Stream>>, mut pick: impl FnMut(&Use) -> bool) {
        for used in self.uses() {
            if pick(used) && !into.iter().any(|known| same(known, &used.stream)) {
                into.push(Arc::clone(&used.stream));
            }
        }
    }

    /// The distinct streams of the noted uses for which `pick` holds.
    fn streams_where(&self, pick: impl FnMut(&Use) -> bool) -> Vec<Arc<Stream>> {
        let mut streams = Vec::new();
        self.streams_into(&mut streams, pick);
        streams
    }

    /// Adds to `into` the streams a use of `range` (a write if `write`)
    /// queued on `stream` must wait for: those of the overlapping writes on
    /// other streams, and for a write of every overlapping use on another
    /// stream.
    pub(crate) fn streams_to_wait_for(
        &self,
        stream: &Stream,
        range: &Range<usize>,
        write: bool,
        into: &mut Vec<Arc<Stream>>,
    ) {
        if self.uses.is_some() {
            self.streams_into(into, |used| !same(&used.stream, stream) && used.conflicts(range, write));
        }
    }

    /// Adds to `into` the streams of the uses a host access to `range` (a
    /// write if `write`) must follow.
    pub(crate) fn streams_in_conflict(&self, range: &Range<usize>, write: bool, into: &mut Vec<Arc<Stream>>) {
        self.streams_into(into, |used| used.conflicts(range, write));
    }

    /// Adds to `into` the stream of every noted use.
    pub(crate) fn all_streams(&self, into: &mut Vec<Arc<Stream>>) {
        self.streams_into(into, |_| true);
    }

    /// Forgets the uses on `streams`, whose work is proven over.
    pub(crate) fn forget_streams(&mut self, streams: &[Arc<Stream>]) {
        if let Some(uses) = self.uses.as_deref_mut() {
            uses.noted
                .retain(|used| !streams.iter().any(|done| same(done, &used.stream)));
            if uses.noted.is_empty() {
                self.forget_noted();
            }
        }
    }

    /// The noted uses of the bytes `bounds`, cut to them.
    pub(crate) fn clipped(&self, bounds: &Range<usize>) -> Tracks {
        let mut part = Tracks::default();
        for used in self.uses() {
            let range = used.range.start.max(bounds.start)..used.range.end.min(bounds.end);
            if !range.is_empty() {
                let uses = &mut part.uses.get_or_insert_with(Box::default).noted;
                add(
                    uses,
                    Use {
                        range,
                        stream: Arc::clone(&used.stream),
                        write: used.write,
                    },
                );
            }
        }
        part
    }

    /// Notes a use of `range` queued on `stream`, after [`Tracks::order`]
    /// queued its waits.
    pub(crate) fn note(&mut self, stream: &Arc<Stream>, range: Range<usize>, write: bool) {
        let uses = &mut self.uses.get_or_insert_with(Box::default).noted;
        if write {
            cut_out(uses, &range);
        } else if uses
            .iter()
            .any(|used| same(&used.stream, stream) && used.range.start <= range.start && range.end <= used.range.end)
        {
            // A use on the same stream covers it: whoever waits for that
            // stream waits for this read too.
            return;
        }
        add(
            uses,
            Use {
                range,
                stream: Arc::clone(stream),
                write,
            },
        );
    }

    /// Notes work queued on `stream` outside this crate that may write
    /// `range`, without assuming it was ordered after the uses noted so
    /// far (they all stay noted).
    pub(crate) fn add_writer(&mut self, stream: &Arc<Stream>, range: Range<usize>) {
        let uses = &mut self.uses.get_or_insert_with(Box::default).noted;
        add(
            uses,
            Use {
                range,
                stream: Arc::clone(stream),
                write: true,
            },
        );
    }

    /// The tracks of memory made of this owner's and `other`'s: every use
    /// of either may still be queued.
    pub(crate) fn merge(mut self, other: Tracks) -> Tracks {
        let Some(theirs) = other.uses else {
            return self;
        };
        let Some(uses) = self.uses.as_deref_mut() else {
            return Tracks { uses: Some(theirs) };
        };
        for used in theirs.noted {
            add(&mut uses.noted, used);
        }
        self
    }

    /// Makes every use cover the whole memory: the ranges of a pool's
    /// block mean nothing once it is cut or joined with its neighbours.
    #[inline]
    pub(crate) fn widen(&mut self) {
        if let Some(uses) = self.uses.as_deref_mut() {
            widen_all(&mut uses.noted);
        }
    }

    /// Whether any use is noted. Inlined: the pool's cache asks on every
    /// hit and every free, and a call there costs more than the test.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.uses().is_empty()
    }

    /// Proves every noted use finished (the failure model of
    /// [`Stream::complete`] per stream). When all are proven the tracks are
    /// cleared; when one is not they stay, so the memory is never released.
    pub(crate) fn settle(&mut self, context: &str) -> Settled {
        if self.uses.is_none() {
            return Settled::Proven(Ok(()));
        }
        let streams = self.streams_where(|_| true);
        let settled = complete_all(context, &streams);
        if let Settled::Proven(_) = settled {
            self.forget_noted();
        }
        settled
    }

    /// Forgets every noted use (their work is over); what is in flight
    /// stays.
    pub(crate) fn forget_noted(&mut self) {
        match self.uses.as_deref_mut() {
            Some(uses) if !uses.in_flight.is_empty() || uses.waiters > 0 => uses.noted.clear(),
            _ => *self = Self::default(),
        }
    }

    /// Whether a use of `range` (a write if `write`) must wait for a use
    /// in flight.
    pub(crate) fn blocked(&self, range: &Range<usize>, write: bool) -> bool {
        self.uses.as_deref().is_some_and(|uses| {
            uses.in_flight
                .iter()
                .any(|flying| (flying.write || write) && overlaps(&flying.range, range))
        })
    }

    /// Marks a use of `range` in flight.
    pub(crate) fn take_off(&mut self, range: Range<usize>, write: bool) {
        let uses = self.uses.get_or_insert_with(Box::default);
        uses.in_flight.push(InFlightUse { range, write });
    }

    /// Ends a use in flight; whether a thread waits for one to end.
    pub(crate) fn land(&mut self, range: &Range<usize>, write: bool) -> bool {
        let Some(uses) = self.uses.as_deref_mut() else {
            return false;
        };
        if let Some(index) = uses
            .in_flight
            .iter()
            .position(|flying| flying.write == write && flying.range == *range)
        {
            uses.in_flight.swap_remove(index);
        }
        uses.waiters > 0
    }

    /// Counts a thread that waits (`true`) or stopped waiting (`false`)
    /// for a use in flight to end.
    pub(crate) fn count_waiter(&mut self, waiting: bool) {
        let uses = self.uses.get_or_insert_with(Box::default);
        if waiting {
            uses.waiters += 1;
        } else {
            uses.waiters = uses.waiters.saturating_sub(1);
        }
    }
}

/// Synchronises each of `streams`.
pub(crate) fn complete_all(context: &str, streams: &[Arc<Stream>]) -> Settled {
    let mut reported = Ok(());
    for stream in streams {
        match stream.complete() {
            Completion::Finished(Ok(())) => {}
            Completion::Finished(Err(error)) => {
                if reported.is_ok() {
                    reported = Err(error);
                }
            }
            Completion::Unproven { first, later } => {
                log::error!(
                    "{context}: the work queued on stream {:?} cannot be proven finished; the memory it uses is \
                     kept: {}",
                    stream.as_raw(),
                    Completion::describe(&first, &later)
                );
                return Settled::Unproven(first);
            }
        }
    }
    Settled::Proven(reported)
}

/// Removes `range` from every use: a write of it is ordered after them.
fn cut_out(uses: &mut Vec<Use>, range: &Range<usize>) {
    let mut index = 0;
    while index < uses.len() {
        let used = &mut uses[index];
        if !overlaps(&used.range, range) {
            index += 1;
            continue;
        }
        let (before, after) = (used.range.start < range.start, used.range.end > range.end);
        match (before, after) {
            (false, false) => {
                uses.swap_remove(index);
                continue;
            }
            (true, false) => used.range.end = range.start,
            (false, true) => used.range.start = range.end,
            (true, true) => {
                let tail = Use {
                    range: range.end..used.range.end,
                    stream: Arc::clone(&used.stream),
                    write: used.write,
                };
                used.range.end = range.start;
                uses.push(tail);
            }
        }
        index += 1;
    }
}

/// Adds `new`, joined with a touching use of its stream and kind, or
/// left out when one already covers it.
fn add(uses: &mut Vec<Use>, new: Use) {
    let joined = uses
        .iter_mut()
        .find(|used| used.write == new.write && same(&used.stream, &new.stream) && touches(&used.range, &new.range));
    match joined {
        Some(used) => {
            used.range = used.range.start.min(new.range.start)..used.range.end.max(new.range.end);
        }
        None => uses.push(new),
    }
    if uses.len() > MOST_USES {
        coarsen(uses);
    }
}

/// Joins the uses of each stream and kind into one that covers them all.
#[cold]
fn coarsen(uses: &mut Vec<Use>) {
    let mut joined: Vec<Use> = Vec::new();
    for used in uses.drain(..) {
        match joined
            .iter_mut()
            .find(|known| known.write == used.write && same(&known.stream, &used.stream))
        {
            Some(known) => known.range = known.range.start.min(used.range.start)..known.range.end.max(used.range.end),
            None => joined.push(used),
        }
    }
    *uses = joined;
}

/// Every use over the whole memory: one per stream, a write if the stream
/// wrote any of it.
#[cold]
fn widen_all(uses: &mut Vec<Use>) {
    let mut wide: Vec<Use> = Vec::new();
    for used in uses.drain(..) {
        match wide.iter_mut().find(|known| same(&known.stream, &used.stream)) {
            Some(known) => known.write |= used.write,
            None => wide.push(Use { range: WHOLE, ..used }),
        }
    }
    *uses = wide;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Device;

    fn streams(count: usize) -> Vec<Arc<Stream>> {
        let device = Device::new(0).expect("a device");
        (0..count)
            .map(|_| Arc::new(Stream::new(&device).expect("a stream")))
            .collect()
    }

    fn conflicting(tracks: &Tracks, range: Range<usize>, write: bool) -> Vec<*mut std::ffi::c_void> {
        let mut raw: Vec<_> = tracks
            .streams_where(|used| used.conflicts(&range, write))
            .iter()
            .map(|stream| stream.as_raw().cast())
            .collect();
        raw.sort();
        raw
    }

    fn raw(streams: &[&Arc<Stream>]) -> Vec<*mut std::ffi::c_void> {
        let mut raw: Vec<_> = streams.iter().map(|stream| stream.as_raw().cast()).collect();
        raw.sort();
        raw
    }

    #[test]
    fn disjoint_writes_do_not_conflict_and_overlapping_ones_do() {
        let s = streams(3);
        let mut tracks = Tracks::default();
        tracks.note(&s[0], 0..4096, true);
        tracks.note(&s[1], 4096..8192, true);
        assert_eq!(conflicting(&tracks, 8192..9000, true), raw(&[]));
        assert_eq!(conflicting(&tracks, 0..10, true), raw(&[&s[0]]));
        assert_eq!(conflicting(&tracks, 4000..5000, false), raw(&[&s[0], &s[1]]));
    }

    #[test]
    fn a_write_replaces_the_uses_of_its_bytes_only() {
        let s = streams(3);
        let mut tracks = Tracks::default();
        tracks.note(&s[0], 0..100, true);
        tracks.note(&s[1], 0..100, false);
        tracks.note(&s[2], 40..60, true);
        // Bytes 0..40 and 60..100 keep the first write and the read.
        assert_eq!(conflicting(&tracks, 0..10, true), raw(&[&s[0], &s[1]]));
        assert_eq!(conflicting(&tracks, 90..100, false), raw(&[&s[0]]));
        // Bytes 40..60: only the last write.
        assert_eq!(conflicting(&tracks, 45..50, true), raw(&[&s[2]]));
    }

    #[test]
    fn appends_on_one_stream_stay_one_use_and_many_uses_coarsen() {
        let s = streams(2);
        let mut tracks = Tracks::default();
        for page in 0..100 {
            tracks.note(&s[0], page * 16..(page + 1) * 16, true);
        }
        assert_eq!(tracks.uses().len(), 1);
        assert_eq!(tracks.uses()[0].range, 0..1600);
        for page in 0..100 {
            tracks.note(&s[1], page * 64..page * 64 + 8, false);
        }
        assert!(tracks.uses().len() <= MOST_USES + 1);
        // Coarsening only widens: every read noted still conflicts.
        assert_eq!(conflicting(&tracks, 99 * 64..99 * 64 + 1, true), raw(&[&s[1]]));
        assert_eq!(conflicting(&tracks, 10 * 64..10 * 64 + 1, true), raw(&[&s[0], &s[1]]));
        assert_eq!(conflicting(&tracks, 10 * 64..10 * 64 + 1, false), raw(&[&s[0]]));
    }

    #[test]
    fn widen_keeps_one_use_per_stream_over_everything() {
        let s = streams(2);
        let mut tracks = Tracks::default();
        tracks.note(&s[0], 0..10, false);
        tracks.note(&s[0], 20..30, true);
        tracks.note(&s[1], 50..60, false);
        tracks.widen();
        assert_eq!(tracks.uses().len(), 2);
        assert_eq!(conflicting(&tracks, 1000..1001, false), raw(&[&s[0]]));
        assert_eq!(conflicting(&tracks, 1000..1001, true), raw(&[&s[0], &s[1]]));
    }
}
