//! The VMM tables behind their lock ([`Rank::Vmm`]): translation of mapped
//! addresses (copies) reads them from many threads at once; the calls that
//! change them write.

use super::Vmm;
use crate::soft::core::lock_order::{Held, Rank, RankedRw};
use crate::soft::core::soft_result::SoftResult;
use crate::soft::started;
use crossbeam_utils::sync::{ShardedLockReadGuard, ShardedLockWriteGuard};
use std::sync::LazyLock;

static VMM: LazyLock<RankedRw<Vmm>> = LazyLock::new(|| RankedRw::new(Vmm::default(), Rank::Vmm));

/// The VMM tables, locked for reading.
pub(crate) type VmmReader = Held<ShardedLockReadGuard<'static, Vmm>>;

/// The tables for writing, starting the software device on first use.
pub(crate) fn write() -> SoftResult<Held<ShardedLockWriteGuard<'static, Vmm>>> {
    started::core()?;
    Ok(VMM.write())
}

/// The tables for reading, starting the software device on first use.
pub(crate) fn read() -> SoftResult<VmmReader> {
    started::core()?;
    Ok(VMM.read())
}

/// The tables for reading, if the software device has started.
pub(crate) fn read_if_started() -> Option<VmmReader> {
    started::core_if_started().map(|_| VMM.read())
}
