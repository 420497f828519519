//! The layer above the families, below the C entry points: what spans
//! several families. The data path (address translation in [`translate`],
//! byte moves in [`copy`], streams and events in [`streams`], the
//! sanitizer's checks of program ranges in [`sanitize_ranges`]) and the
//! allocators built on device memory (stream-ordered pools in
//! [`mem_pool`], managed memory in [`managed`], and the free of device
//! memory that also withdraws its IPC keys in [`device_free`]), and the
//! stream and device state callbacks in [`state_callbacks`].

pub(super) mod copy;
pub(super) mod device_free;
pub(super) mod managed;
pub(super) mod mem_pool;
pub(super) mod sanitize_ranges;
pub(super) mod state_callbacks;
pub(super) mod streams;
pub(super) mod translate;
