//! The VMM tables behind their lock ([`Rank::Vmm`]).
//!
//! A sharded lock: translation of mapped addresses (copies) reads the
//! tables from many threads at once without sharing a cache line; the
//! calls that change them take every shard.

use super::Vmm;
use crate::soft::fail::SoftResult;
use crate::soft::lock_order::{self, Held, Rank};
use crate::soft::runtime;
use crossbeam_utils::sync::{ShardedLock, ShardedLockReadGuard, ShardedLockWriteGuard};
use std::sync::LazyLock;

static VMM: LazyLock<ShardedLock<Vmm>> = LazyLock::new(|| ShardedLock::new(Vmm::default()));

/// The VMM tables, locked for writing.
pub(crate) type VmmGuard = Held<ShardedLockWriteGuard<'static, Vmm>>;

/// The VMM tables, locked for reading.
pub(crate) type VmmReader = Held<ShardedLockReadGuard<'static, Vmm>>;

/// The tables for writing, starting the software device on first use.
pub(crate) fn write() -> SoftResult<VmmGuard> {
    runtime::core()?;
    // A panic while holding the lock (a bug) must not take every later call
    // down with it: the tables are updated in single steps.
    Ok(lock_order::hold(Rank::Vmm, || {
        VMM.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }))
}

/// The tables for reading, starting the software device on first use.
pub(crate) fn read() -> SoftResult<VmmReader> {
    runtime::core()?;
    Ok(read_started())
}

/// The tables for reading, if the software device has started.
pub(crate) fn read_if_started() -> Option<VmmReader> {
    runtime::core_if_started().map(|_| read_started())
}

fn read_started() -> VmmReader {
    lock_order::hold(Rank::Vmm, || {
        VMM.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    })
}
