//! What a tag of a [`DevicePool`](crate::pool::DevicePool) keeps while
//! it sleeps ([`Asleep`], held by its [`Arena`](super::arena::Arena)):
//! the sizes to map again and the offloaded contents. Sleep and wake
//! themselves are in `sleep.rs`.

use crate::PinnedHostBuf;

/// What a sleeping tag keeps.
pub(in crate::pool) struct Asleep {
    /// Each segment's mapped bytes before sleep: what the wake maps again.
    pub(super) sizes: [usize; 2],
    /// The offloaded live ranges, when the tag was offloaded.
    pub(super) saved: Option<Saved>,
}

/// Live ranges of an arena copied to one pinned host buffer.
pub(super) struct Saved {
    /// `(class, offset, len)`, in the order of their bytes in `host`.
    pub(super) ranges: Vec<(usize, usize, usize)>,
    pub(super) host: PinnedHostBuf<u8>,
}

impl Asleep {
    /// Bytes of offloaded contents (the pinned buffer holding them may be
    /// larger: a spare reused).
    pub(in crate::pool) fn offloaded(&self) -> usize {
        self.saved
            .as_ref()
            .map_or(0, |saved| saved.ranges.iter().map(|&(_, _, len)| len).sum())
    }
}
