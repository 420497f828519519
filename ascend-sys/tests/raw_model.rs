//! The raw API against a model of its documented rules: random sequences of
//! C-named calls, legal and illegal, on the software device.
//!
//! Each case is a sequence of operations (`raw_model/ops.rs`): device
//! memory (`aclrtMalloc`/`aclrtFree`), pinned host memory
//! (`aclrtMallocHost`/`aclrtFreeHost`), the whole VMM lifecycle
//! (`aclrtMallocPhysical`, `aclrtFreePhysical`, `aclrtReserveMemAddress`,
//! `aclrtReleaseMemAddress`, `aclrtMapMem`, `aclrtMemMapNoAccess`,
//! `aclrtUnmapMem`, `aclrtMemSetAccess`, `aclrtMemGetAccess`,
//! `aclrtMemRetainAllocationHandle`) and synchronous copies and sets
//! (`aclrtMemcpy`, `aclrtMemset`) into mapped, unmapped, no-access and
//! freed memory. Arguments are drawn to be legal most of the time and
//! broken on purpose otherwise: bad sizes, bad device ids, NULL, freed,
//! unknown or interior pointers and handles, misaligned or overlapping
//! mappings, releases while mapped, copies past an end.
//!
//! The model (`raw_model/model.rs`) is independent plain Rust written from
//! `acl-behaviour.md` §4–§7 and `docs/runtime-choices.md`; it never calls
//! into the software device. For every call it predicts one exact code, and
//! the test asserts:
//!
//! - every call returns exactly the predicted code (an illegal call its
//!   documented error, a legal one success);
//! - data read back equals the bytes the model recorded (fresh memory is
//!   not promised to be zero: before a read, the harness writes zeros into
//!   the bytes nothing wrote and records them, so that no read is of
//!   uninitialised memory, which the sanitizer reports);
//! - returned handles, access flags and alignments are the documented ones;
//! - after every step, `soft::live()` equals the live counts at the start
//!   of the case plus the model's counts (allocations, reservations,
//!   mappings, physical allocations including ones freed while mapped, and
//!   their bytes after the documented rounding);
//! - tearing everything down (unmap, free each reference, release, free)
//!   succeeds call by call and returns the device to where it started.
//!
//! A failure shrinks to a minimal sequence: proptest shrinks it, then every
//! operation that can go while the sequence still fails is removed; the
//! panic prints the sequence, the step and the call that disagreed.
//! Targets are chosen by index modulo the live objects of a kind, so a
//! shrunk sequence replays identically. Each case starts with a few
//! constructive calls and the operation mix favours building state, and
//! the test asserts that the run reached every rule it claims to check
//! (`REQUIRED_EVENTS`: e.g. a deferred free, a refused release while
//! mapped, a copy across two adjacent mappings).
//!
//! Software device only (the counts come from `ascend_sys::soft`). The
//! number of cases is 512, times `ASCEND_TEST_SCALE` (default 1) for long
//! local runs; at scale 1 the file runs in a few seconds in a debug build.
//! Both tests take a file-local lock, because the live counts are
//! process-wide.

#[path = "raw_model/bytes.rs"]
mod bytes;
#[path = "raw_model/harness.rs"]
mod harness;
#[path = "raw_model/model.rs"]
mod model;
#[path = "raw_model/ops.rs"]
mod ops;

use ops::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::sync::{Mutex, MutexGuard};

/// Serialises the tests of this file: they compare process-wide counts.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `ASCEND_TEST_SCALE` (default 1).
fn scale() -> u32 {
    std::env::var("ASCEND_TEST_SCALE")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1u32)
        .max(1)
}

/// Most operations in one case.
const MAX_OPS: usize = 64;

/// Events every run of the random test must reach (counted by the harness).
const REQUIRED_EVENTS: &[&str] = &[
    "aclrtMalloc succeeded",
    "aclrtMalloc refused",
    "aclrtFree succeeded",
    "aclrtFree refused",
    "aclrtFreeHost succeeded",
    "aclrtFreeHost refused",
    "aclrtMallocPhysical succeeded",
    "aclrtMallocPhysical refused",
    "aclrtFreePhysical succeeded",
    "aclrtFreePhysical while mapped (deferred)",
    "aclrtFreePhysical refused",
    "aclrtReserveMemAddress succeeded",
    "aclrtReserveMemAddress refused",
    "aclrtReleaseMemAddress succeeded",
    "aclrtReleaseMemAddress while mapped refused",
    "aclrtMapMem succeeded",
    "aclrtMemMapNoAccess succeeded",
    "aclrtMapMem refused",
    "aclrtUnmapMem succeeded",
    "aclrtUnmapMem of an interior address refused",
    "aclrtMemSetAccess succeeded",
    "aclrtMemSetAccess refused",
    "aclrtMemGetAccess succeeded",
    "aclrtMemRetainAllocationHandle succeeded",
    "aclrtMemcpy to the device succeeded",
    "aclrtMemcpy across adjacent mappings succeeded",
    "aclrtMemcpy into a no-access mapping refused",
    "aclrtMemcpy to the host checked",
    "aclrtMemset succeeded",
];

