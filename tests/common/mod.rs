//! Helpers shared by the safe crate's integration tests.
//!
//! Every test runs on the backend the environment selects: the software
//! device by default here, real hardware with `ASCEND_BACKEND=hardware`.
//! Assertions only the software device can answer (live-resource counts,
//! fault injection) go through [`software_only`], which skips them on
//! hardware.

#![allow(dead_code)]

use ascend::{Backend, Device};

/// Device 0, made current on this thread.
pub fn device() -> Device {
    Device::new(0).expect("device 0")
}

/// Whether the software device is active (software-only assertions run).
pub fn on_software() -> bool {
    ascend::backend()
        .map(|info| info.backend == Backend::Software)
        .unwrap_or(false)
}

/// Runs `check` only on the software device.
pub fn software_only(check: impl FnOnce()) {
    if on_software() {
        check();
    }
}
