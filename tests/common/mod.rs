//! Helpers shared by the safe crate's integration tests.
//!
//! Every test runs on the backend the environment selects: the software
//! device by default here, real hardware with `ASCEND_BACKEND=hardware`.
//! Assertions only the software device can answer (live-resource counts,
//! fault injection) go through [`software_only`], which skips them on
//! hardware.

#![allow(dead_code)]

pub mod gate;
pub mod peer;
pub mod pool;

use ascend::stream::Stream;
use ascend::{Backend, Device};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Device 0, with the guard that keeps the tests of this binary that take
/// it running one at a time (the misuse lists and the fault table are
/// process-wide).
pub fn serial_device() -> (MutexGuard<'static, ()>, Device) {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    (guard, device())
}

/// [`serial_device`] with no fault injected (on the software device, the
/// faults a failed test left behind are cleared first).
pub fn serial_device_without_faults() -> (MutexGuard<'static, ()>, Device) {
    let serial = serial_device();
    if on_software() {
        ascend::sys::soft::clear_faults();
    }
    serial
}

/// A new stream on `device`, to share.
pub fn shared_stream(device: &Device) -> Arc<Stream> {
    Arc::new(Stream::new(device).expect("a stream"))
}

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

/// Runs the `#[ignore]`d test `name` of this test binary alone in a fresh
/// process, on the backend this process runs on, and returns what it did.
pub fn child_output(name: &str) -> Output {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command.args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"]);
    if on_software() {
        command.env("ASCEND_BACKEND", "software");
    }
    command.output().expect("start the child test")
}

/// [`child_output`], checked: the child passed and printed
/// `child {name} done`.
pub fn run_child(name: &str) {
    let output = child_output(name);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child {name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(&format!("child {name} done")), "{stdout}");
}
