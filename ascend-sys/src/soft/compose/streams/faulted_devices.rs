//! The devices whose stream tasks failed on the device, for
//! `aclrtGetErrorVerbose`.
//!
//! A task failure other than a timed-out wait (a copy or memset that could
//! not reach its memory: `ACL_ERROR_RT_SYS_DMA`) marks its device faulted
//! until the device's last `aclrtResetDevice`, as a device fault lasts on
//! hardware until the device is reset. The set is behind a leaf lock of its
//! own (taken by a worker after its task, with no other lock held, and
//! under the family's lock by the teardown): see [`crate::soft::core::lock_order`].

use crate::soft::core::soft_result::Failure;
use crate::types::ACL_ERROR_RT_WAIT_TIMEOUT;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Each faulted device's first failure message.
static FAULTED: Mutex<BTreeMap<i32, String>> = Mutex::new(BTreeMap::new());

fn faulted() -> MutexGuard<'static, BTreeMap<i32, String>> {
    FAULTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Notes that a task of a stream of `device` failed with `failure`.
pub(crate) fn task_failed(device: i32, failure: &Failure) {
    if failure.code != ACL_ERROR_RT_WAIT_TIMEOUT {
        faulted().entry(device).or_insert_with(|| failure.message.clone());
    }
}

/// The message of `device`'s fault, if it has one.
pub(crate) fn of(device: i32) -> Option<String> {
    faulted().get(&device).cloned()
}

/// Forgets `device`'s fault (its last reset).
pub(crate) fn clear(device: i32) {
    faulted().remove(&device);
}
