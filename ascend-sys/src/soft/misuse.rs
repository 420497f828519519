//! Misuse the software device detected that the real runtime would not
//! report (it would corrupt memory or read stale data instead).

use std::sync::Mutex;

/// One detected misuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misuse {
    /// The call during which it was detected.
    pub api: &'static str,
    /// What was wrong.
    pub description: String,
}

static DETECTED: Mutex<Vec<Misuse>> = Mutex::new(Vec::new());

/// Records a misuse (and logs it at `warn` level).
pub(crate) fn record(api: &'static str, description: String) {
    log::warn!("software device detected misuse in {api}: {description}");
    DETECTED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(Misuse { api, description });
}

/// Every misuse detected so far in this process.
pub fn misuse() -> Vec<Misuse> {
    DETECTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
}

/// Returns and forgets the misuse detected so far.
pub fn take_misuse() -> Vec<Misuse> {
    std::mem::take(&mut *DETECTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}
