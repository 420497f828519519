//! Memory coming and going: new memory starts with no history (and, for
//! device memory, unwritten); memory given back is checked as a write of
//! the host and its history forgotten. Raw bytes only: program addresses
//! are translated above the families (`compose/sanitize_ranges.rs`).

use super::shadow::Kind;
use super::tracker::Touch;

/// New memory at the raw bytes `[pointer, pointer + len)`: no history;
/// unwritten when `origin` names the call that allocated device memory.
pub(crate) fn allocated(pointer: usize, len: usize, origin: Option<&'static str>) {
    super::update(|state| state.allocated(&[(pointer, len, 0)], origin));
}

/// Device memory behind the `(pointer, len, offset)` runs starts afresh
/// (see `compose/sanitize_ranges.rs`, which translates a program address
/// into them).
pub(crate) fn allocated_runs(runs: &[(usize, usize, usize)], origin: Option<&'static str>) {
    super::update(|state| state.allocated(runs, origin));
}

/// The raw bytes `[pointer, pointer + len)` are gone: forgets them.
pub(crate) fn forget(pointer: usize, len: usize) {
    super::update(|state| state.forget(&[(pointer, len, 0)]));
}

/// `api` is about to give back `len` bytes at the program address
/// `address`, whose bytes start at `pointer`: reports queued work that may
/// still touch them, then forgets them.
pub(crate) fn freeing(address: usize, pointer: usize, len: usize, api: &'static str) {
    if !super::on() {
        return;
    }
    let bytes = [(pointer, len, 0)];
    let touch = Touch {
        address,
        len,
        kind: Kind::Free,
        device: false,
        bytes: &bytes,
    };
    // Checked, then forgotten (a free is never kept).
    super::with_tracker(|state, checks| state.host_op(checks, api, &[touch], super::held_by()));
}
