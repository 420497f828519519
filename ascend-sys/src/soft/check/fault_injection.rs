//! Fault injection: make the Nth call of a named function fail with a
//! chosen code (software device only).
//!
//! Armed faults are checked by every call routed to the software device,
//! before it does anything, so an injected failure has no side effects —
//! exactly what a test of "this operation cleans up when step N fails"
//! needs.

use crate::failure_value::{FailureValue, missing_symbol};
use crate::soft::core::config::ConfigError;
use crate::types::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclError};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// Environment variable: faults armed when the software device starts, as
/// `api:nth:code` entries separated by commas, e.g.
/// `aclrtMalloc:3:207001,aclrtMapMem:1:107000`.
///
/// An entry that is malformed (not three `:`-separated fields, a field that
/// is not a number, `nth` or `code` 0) or names a function that is not bound
/// is a start-up error, like a bad value of any other variable: no fault is
/// armed, and every call routed to the software device returns
/// `ACL_ERROR_RT_INTERNAL_ERROR` with an `aclGetRecentErrMsg` naming the
/// variable and the entry ([`ConfigError::BadEntry`]).
pub const ENV_FAULTS: &str = "ASCEND_SOFT_FAULTS";

#[derive(Debug, Clone)]
struct Armed {
    api: String,
    /// Calls of `api` still to let through before failing.
    skip: u64,
    fault: Fault,
}

/// How an armed fault fails its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The call returns this code.
    Code(aclError),
    /// The call fails as it does when the loaded library does not export
    /// the function: `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, with the symbol
    /// recorded for [`crate::missing_symbol`].
    MissingSymbol,
}

impl Fault {
    /// The code the failed call returns.
    fn code(self) -> aclError {
        match self {
            Self::Code(code) => code,
            Self::MissingSymbol => ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        }
    }
}

/// The result of a call of `api` failed by the injected `fault`: its code
/// (NULL for a function returning a pointer), with the message recorded.
#[cold]
pub(crate) fn injected_fault<R: FailureValue>(api: &'static str, fault: Fault) -> R {
    match fault {
        Fault::Code(code) => {
            crate::error_msg::set(format!("{api}: injected fault (error {code})"));
            R::injected(code)
        }
        Fault::MissingSymbol => missing_symbol(api),
    }
}

static ARMED: Mutex<Vec<Armed>> = Mutex::new(Vec::new());
/// The fast path of every call routed to the software device: 0 unless
/// [`FAULTS_ARMED`] or [`MISSING_SEEN`].
static FLAGS: AtomicU8 = AtomicU8::new(FAULTS_ARMED);
/// A fault is armed (or the environment is unread).
const FAULTS_ARMED: u8 = 1;
/// A missing symbol was injected once: a thread may have one recorded,
/// which its next call forgets, as the loader's calls do.
const MISSING_SEEN: u8 = 2;
static ENV_READ: OnceLock<Result<(), ConfigError>> = OnceLock::new();

