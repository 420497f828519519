//! Memory coming and going: new memory starts with no history (and, for
//! device memory, unwritten); memory given back is checked as a write of
//! the host and its history forgotten.

use super::shadow::Kind;
use super::tracker::Touch;
use crate::soft::compose::translate::Translator;

/// The bytes behind `[address, address + len)`, as `(pointer, len, offset)`
/// runs (`None` when it does not translate: the call itself will fail).
fn bytes_of(address: usize, len: usize) -> Option<Vec<(usize, usize, usize)>> {
    Translator::default()
        .resolve(address, len, "range")
        .ok()
        .map(|segments| segments.runs())
}

/// New memory at the raw bytes `[pointer, pointer + len)`: no history;
/// unwritten when `origin` names the call that allocated device memory.
pub(crate) fn allocated(pointer: usize, len: usize, origin: Option<&'static str>) {
    super::update(|state| state.allocated(&[(pointer, len, 0)], origin));
}

/// Device memory at the program address `address` starts afresh: new
/// (`aclrtMalloc*`: unwritten, `origin` names the call), or shared with
/// another process (`None`: what it writes there is not seen here).
pub(crate) fn allocated_device(address: usize, len: usize, origin: Option<&'static str>) {
    if !super::on() {
        return;
    }
    if let Some(bytes) = bytes_of(address, len) {
        super::update(|state| state.allocated(&bytes, origin));
    }
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
    super::with_tracker(|state, checks| state.host_op(checks, api, &[touch]));
}
