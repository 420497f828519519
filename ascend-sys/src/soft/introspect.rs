//! What tests can ask the software device: live resources and leaks.

use super::runtime::{self, State};

/// Counts and bytes of the live resources of the software device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Live {
    /// Live `aclrtMalloc*` allocations.
    pub device_allocations: usize,
    /// Bytes they reserve (after rounding and padding).
    pub device_bytes: u64,
    /// Live `aclrtMallocHost*` allocations.
    pub host_allocations: usize,
    /// Bytes they reserve (after rounding).
    pub host_bytes: u64,
}

impl Live {
    /// Whether nothing is live.
    pub fn is_empty(&self) -> bool {
        *self == Live::default()
    }
}

/// The live resources now (all zero if the software device has not started).
pub fn live() -> Live {
    runtime::lock_if_started().map_or_else(Live::default, |state| count(&state))
}

fn count(state: &State) -> Live {
    Live {
        device_allocations: state.device_allocations.len(),
        device_bytes: state.device_allocations.values().map(|a| a.size).sum(),
        host_allocations: state.host_allocations.len(),
        host_bytes: state.host_allocations.values().map(|a| a.size as u64).sum(),
    }
}

/// A readable list of every live resource (empty when nothing is live).
pub fn leak_report() -> String {
    runtime::lock_if_started().map_or_else(String::new, |state| report(&state))
}

fn report(state: &State) -> String {
    let mut lines = Vec::new();
    for (address, allocation) in &state.device_allocations {
        lines.push(format!(
            "device memory {address:#x}: {} bytes requested ({} reserved) on device {}",
            allocation.requested, allocation.size, allocation.device
        ));
    }
    for (address, allocation) in &state.host_allocations {
        lines.push(format!("host memory {address:#x}: {} bytes", allocation.size));
    }
    lines.join("\n")
}

/// Logs the leak report at `warn` level when something is still live.
pub(crate) fn log_leaks(state: &State) {
    let text = report(state);
    if !text.is_empty() {
        log::warn!("software device: resources still live at aclFinalize:\n{text}");
    }
}
