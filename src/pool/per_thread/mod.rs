//! The per-thread machinery both caching pools ([`DevicePool`]'s thread
//! caches, [`PinnedPool`]'s shards) are built on: [`CacheSlot`], a slot a
//! thread holds without an atomic read-modify-write; thread tokens, by
//! which a pool picks a thread's slot; [`SharedTotal`], a byte total that
//! many holders count into through headroom of their own.
//!
//! [`DevicePool`]: super::DevicePool
//! [`PinnedPool`]: super::PinnedPool
//! [`CacheSlot`]: cache_slot::CacheSlot
//! [`SharedTotal`]: shared_total::SharedTotal

pub(super) mod cache_slot;
pub(super) mod shared_total;
pub(super) mod thread_token;
