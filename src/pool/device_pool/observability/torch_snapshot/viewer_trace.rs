//! The recorded history in the model of PyTorch's memory viewer, which
//! has no sleep: there every live block lies inside a mapped segment at
//! every step (its segment view places each block in its segment, and
//! fails on one that has none).
//!
//! A sleep unmaps a tag's segments while its blocks stay live, and a wake
//! maps them again at the same addresses. So the viewer's trace shows a
//! live block inside an unmapped range as freed just before the unmap
//! (`free_requested`, `free_completed`, at the unmap's time) and
//! allocated again just after the map that brings its range back: true of
//! the device's memory, which is given back meanwhile. A block dropped
//! while its range is unmapped was already shown freed, so its own free
//! is left out, and it does not come back. The pool's own history
//! ([`PoolHistory`](crate::pool::PoolHistory), its replay and its
//! timeline) keeps the blocks allocated across the sleep, as the
//! statistics do.

use crate::pool::{HistoryAction, HistoryEvent};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// A live block: its size and tag.
type Live = (usize, Arc<str>);

/// `events` as the viewer's trace: the recorded events, with frees before
/// the unmaps of ranges holding live blocks and allocations after the
/// maps that bring them back. `live_at_end` lists the blocks live when
/// the history was taken (address, size), so that blocks allocated before
/// the first kept event are known too.
pub(in crate::pool) fn viewer_events<'a>(
    events: &'a [HistoryEvent],
    live_at_end: impl IntoIterator<Item = (usize, usize)>,
) -> Vec<Cow<'a, HistoryEvent>> {
    let mut live = live_before(events, live_at_end);
    let mut unmapped: BTreeMap<usize, Live> = BTreeMap::new();
    let mut out: Vec<Cow<'a, HistoryEvent>> = Vec::with_capacity(events.len());
    for event in events {
        match event.action {
            HistoryAction::Alloc => {
                live.insert(event.address, (event.size, Arc::clone(&event.tag)));
            }
            HistoryAction::FreeRequested | HistoryAction::FreeCompleted if unmapped.contains_key(&event.address) => {
                // Shown freed at the unmap already; it stays freed.
                if event.action == HistoryAction::FreeCompleted {
                    unmapped.remove(&event.address);
                }
                continue;
            }
            HistoryAction::FreeCompleted => {
                live.remove(&event.address);
            }
            HistoryAction::SegmentUnmap => {
                for (address, block) in take_inside(&mut live, event) {
                    out.push(Cow::Owned(synthetic(
                        HistoryAction::FreeRequested,
                        address,
                        &block,
                        event,
                    )));
                    out.push(Cow::Owned(synthetic(
                        HistoryAction::FreeCompleted,
                        address,
                        &block,
                        event,
                    )));
                    unmapped.insert(address, block);
                }
            }
            HistoryAction::SegmentMap => {
                out.push(Cow::Borrowed(event));
                for (address, block) in take_inside(&mut unmapped, event) {
                    out.push(Cow::Owned(synthetic(HistoryAction::Alloc, address, &block, event)));
                    live.insert(address, block);
                }
                continue;
            }
            _ => {}
        }
        out.push(Cow::Borrowed(event));
    }
    out
}

/// The blocks live before the first of `events`: those freed before the
/// history allocates them, and those live at the end that it never
/// allocates.
fn live_before(
    events: &[HistoryEvent],
    live_at_end: impl IntoIterator<Item = (usize, usize)>,
) -> BTreeMap<usize, Live> {
    let mut seen: HashSet<usize> = HashSet::new();
    let mut live: BTreeMap<usize, Live> = BTreeMap::new();
    for event in events {
        match event.action {
            HistoryAction::Alloc => {
                seen.insert(event.address);
            }
            HistoryAction::FreeCompleted if seen.insert(event.address) => {
                live.insert(event.address, (event.size, Arc::clone(&event.tag)));
            }
            _ => {}
        }
    }
    for (address, size) in live_at_end {
        if !seen.contains(&address) {
            live.insert(address, (size, Arc::from("")));
        }
    }
    live
}

