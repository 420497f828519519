//! The sharing tables behind their lock ([`Rank::Share`]).
//!
//! An operation that also needs the VMM tables (exporting a physical
//! allocation, withdrawing its export when it is freed) takes those first.

use super::Share;
use crate::soft::fail::SoftResult;
use crate::soft::lock_order::{self, Held, Rank};
use crate::soft::runtime;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static SHARE: RwLock<Share> = RwLock::new(Share::new());

/// The sharing tables, locked for writing.
pub(crate) type ShareGuard = Held<RwLockWriteGuard<'static, Share>>;

/// The sharing tables, locked for reading.
pub(crate) type ShareReader = Held<RwLockReadGuard<'static, Share>>;

/// The tables for writing, starting the software device on first use.
pub(crate) fn write() -> SoftResult<ShareGuard> {
    runtime::core()?;
    // A panic while holding the lock (a bug) must not take every later call
    // down with it: the tables are updated in single steps.
    Ok(lock_order::hold(Rank::Share, || {
        SHARE.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }))
}

/// The tables for reading, starting the software device on first use.
pub(crate) fn read() -> SoftResult<ShareReader> {
    runtime::core()?;
    Ok(read_started())
}

/// The tables for reading, if the software device has started.
pub(crate) fn read_if_started() -> Option<ShareReader> {
    runtime::core_if_started().map(|_| read_started())
}

fn read_started() -> ShareReader {
    lock_order::hold(Rank::Share, || {
        SHARE.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    })
}
