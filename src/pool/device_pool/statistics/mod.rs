//! What a [`DevicePool`](super::DevicePool) counts: [`PoolStats`] (its
//! totals, `stats.rs`), [`MemoryStats`] (torch's `memory_stats()`,
//! `torch_stats.rs`) and the counters kept under the pool's lock behind
//! them (`counters.rs`).

pub(super) mod counters;
pub(super) mod stats;
pub(super) mod torch_stats;

pub use stats::PoolStats;
pub use torch_stats::{MemoryStats, Stat, StatGroup};
