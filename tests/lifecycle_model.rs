//! State-machine property test of the safe API against a reference model.
//!
//! Random sequences of operations — VMM (reserve, allocate, map with or
//! without access, set access, read, write, retain, export and the refused
//! import in the same process, unmap, free, release), device buffers
//! (allocate, write, read, copy within and across devices, peer access,
//! free), pinned host buffers, host registrations and streams (upload,
//! download, memset, event records) — run on the real safe objects and on
//! a small model of what each must do, over both software devices. After
//! every step the software device's live counts (`soft::live()`) must equal
//! the model's, relative to a baseline taken when the case starts; every
//! refused step must fail with exactly the error the model predicts (a
//! Rust-side `InvalidArgument` or the runtime's code); every read must
//! return the model's bytes. Owners are disposed of in every order the
//! borrow rules allow, by `Drop` or by their explicit methods. A failure
//! shrinks to a minimal sequence.
//!
//! Software device only (it reads `soft::live()`); the only test of this
//! file, so no other thread changes the counts meanwhile. Cases: 512 of up to
//! 100 steps (a few seconds in a debug build), times
//! `ASCEND_TEST_SCALE` (default 1).

mod common;
#[path = "lifecycle_model/held.rs"]
mod held;
#[path = "lifecycle_model/ops.rs"]
mod ops;
#[path = "lifecycle_model/world.rs"]
mod world;

use ascend::Device;
use ascend::testing::on_software_device;
use common::on_software;
use proptest::test_runner::{Config, TestRunner};

/// Cases per run before scaling: fits well under a minute in a debug build
/// on two cores.
const CASES: u32 = 512;
/// Steps per case at most.
const MAX_STEPS: usize = 100;

fn scale() -> u32 {
    std::env::var("ASCEND_TEST_SCALE")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1u32)
        .max(1)
}

#[test]
fn safe_api_follows_the_reference_model() {
    if !on_software() {
        return;
    }
    let devices = Device::count().expect("device count");
    let config = Config {
        cases: CASES * scale(),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = ops::steps(devices, MAX_STEPS);
    let outcome = runner.run(&strategy, |steps| {
        // Checks that the case as a whole leaves nothing behind and
        // triggers no misuse, on top of the per-step checks.
        on_software_device(|| world::run(&steps))
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}