/// The blocks of `blocks` that overlap the range of `event`, taken out.
fn take_inside(blocks: &mut BTreeMap<usize, Live>, event: &HistoryEvent) -> Vec<(usize, Live)> {
    let end = event.address.saturating_add(event.size);
    let inside: Vec<usize> = blocks
        .range(..end)
        .filter(|(address, (size, _))| address.saturating_add(*size) > event.address)
        .map(|(address, _)| *address)
        .collect();
    inside
        .into_iter()
        .filter_map(|address| Some((address, blocks.remove(&address)?)))
        .collect()
}

/// An event the viewer's model needs, at the time of `at`.
fn synthetic(action: HistoryAction, address: usize, (size, tag): &Live, at: &HistoryEvent) -> HistoryEvent {
    HistoryEvent {
        action,
        address,
        size: *size,
        stream: at.stream,
        tag: if tag.is_empty() {
            Arc::clone(&at.tag)
        } else {
            Arc::clone(tag)
        },
        time_ns: at.time_ns,
        free: 0,
        backtrace: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(action: HistoryAction, address: usize, size: usize) -> HistoryEvent {
        HistoryEvent {
            action,
            address,
            size,
            stream: 0,
            tag: Arc::from("t"),
            time_ns: 0,
            free: 0,
            backtrace: None,
        }
    }

    fn actions(events: &[Cow<'_, HistoryEvent>]) -> Vec<(HistoryAction, usize)> {
        events.iter().map(|event| (event.action, event.address)).collect()
    }

    #[test]
    fn a_block_live_across_a_sleep_is_freed_before_the_unmap_and_allocated_after_the_map() {
        use HistoryAction::{Alloc, FreeCompleted, FreeRequested, SegmentMap, SegmentUnmap, Sleep, Wake};
        let events = [
            event(SegmentMap, 0x1000, 0x1000),
            event(Alloc, 0x1000, 0x100),
            event(Alloc, 0x1100, 0x100),
            event(SegmentUnmap, 0x1000, 0x1000),
            event(Sleep, 0, 0),
            // Dropped while asleep: already shown freed.
            event(FreeRequested, 0x1100, 0x100),
            event(FreeCompleted, 0x1100, 0x100),
            event(SegmentMap, 0x1000, 0x1000),
            event(Wake, 0, 0),
        ];
        let trace = viewer_events(&events, [(0x1000, 0x100)]);
        assert_eq!(
            actions(&trace),
            [
                (SegmentMap, 0x1000),
                (Alloc, 0x1000),
                (Alloc, 0x1100),
                (FreeRequested, 0x1000),
                (FreeCompleted, 0x1000),
                (FreeRequested, 0x1100),
                (FreeCompleted, 0x1100),
                (SegmentUnmap, 0x1000),
                (Sleep, 0),
                (SegmentMap, 0x1000),
                (Alloc, 0x1000),
                (Wake, 0),
            ]
        );
    }

    #[test]
    fn blocks_from_before_the_kept_events_are_known_too() {
        use HistoryAction::{FreeCompleted, FreeRequested, SegmentUnmap};
        // One block freed later, one live at the end: both allocated before
        // the ring's first event.
        let events = [
            event(SegmentUnmap, 0x1000, 0x1000),
            event(FreeRequested, 0x1000, 0x100),
            event(FreeCompleted, 0x1000, 0x100),
        ];
        let trace = viewer_events(&events, [(0x1800, 0x100)]);
        assert_eq!(
            actions(&trace),
            [
                (FreeRequested, 0x1000),
                (FreeCompleted, 0x1000),
                (FreeRequested, 0x1800),
                (FreeCompleted, 0x1800),
                (SegmentUnmap, 0x1000),
            ]
        );
    }

    #[test]
    fn unmaps_of_free_memory_change_nothing() {
        use HistoryAction::{Alloc, SegmentMap, SegmentUnmap};
        let events = [
            event(SegmentMap, 0x1000, 0x2000),
            event(Alloc, 0x1000, 0x100),
            event(SegmentUnmap, 0x2000, 0x1000),
        ];
        assert_eq!(viewer_events(&events, [(0x1000, 0x100)]).len(), 3);
    }
}
