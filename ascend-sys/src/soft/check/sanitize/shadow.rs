//! The shadow state: for each run of bytes the device can reach, the last
//! write, the reads since, and whether anything wrote it since it was
//! allocated.
//!
//! Runs are keyed by the bytes behind an address (the device's view of its
//! physical memory, or the pinned host address), not by the address a
//! program used, so two mappings of one physical allocation share their
//! state. The map holds intervals: its size grows with the number of
//! distinct runs a program touches, not with their bytes. Adjacent runs in
//! the same state are merged after each access.

use super::clock::{Actor, Clock};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One operation that touched memory, as reports name it.
#[derive(Debug)]
pub(crate) struct Op {
    /// The call that issued it.
    pub(crate) api: &'static str,
    /// Who issued it, and its number in that actor's order.
    pub(crate) actor: Actor,
    pub(crate) epoch: u64,
    /// "stream 0x… on device 0", or "the host".
    pub(crate) place: Arc<str>,
    /// The range the program named, and whether the operation writes it.
    pub(crate) address: usize,
    pub(crate) len: usize,
    pub(crate) kind: Kind,
}

impl Op {
    /// Whether it changes the bytes (a write or a free).
    pub(crate) fn writes(&self) -> bool {
        self.kind != Kind::Read
    }
}

/// How an operation touches its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    /// The memory is given back (checked as a write).
    Free,
}

/// Whether anything wrote a run since it was allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Init {
    /// Not known (memory made before the sanitizer started, or memory the
    /// host writes directly, such as pinned host memory).
    Unknown,
    /// Allocated by this call and not written since.
    Unwritten(&'static str),
    /// Written since it was allocated.
    Written,
}

#[derive(Debug, Clone)]
struct Run {
    end: usize,
    init: Init,
    write: Option<Arc<Op>>,
    /// The latest read of each actor since the last write (an actor's
    /// earlier reads come before its latest one).
    reads: Vec<Arc<Op>>,
}

impl Run {
    fn fresh(end: usize, init: Init) -> Self {
        Self {
            end,
            init,
            write: None,
            reads: Vec::new(),
        }
    }

    fn same_state(&self, other: &Run) -> bool {
        let same_op = |a: &Option<Arc<Op>>, b: &Option<Arc<Op>>| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        self.init == other.init
            && same_op(&self.write, &other.write)
            && self.reads.len() == other.reads.len()
            && self.reads.iter().zip(&other.reads).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// An earlier operation that nothing orders before the current one, on
/// `len` bytes starting `offset` bytes into the current operation's range.
#[derive(Debug)]
pub(crate) struct Conflict {
    pub(crate) earlier: Arc<Op>,
    pub(crate) offset: usize,
    pub(crate) len: usize,
}

/// Bytes read before anything wrote them: `len` bytes from `offset` into
/// the current operation's range, allocated by `origin`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unwritten {
    pub(crate) origin: &'static str,
    pub(crate) offset: usize,
    pub(crate) len: usize,
}

/// What one access found.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub(crate) conflicts: Vec<Conflict>,
    pub(crate) unwritten: Option<Unwritten>,
}

impl Findings {
    /// Whether the access found nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.conflicts.is_empty() && self.unwritten.is_none()
    }

    fn conflict(&mut self, earlier: &Arc<Op>, offset: usize, len: usize) {
        // One entry per earlier operation, spanning every run it shares.
        if let Some(known) = self.conflicts.iter_mut().find(|c| Arc::ptr_eq(&c.earlier, earlier)) {
            let end = (known.offset + known.len).max(offset + len);
            known.offset = known.offset.min(offset);
            known.len = end - known.offset;
            return;
        }
        self.conflicts.push(Conflict {
            earlier: Arc::clone(earlier),
            offset,
            len,
        });
    }

    fn unwritten(&mut self, origin: &'static str, offset: usize, len: usize) {
        match &mut self.unwritten {
            Some(known) => {
                let end = (known.offset + known.len).max(offset + len);
                known.offset = known.offset.min(offset);
                known.len = end - known.offset;
            }
            None => self.unwritten = Some(Unwritten { origin, offset, len }),
        }
    }
}

/// The shadow of every run the sanitizer tracks.
#[derive(Debug, Default)]
pub(crate) struct Shadow {
    runs: BTreeMap<usize, Run>,
}