/// Runs `ops` in a fresh world; the error names the step that disagreed.
fn run_case(env: &model::Env, contexts: &[ascend_sys::aclrtContext], ops: &[Op]) -> Result<(), String> {
    let mut world = harness::World::new(env.clone(), contexts.to_vec());
    for (step, op) in ops.iter().enumerate() {
        world
            .step(op)
            .and_then(|()| world.check_counts())
            .map_err(|failure| format!("step {step} {op:?}:\n{failure}"))?;
    }
    world.finish().map_err(|failure| format!("tearing down:\n{failure}"))
}

/// Removes operations from proptest's shrunk sequence one at a time for as
/// long as the sequence still fails (proptest's shrinking of a vector can
/// stop before every removable element is gone). Returns the sequence and
/// its failure.
fn minimise(env: &model::Env, contexts: &[ascend_sys::aclrtContext], mut ops: Vec<Op>) -> (Vec<Op>, String) {
    let mut reason = run_case(env, contexts, &ops).err().unwrap_or_default();
    let mut at = 0;
    while at < ops.len() {
        let mut fewer = ops.clone();
        fewer.remove(at);
        match run_case(env, contexts, &fewer) {
            Err(failure) => {
                ops = fewer;
                reason = failure;
            }
            Ok(()) => at += 1,
        }
    }
    (ops, reason)
}

#[test]
fn random_raw_call_sequences_follow_the_documented_rules() {
    let _serial = serial();
    let (env, contexts) = harness::setup();
    let config = Config {
        cases: 512 * scale(),
        failure_persistence: None,
        ..Config::default()
    };
    harness::take_coverage();
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&sequence(MAX_OPS), |ops| {
        run_case(&env, &contexts, &ops).map_err(TestCaseError::fail)
    });
    // Minimise while the devices are still set.
    let outcome = outcome.map_err(|error| match error {
        TestError::Fail(_, ops) => minimise(&env, &contexts, ops),
        other => (Vec::new(), other.to_string()),
    });
    harness::teardown(&contexts);
    match outcome {
        Ok(()) => {
            // The sequences must reach the rules this file claims to test,
            // not only the easy refusals.
            let coverage = harness::take_coverage();
            eprintln!("events over all cases: {coverage:#?}");
            let missing: Vec<&str> = REQUIRED_EVENTS
                .iter()
                .copied()
                .filter(|event| !coverage.contains_key(event))
                .collect();
            assert!(missing.is_empty(), "no case reached {missing:?}");
        }
        Err((ops, reason)) => panic!(
            "minimal failing sequence ({} operations):\n{ops:#?}\n{reason}",
            ops.len()
        ),
    }
}

/// One hand-written walk through the VMM ordering rules, through the same
/// harness: the model must agree with every step, including the refusals.
#[test]
fn the_vmm_ordering_rules_hold_step_by_step() {
    let _serial = serial();
    let (env, contexts) = harness::setup();
    let reservation_start = Spot::Reservation(0, Delta::Start);
    let mapping_start = Spot::Mapping(0, Delta::Start);
    let write = |seed| Op::Write {
        target: Target::Mapping(0),
        offset: Offset::Start,
        len: Len::Small(4000),
        host: HostSide::Pageable,
        seed,
        variant: CopyVariant::Normal,
    };
    let read = Op::Read {
        target: Target::Mapping(0),
        offset: Offset::Start,
        len: Len::Small(4000),
        host: HostSide::Pageable,
        variant: CopyVariant::Normal,
    };
    let ops = vec![
        Op::Reserve {
            granules: 2,
            odd: false,
            flags: 0,
            alignment: false,
            expect: Expect::None,
            null_out: false,
        },
        Op::MallocPhysical {
            granules: 1,
            odd: false,
            too_big: false,
            device: DevicePick::Id(0),
            attr: ascend_sys::ACL_MEM_HUGE,
            fault: PropFault::None,
            flags: false,
            null_out: false,
        },
        // A copy into reserved but unmapped memory is refused.
        write(1),
        Op::Map {
            at: reservation_start,
            handle: HandlePick::Live(0),
            size: MapSize::Exact,
            offset: false,
            flags: false,
            no_access: false,
        },
        write(2),
        read.clone(),
        // Release while mapped, and unmap of an interior address: refused.
        Op::Release(reservation_start),
        Op::Unmap(Spot::Mapping(0, Delta::Bytes(4096))),
        // Free while mapped: deferred, the bytes stay readable.
        Op::FreePhysical(HandlePick::Seen(0)),
        read.clone(),
        // The handle is spent: a second free is refused...
        Op::FreePhysical(HandlePick::Seen(0)),
        // ...until a retain through the mapping revives it.
        Op::Retain(Spot::Mapping(0, Delta::Bytes(100))),
        Op::FreePhysical(HandlePick::Seen(0)),
        Op::Unmap(mapping_start),
        Op::Release(reservation_start),
    ];
    let outcome = run_case(&env, &contexts, &ops);
    harness::teardown(&contexts);
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}
