//! The words of a hazard report: both operations, the clocks, and the call
//! that would have ordered them.

use super::clock::HOST;
use super::shadow::{Conflict, Kind, Op, Unwritten};

/// `start..end (n bytes)`.
fn span(address: usize, len: usize) -> String {
    format!("{address:#x}..{:#x} ({len} bytes)", address.saturating_add(len))
}

fn verb(kind: Kind) -> &'static str {
    match kind {
        Kind::Read => "reads",
        Kind::Write => "writes",
        Kind::Free => "frees",
    }
}

/// A race: `current` and `conflict.earlier` touch the same bytes, one of
/// them writes, and nothing orders the earlier before the current one.
/// `seen`: how many of the earlier actor's operations the current one has
/// seen.
pub(crate) fn race(current: &Op, conflict: &Conflict, seen: u64) -> String {
    let earlier = &conflict.earlier;
    let kind = match (earlier.writes(), current.kind) {
        (_, Kind::Free) => "free while in use",
        (true, Kind::Write) => "write after write",
        (false, _) => "write after read",
        (true, Kind::Read) => "read after write",
    };
    let overlap = span(current.address.saturating_add(conflict.offset), conflict.len);
    let known = if seen == 0 {
        "none of its operations".to_string()
    } else {
        format!("its operations up to {seen}")
    };
    let advice = if current.kind == Kind::Free {
        format!(
            "synchronise {} (aclrtSynchronizeStream, or an event recorded after {}) before {}, \
             or free with aclrtFreeWithDevSync",
            earlier.place, earlier.api, current.api
        )
    } else if current.actor == HOST {
        format!(
            "synchronise {} (aclrtSynchronizeStream), or an event recorded on it after {} \
             (aclrtSynchronizeEvent), before {}",
            earlier.place, earlier.api, current.api
        )
    } else {
        format!(
            "record an event on {} after {} (aclrtRecordEvent) and make {} wait for it \
             (aclrtStreamWaitEvent) before {}",
            earlier.place, earlier.api, current.place, current.api
        )
    };
    format!(
        "race ({kind}): {} on {} {} {overlap}, which {} on {} {} ({}) and may still be doing: \
         {} has seen {known}, not its operation {}. Nothing orders the two; {advice}.",
        current.api,
        current.place,
        verb(current.kind),
        earlier.api,
        earlier.place,
        verb(earlier.kind),
        span(earlier.address, earlier.len),
        current.place,
        earlier.epoch,
    )
}
/// A read of bytes nothing wrote since they were allocated.
pub(crate) fn unwritten(current: &Op, unwritten: &Unwritten) -> String {
    format!(
        "uninitialized read: {} on {} reads {}, which nothing wrote since {} allocated them \
         (the call reads {}); write them first (a copy, aclrtMemset, or aclrtMemsetAsync)",
        current.api,
        current.place,
        span(current.address.saturating_add(unwritten.offset), unwritten.len),
        unwritten.origin,
        span(current.address, current.len),
    )
}