impl Shadow {
    /// Number of runs kept.
    pub(crate) fn len(&self) -> usize {
        self.runs.len()
    }

    /// Splits the run that covers `at` (not at its start) in two.
    fn split_at(&mut self, at: usize) {
        let Some((_, run)) = self.runs.range_mut(..at).next_back() else {
            return;
        };
        if run.end <= at {
            return;
        }
        let tail = run.clone();
        run.end = at;
        self.runs.insert(at, tail);
    }

    /// Forgets `[start, start + len)`: its runs are gone (freed memory).
    pub(crate) fn forget(&mut self, start: usize, len: usize) {
        let end = start.saturating_add(len);
        // The usual case, a free of what one allocation made: exactly one
        // run (runs never overlap, so none other touches its bytes),
        // removed in one step.
        if self.runs.get(&start).is_some_and(|run| run.end == end) {
            self.runs.remove(&start);
            return;
        }
        self.split_at(start);
        self.split_at(end);
        // One by one, without collecting the keys: usually one run.
        while let Some((&key, _)) = self.runs.range(start..end).next() {
            self.runs.remove(&key);
        }
    }

    /// Starts `[start, start + len)` afresh (new memory): no accesses, and
    /// `init` as given.
    pub(crate) fn reset(&mut self, start: usize, len: usize, init: Init) {
        if len == 0 {
            return;
        }
        let end = start.saturating_add(len);
        // The usual case, memory nothing tracked yet (or freed and
        // forgotten): the last run starting before `end` ends by `start`,
        // so none overlaps; one insertion.
        if self
            .runs
            .range(..end)
            .next_back()
            .is_none_or(|(_, run)| run.end <= start)
        {
            self.runs.insert(start, Run::fresh(end, init));
            return;
        }
        self.forget(start, len);
        self.runs.insert(start, Run::fresh(end, init));
    }

    /// Every earlier access to the run `(start, len, offset)` (`offset`:
    /// where these bytes start in `op`'s range) that `seen` does not order
    /// before the access `op`; the read of unwritten bytes when
    /// `check_init`; and `op` recorded as the run's latest access.
    pub(crate) fn access(
        &mut self,
        (start, len, offset): (usize, usize, usize),
        op: &Arc<Op>,
        seen: &Clock,
        check_init: bool,
        found: &mut Findings,
    ) {
        if len == 0 {
            return;
        }
        if op.kind == Kind::Free {
            // Checked only: the memory's history ends with it (the caller
            // forgets the bytes next), so nothing is split, filled or merged.
            self.check_free((start, len, offset), op.actor, seen, found);
            return;
        }
        let end = start.saturating_add(len);
        self.split_at(start);
        self.split_at(end);
        self.fill_gaps(start, end);
        for (&run_start, run) in self.runs.range_mut(start..end) {
            let (at, run_len) = (offset + (run_start - start), run.end - run_start);
            let unordered =
                |earlier: &Arc<Op>| earlier.actor != op.actor && !seen.has_seen(earlier.actor, earlier.epoch);
            if let Some(write) = run.write.as_ref().filter(|write| unordered(write)) {
                found.conflict(write, at, run_len);
            }
            if op.writes() {
                for read in run.reads.iter().filter(|read| unordered(read)) {
                    found.conflict(read, at, run_len);
                }
            }
            if op.writes() {
                run.write = Some(Arc::clone(op));
                run.reads.clear();
                run.init = Init::Written;
            } else {
                if let (true, Init::Unwritten(origin)) = (check_init, run.init) {
                    found.unwritten(origin, at, run_len);
                    // Reported once: later reads of these bytes are quiet.
                    run.init = Init::Written;
                }
                run.reads.retain(|read| read.actor != op.actor);
                run.reads.push(Arc::clone(op));
            }
        }
        self.merge_around(start, end);
    }

    /// Notes that `[start, start + len)` was written, by an operation the
    /// sanitizer cannot order (it keeps no access for it).
    pub(crate) fn written(&mut self, start: usize, len: usize) {
        let end = start.saturating_add(len);
        self.split_at(start);
        self.split_at(end);
        for (_, run) in self.runs.range_mut(start..end) {
            if let Init::Unwritten(_) = run.init {
                run.init = Init::Written;
            }
        }
        self.merge_around(start, end);
    }