/// A fault specification that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad fault specification {spec:?}: {reason}")]
pub struct FaultError {
    /// The specification.
    pub spec: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// Makes the `nth` call (1 = the next one) of `api` from now on fail with
/// `code`, without doing anything. Several faults may be armed at once; each
/// fires once.
///
/// # Errors
///
/// [`FaultError`] when `nth` is 0, `code` is 0 (success is not a fault) or
/// `api` is not a bound AscendCL function name.
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// soft::inject_fault("aclrtGetDeviceCount", 1, ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
/// let mut count = 0;
/// assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_ERROR_RT_INTERNAL_ERROR);
/// assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
/// ```
pub fn inject_fault(api: &str, nth: u64, code: aclError) -> Result<(), FaultError> {
    validate(api, nth, code)?;
    read_env();
    arm(api, nth, Fault::Code(code));
    Ok(())
}

/// Makes the `nth` call (1 = the next one) of `api` from now on fail as
/// if the loaded library did not export `api` (an older CANN): it returns
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` and [`crate::missing_symbol`] names
/// `api`, exactly as the loader does for a missing symbol. For testing the
/// fallbacks of code that must run on several CANN versions.
///
/// # Errors
///
/// [`FaultError`] when `nth` is 0 or `api` is not a bound AscendCL
/// function name.
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// soft::inject_missing_symbol("aclrtGetDeviceCount", 1).unwrap();
/// let mut count = 0;
/// assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
/// assert_eq!(missing_symbol(), Some("aclrtGetDeviceCount"));
/// assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
/// assert_eq!(missing_symbol(), None, "a later call clears it");
/// ```
pub fn inject_missing_symbol(api: &str, nth: u64) -> Result<(), FaultError> {
    validate(api, nth, ACL_ERROR_RT_FEATURE_NOT_SUPPORT)?;
    read_env();
    FLAGS.fetch_or(MISSING_SEEN, Ordering::Release);
    arm(api, nth, Fault::MissingSymbol);
    Ok(())
}

/// Checks a fault specification.
fn validate(api: &str, nth: u64, code: aclError) -> Result<(), FaultError> {
    let error = |reason| FaultError {
        spec: format!("{api}:{nth}:{code}"),
        reason,
    };
    if nth == 0 {
        return Err(error("nth counts from 1"));
    }
    if code == 0 {
        return Err(error("code 0 is success, not a fault"));
    }
    if !crate::function_names::FUNCTION_NAMES.contains(&api) {
        return Err(error("not a bound AscendCL function"));
    }
    Ok(())
}

/// Arms a checked fault (no environment read: `read_env` calls this).
fn arm(api: &str, nth: u64, fault: Fault) {
    let mut armed = ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    armed.push(Armed {
        api: api.to_string(),
        skip: nth - 1,
        fault,
    });
    FLAGS.fetch_or(FAULTS_ARMED, Ordering::Release);
}

/// Disarms every fault not yet fired.
pub fn clear_faults() {
    read_env();
    ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    FLAGS.fetch_and(!FAULTS_ARMED, Ordering::Release);
}

/// Faults armed and not yet fired, as `(api, calls left before it fires,
/// code)` (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` for a missing symbol).
pub fn armed_faults() -> Vec<(String, u64, aclError)> {
    read_env();
    let armed = ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    armed
        .iter()
        .map(|a| (a.api.clone(), a.skip + 1, a.fault.code()))
        .collect()
}

/// Reads [`ENV_FAULTS`] once: arms every entry, or none when one entry is
/// malformed (the software device then refuses to start, see
/// [`env_problem`]).
fn read_env() -> &'static Result<(), ConfigError> {
    ENV_READ.get_or_init(|| {
        let Ok(text) = std::env::var(ENV_FAULTS) else {
            if ARMED.lock().map(|armed| armed.is_empty()).unwrap_or(false) {
                FLAGS.fetch_and(!FAULTS_ARMED, Ordering::Release);
            }
            return Ok(());
        };
        let parsed = parse_list(&text).map_err(|error| ConfigError::BadEntry {
            variable: ENV_FAULTS,
            value: text.clone(),
            entry: error.spec,
            reason: error.reason,
        })?;
        for (api, nth, code) in parsed {
            arm(api, nth, Fault::Code(code));
        }
        Ok(())
    })
}

/// Parses and checks every `api:nth:code` entry of a list, or returns the
/// first bad one.
fn parse_list(text: &str) -> Result<Vec<(&str, u64, aclError)>, FaultError> {
    let mut entries = Vec::new();
    for spec in text.split(',').map(str::trim).filter(|spec| !spec.is_empty()) {
        let bad = |reason| FaultError {
            spec: spec.to_string(),
            reason,
        };
        let [api, nth, code] = spec.split(':').map(str::trim).collect::<Vec<_>>()[..] else {
            return Err(bad("expected api:nth:code"));
        };
        let (Ok(nth), Ok(code)) = (nth.parse(), code.parse()) else {
            return Err(bad("nth and code must be numbers"));
        };
        validate(api, nth, code).map_err(|error| bad(error.reason))?;
        entries.push((api, nth, code));
    }
    Ok(entries)
}

/// Why the software device must not start because of [`ENV_FAULTS`]: the
/// first malformed entry, if any. Reads the variable on first use.
pub(crate) fn env_problem() -> Option<ConfigError> {
    read_env().as_ref().err().cloned()
}

/// Called on every software-device call: the injected fault if one for
/// `api` fires now. One load unless a fault is armed or a missing symbol
/// was ever injected.
#[inline]
pub(crate) fn take(api: &str) -> Option<Fault> {
    match FLAGS.load(Ordering::Acquire) {
        0 => None,
        flags => take_slowly(api, flags),
    }
}

/// [`take`] when a flag is up.
#[cold]
fn take_slowly(api: &str, flags: u8) -> Option<Fault> {
    if flags & MISSING_SEEN != 0 {
        // A call that runs has its symbol (one failed by a missing-symbol
        // fault records it again).
        crate::error_msg::forget_missing_symbol();
    }
    if flags & FAULTS_ARMED == 0 {
        return None;
    }
    read_env();
    let mut armed = ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut fired = None;
    for (index, fault) in armed.iter_mut().enumerate() {
        if fault.api == api {
            if fault.skip == 0 {
                fired = Some(index);
                break;
            }
            fault.skip -= 1;
        }
    }
    let fault = fired.map(|index| armed.remove(index).fault);
    if armed.is_empty() {
        FLAGS.fetch_and(!FAULTS_ARMED, Ordering::Release);
    }
    fault
}
