//! Fault injection for the software fabric, in the software device's
//! style: arm a fault for the `nth` call of a function from now on; it
//! fires once. Three kinds: a call that fails with a chosen code without
//! doing anything, a call that times out (it waits the world's
//! `controlOperationTimeout`, then fails with hybm's `BM_TIMEOUT`, −7), and
//! a batch copy whose chosen entry fails while the others are moved, so the
//! batch returns `SMEM_PARTIAL_FAILED` (−2012).
//!
//! Faults are process-wide, as the fabric's state is: a test that injects
//! should run in a process of its own.

use crate::failure_value::FailureValue;
use crate::soft::core::last_error;
use crate::soft::core::result::SoftError;
use crate::types::BM_TIMEOUT;
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// What an armed fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The call does nothing and fails with this code (its failure value
    /// for calls that return no code; the code is the last error).
    Fail(i32),
    /// The call does nothing, waits `controlOperationTimeout` (nothing
    /// before `smem_bm_init`), then fails with hybm's `BM_TIMEOUT` (−7).
    Timeout,
    /// For `smem_bm_copy_batch`: entry `entry` fails with `code`, the other
    /// entries are moved, and the batch returns `SMEM_PARTIAL_FAILED`
    /// (or `code` when the batch has that entry only).
    BatchEntry {
        /// The entry that fails (0-based).
        entry: u32,
        /// Its code.
        code: i32,
    },
}

/// A fault that cannot be armed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot inject {fault:?} into {api:?} call {nth}: {reason}")]
pub struct FaultError {
    /// The function named.
    pub api: String,
    /// The call number given.
    pub nth: u64,
    /// The fault.
    pub fault: Fault,
    /// What is wrong.
    pub reason: &'static str,
}

#[derive(Debug)]
struct Armed {
    api: &'static str,
    remaining: u64,
    fault: Fault,
}

static ARMED: Mutex<Vec<Armed>> = Mutex::new(Vec::new());
static ANY: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The batch-entry fault of the batch copy running on this thread.
    static BATCH: Cell<Option<(u32, i32)>> = const { Cell::new(None) };
}

fn armed() -> std::sync::MutexGuard<'static, Vec<Armed>> {
    ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Makes the `nth` call (1 = the next one) of `api` from now on go wrong as
/// `fault` says, on the software fabric. Several faults may be armed; each
/// fires once.
///
/// # Errors
///
/// [`FaultError`] when `nth` is 0, `api` is not a bound function, the code
/// of [`Fault::Fail`] or [`Fault::BatchEntry`] is 0, or a
/// [`Fault::BatchEntry`] names another function than `smem_bm_copy_batch`.
///
/// ```
/// use memfabric_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// soft::inject_fault("smem_init", 1, soft::Fault::Fail(SMEM_ERROR)).unwrap();
/// assert_eq!(unsafe { smem_init(0) }, SMEM_ERROR);
/// assert_eq!(unsafe { smem_get_last_err_code() }, SMEM_ERROR);
/// assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
/// ```
pub fn inject_fault(api: &str, nth: u64, fault: Fault) -> Result<(), FaultError> {
    let refuse = |reason| {
        Err(FaultError {
            api: api.to_string(),
            nth,
            fault,
            reason,
        })
    };
    let Some(name) = crate::FUNCTION_NAMES.iter().copied().find(|name| *name == api) else {
        return refuse("not a bound MemFabric function");
    };
    if nth == 0 {
        return refuse("calls are counted from 1 (the next call)");
    }
    match fault {
        Fault::Fail(0) | Fault::BatchEntry { code: 0, .. } => return refuse("0 is success, not a fault"),
        Fault::BatchEntry { .. } if name != "smem_bm_copy_batch" => {
            return refuse("a batch-entry fault is for smem_bm_copy_batch");
        }
        _ => {}
    }
    armed().push(Armed {
        api: name,
        remaining: nth,
        fault,
    });
    ANY.store(true, Ordering::Release);
    Ok(())
}

/// Disarms every fault not yet fired.
pub fn clear_faults() {
    armed().clear();
    ANY.store(false, Ordering::Release);
}

/// The faults armed and not yet fired: function, calls to go, fault.
pub fn armed_faults() -> Vec<(String, u64, Fault)> {
    armed()
        .iter()
        .map(|armed| (armed.api.to_string(), armed.remaining, armed.fault))
        .collect()
}

/// Counts a call of `api`; the fault that fires on it, if any.
fn take(api: &str) -> Option<Fault> {
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    let mut armed = armed();
    let mut fired = None;
    armed.retain_mut(|entry| {
        if entry.api != api {
            return true;
        }
        entry.remaining -= 1;
        if entry.remaining == 0 && fired.is_none() {
            fired = Some(entry.fault);
            return false;
        }
        entry.remaining != 0
    });
    fired
}

/// The injected result of this call of `api`, or `None` to run it (a
/// batch-entry fault is then armed for the batch on this thread).
pub(crate) fn injected<R: FailureValue>(api: &'static str) -> Option<R> {
    let fault = take(api)?;
    let code = match fault {
        Fault::Fail(code) => code,
        Fault::Timeout => {
            let wait = crate::soft::bm::world::current().map(|world| world.control_timeout);
            if let Ok(wait) = wait {
                std::thread::sleep(wait);
            }
            BM_TIMEOUT
        }
        Fault::BatchEntry { entry, code } => {
            let _ = BATCH.try_with(|slot| slot.set(Some((entry, code))));
            return None;
        }
    };
    last_error::record(
        api,
        &SoftError {
            code,
            message: format!("injected fault {fault:?}"),
        },
    );
    Some(R::failure(code))
}

/// The batch-entry fault armed for the batch starting on this thread.
pub(crate) fn take_batch_entry() -> Option<(u32, i32)> {
    BATCH.try_with(Cell::take).ok().flatten()
}
