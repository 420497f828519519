//! The memory of a [`DevicePool`](super::DevicePool): each tag's
//! [`Arena`](arena::Arena) (a small and a large expandable segment), its
//! free lists (`free_list.rs`) and cache of whole oversize blocks
//! (`oversize.rs`), the release of cached memory (`garbage.rs`), the cap
//! on reserved bytes (`memory_limit.rs`), and sleep and wake (`sleep.rs`;
//! what a sleeping tag keeps: `asleep.rs`).

pub(super) mod arena;
mod asleep;
pub(super) mod free_list;
pub(super) mod garbage;
pub(super) mod memory_limit;
pub(super) mod oversize;
pub(super) mod sleep;