    /// The earlier accesses to the run `(start, len, offset)` that `seen`
    /// does not order before a free by `actor`: every write and read of
    /// another actor (a free writes). The runs are left as they are.
    pub(crate) fn check_free(
        &self,
        (start, len, offset): (usize, usize, usize),
        actor: Actor,
        seen: &Clock,
        found: &mut Findings,
    ) {
        let end = start.saturating_add(len);
        let unordered = |earlier: &Arc<Op>| earlier.actor != actor && !seen.has_seen(earlier.actor, earlier.epoch);
        let before = self.runs.range(..start).next_back().filter(|(_, run)| run.end > start);
        for (&run_start, run) in before.into_iter().chain(self.runs.range(start..end)) {
            let (from, to) = (run_start.max(start), run.end.min(end));
            let at = offset + (from - start);
            for earlier in run.write.iter().chain(&run.reads).filter(|earlier| unordered(earlier)) {
                found.conflict(earlier, at, to - from);
            }
        }
    }

    /// A free by `actor` of the run `(start, len, offset)`: checks it as
    /// [`Shadow::check_free`] does, then forgets the bytes.
    pub(crate) fn free(
        &mut self,
        (start, len, offset): (usize, usize, usize),
        actor: Actor,
        seen: &Clock,
        found: &mut Findings,
    ) {
        let end = start.saturating_add(len);
        // The usual case, a free of what one allocation made: one run
        // (runs never overlap), checked and removed.
        if let Some(run) = self.runs.get(&start).filter(|run| run.end == end) {
            let unordered = |earlier: &&Arc<Op>| earlier.actor != actor && !seen.has_seen(earlier.actor, earlier.epoch);
            for earlier in run.write.iter().chain(&run.reads).filter(unordered) {
                found.conflict(earlier, offset, len);
            }
            self.runs.remove(&start);
            return;
        }
        self.check_free((start, len, offset), actor, seen, found);
        self.forget(start, len);
    }

    /// Adds untracked runs where `[start, end)` has none.
    fn fill_gaps(&mut self, start: usize, end: usize) {
        let mut gaps = Vec::new();
        let mut cursor = start;
        for (&run_start, run) in self.runs.range(start..end) {
            if run_start > cursor {
                gaps.push((cursor, run_start));
            }
            cursor = run.end;
        }
        if cursor < end {
            gaps.push((cursor, end));
        }
        for (from, to) in gaps {
            self.runs.insert(from, Run::fresh(to, Init::Unknown));
        }
    }

