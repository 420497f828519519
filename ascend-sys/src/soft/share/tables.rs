//! The sharing tables behind their lock ([`Rank::Share`]). An operation
//! that also needs the VMM tables (exporting a physical allocation,
//! withdrawing its export when it is freed) takes those first.

use super::Share;
use crate::soft::core::lock_order::{Held, Rank, RankedRw};
use crate::soft::core::soft_result::SoftResult;
use crate::soft::started;
use crossbeam_utils::sync::{ShardedLockReadGuard, ShardedLockWriteGuard};
use std::sync::LazyLock;

static SHARE: LazyLock<RankedRw<Share>> = LazyLock::new(|| RankedRw::new(Share::new(), Rank::Share));

/// The sharing tables, locked for reading.
pub(crate) type ShareReader = Held<ShardedLockReadGuard<'static, Share>>;

/// The tables for writing, starting the software device on first use.
pub(crate) fn write() -> SoftResult<Held<ShardedLockWriteGuard<'static, Share>>> {
    started::core()?;
    Ok(SHARE.write())
}

/// The tables for reading, starting the software device on first use.
pub(crate) fn read() -> SoftResult<ShareReader> {
    started::core()?;
    Ok(SHARE.read())
}

/// The tables for reading, if the software device has started.
pub(crate) fn read_if_started() -> Option<ShareReader> {
    started::core_if_started().map(|_| SHARE.read())
}