    /// Merges adjacent runs in the same state, from the run before `start`
    /// to the run at `end`.
    fn merge_around(&mut self, start: usize, end: usize) {
        let first = self.runs.range(..start).next_back().map_or(start, |(&key, _)| key);
        // Which runs join the run on their left, found in one pass (the
        // usual answer is none: nothing is allocated then).
        let mut merges = Vec::new();
        let mut runs = self.runs.range(first..=end);
        let Some((&key, run)) = runs.next() else {
            return;
        };
        let (mut left_key, mut left, mut left_end) = (key, run, run.end);
        for (&key, run) in runs {
            if left_end == key && left.same_state(run) {
                merges.push((left_key, key));
                left_end = run.end;
            } else {
                (left_key, left, left_end) = (key, run, run.end);
            }
        }
        for (left_key, key) in merges {
            if let Some(right) = self.runs.remove(&key)
                && let Some(left) = self.runs.get_mut(&left_key)
            {
                left.end = right.end;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(actor: Actor, epoch: u64, write: bool) -> Arc<Op> {
        Arc::new(Op {
            api: "test",
            actor,
            epoch,
            place: Arc::from("somewhere"),
            address: 0,
            len: 0,
            kind: if write { Kind::Write } else { Kind::Read },
        })
    }

    #[test]
    fn unordered_writes_conflict_and_ordered_ones_do_not() {
        let mut shadow = Shadow::default();
        let mut seen = Clock::default();
        let mut found = Findings::default();
        shadow.access((100, 50, 0), &op(1, 1, true), &seen, true, &mut found);
        assert!(found.conflicts.is_empty());
        // Actor 2 has not seen actor 1's write: a conflict on the overlap.
        shadow.access((120, 100, 0), &op(2, 1, true), &seen, true, &mut found);
        assert_eq!(found.conflicts.len(), 1);
        assert_eq!((found.conflicts[0].offset, found.conflicts[0].len), (0, 30));
        // Once actor 2's clock has seen both, a write is quiet.
        seen.tick(1);
        seen.tick(2);
        let mut quiet = Findings::default();
        shadow.access((100, 120, 0), &op(3, 1, true), &seen, true, &mut quiet);
        assert!(quiet.conflicts.is_empty(), "{quiet:?}");
        // One write over the whole range: one run again.
        assert_eq!(shadow.len(), 1);
    }

    #[test]
    fn reads_of_unwritten_bytes_are_reported_once() {
        let mut shadow = Shadow::default();
        shadow.reset(0, 100, Init::Unwritten("aclrtMalloc"));
        let seen = Clock::default();
        let mut found = Findings::default();
        shadow.access((10, 20, 0), &op(1, 1, true), &seen, true, &mut found);
        shadow.access((0, 50, 0), &op(1, 2, false), &seen, true, &mut found);
        let unwritten = found.unwritten.expect("reported");
        assert_eq!(
            (unwritten.offset, unwritten.len, unwritten.origin),
            (0, 50, "aclrtMalloc")
        );
        let mut again = Findings::default();
        shadow.access((0, 50, 0), &op(1, 3, false), &seen, true, &mut again);
        assert!(again.unwritten.is_none());
        shadow.forget(0, 100);
        assert_eq!(shadow.len(), 0);
    }

    #[test]
    fn a_free_is_checked_against_unordered_accesses_and_changes_no_run() {
        let mut shadow = Shadow::default();
        let seen = Clock::default();
        let mut found = Findings::default();
        shadow.access((100, 50, 0), &op(1, 1, true), &seen, false, &mut found);
        shadow.access((150, 50, 0), &op(2, 1, false), &seen, false, &mut found);
        assert!(found.is_empty(), "{found:?}");
        let runs = shadow.len();
        // The host frees 120..180, which neither access is ordered before.
        let mut freed = Findings::default();
        shadow.check_free((120, 60, 0), 0, &seen, &mut freed);
        let spans: Vec<_> = freed
            .conflicts
            .iter()
            .map(|c| (c.earlier.actor, c.offset, c.len))
            .collect();
        assert_eq!(spans, [(1, 0, 30), (2, 30, 30)]);
        assert_eq!(shadow.len(), runs);
        // Once the host has seen both, the same free is quiet.
        let mut host = Clock::default();
        host.tick(1);
        host.tick(2);
        let mut quiet = Findings::default();
        shadow.check_free((100, 100, 0), 0, &host, &mut quiet);
        assert!(quiet.is_empty(), "{quiet:?}");
    }

    #[test]
    fn resets_and_frees_over_partial_overlaps_keep_runs_disjoint() {
        let mut shadow = Shadow::default();
        let seen = Clock::default();
        shadow.reset(0, 100, Init::Unwritten("a"));
        shadow.reset(50, 100, Init::Unwritten("b"));
        // [0, 50) of the first, [50, 150) of the second.
        let mut found = Findings::default();
        shadow.access((0, 150, 0), &op(1, 1, false), &seen, true, &mut found);
        let unwritten = found.unwritten.expect("reported");
        assert_eq!((unwritten.offset, unwritten.len), (0, 150));
        // Another actor frees the middle: it conflicts with the read there,
        // and only the middle is forgotten.
        let mut freed = Findings::default();
        shadow.free((40, 20, 0), 2, &seen, &mut freed);
        assert_eq!(freed.conflicts.len(), 1);
        assert_eq!((freed.conflicts[0].offset, freed.conflicts[0].len), (0, 20));
        let mut after = Findings::default();
        shadow.free((0, 40, 0), 1, &seen, &mut after);
        shadow.free((60, 90, 0), 1, &seen, &mut after);
        assert!(after.conflicts.is_empty(), "the reader's own frees");
        assert_eq!(shadow.len(), 0);
    }

    #[test]
    fn distinct_ranges_cost_runs_not_bytes() {
        let mut shadow = Shadow::default();
        let seen = Clock::default();
        for i in 0..1000usize {
            let mut found = Findings::default();
            shadow.access(
                (i * 8192, 4096, 0),
                &op(1, i as u64 + 1, true),
                &seen,
                false,
                &mut found,
            );
        }
        assert_eq!(shadow.len(), 1000);
    }
}
