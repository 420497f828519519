//! `Stream::abort` (`aclrtStreamAbort`): work queued on the stream is
//! dropped, and the memory it would have touched is let go only once the
//! runtime says that work is over — never while it may still run, whatever
//! the abort or the synchronisation after it returns.
//!
//! Each test holds the work back behind a gate (a wait for an
//! `ACL_EVENT_SYNC` event a helper thread records after [`GATE_DELAY`]).
//! Timing and byte checks are software-device only (the runtime may finish
//! the task it was running); fault injection too. Faults are process-wide:
//! the tests of this file take one lock.

mod common;

use ascend::stream::{Event, EventFlags, Ordered, Stream};
use ascend::sys::{self, soft};
use ascend::{Device, DeviceBuf, ErrorCode, PinnedHostBuf};
use common::{on_software, software_only};
use std::time::{Duration, Instant};

const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;
const GATE_DELAY: Duration = Duration::from_millis(300);
const LEN: usize = 1 << 14;

fn pattern() -> Vec<u32> {
    (0..LEN as u32).map(|i| i.wrapping_mul(2_654_435_761) | 1).collect()
}

/// Runs `body` with a gate that a helper thread opens after [`GATE_DELAY`].
fn gated<R>(device: &Device, body: impl FnOnce(&Event) -> R) -> R {
    let gate = Event::with_flags(device, EventFlags::SYNC).expect("an event");
    let opener = Stream::new(device).expect("a stream");
    std::thread::scope(|threads| {
        threads.spawn(|| {
            std::thread::sleep(GATE_DELAY);
            gate.record(&opener).expect("open the gate");
        });
        body(&gate)
    })
}

/// An abort inside a scope: the scope ends without waiting for the gate,
/// and the dropped download never wrote the host buffer.
#[test]
fn a_scope_ends_once_the_abort_dropped_its_work() {
    let (_serial, device) = common::serial_device_without_faults();
    let stream = Stream::new(&device).unwrap();
    let on_device = DeviceBuf::from_slice(&device, &pattern()).unwrap();
    let mut host = PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap();
    let took = gated(&device, |gate| {
        let start = Instant::now();
        stream
            .scope(|s| {
                s.wait_event(gate)?;
                s.copy_to_host(&on_device, &mut host)?;
                stream.abort()
            })
            .unwrap();
        start.elapsed()
    });
    software_only(|| {
        assert!(took < GATE_DELAY, "the scope waited for the gate ({took:?})");
        assert!(host.iter().all(|&word| word == 0), "the aborted download ran");
    });
    // The stream works on.
    stream.scope(|s| s.copy_to_host(&on_device, &mut host)).unwrap();
    assert_eq!(&host[..], &pattern()[..]);
}

/// The abort fails (injected): nothing is let go on its account, so the
/// scope's end still waits for the held-back download, which runs.
#[test]
fn a_failed_abort_lets_nothing_go() {
    let (_serial, device) = common::serial_device_without_faults();
    if !on_software() {
        return;
    }
    for failing in ["aclrtStreamAbort", "aclrtSynchronizeStream"] {
        let stream = Stream::new(&device).unwrap();
        let data = pattern();
        let on_device = DeviceBuf::from_slice(&device, &data).unwrap();
        let mut host = PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap();
        let (aborted, took) = gated(&device, |gate| {
            let start = Instant::now();
            let mut aborted = None;
            stream
                .scope(|s| {
                    s.wait_event(gate)?;
                    s.copy_to_host(&on_device, &mut host)?;
                    soft::inject_fault(failing, 1, CODE).unwrap();
                    aborted = Some(stream.abort());
                    Ok(())
                })
                .unwrap();
            (aborted, start.elapsed())
        });
        let error = aborted.unwrap().unwrap_err();
        assert_eq!(error.code(), Some(ErrorCode(CODE)), "{failing}");
        if failing == "aclrtStreamAbort" {
            // Nothing was dropped: the scope waited for the gate, and the
            // download ran.
            assert!(took >= GATE_DELAY, "the scope ended before the work ({took:?})");
            assert_eq!(&host[..], &data[..]);
        }
        soft::clear_faults();
    }
}

/// An `Ordered` host buffer whose download is queued behind the gate: host
/// access waits for the download, unless an abort dropped it (then the
/// record after it counts as reached and access returns at once).
#[test]
fn ordered_memory_is_free_once_the_abort_completed_its_uses() {
    let (_serial, device) = common::serial_device_without_faults();
    let data = pattern();
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap());
    for abort in [true, false] {
        let held = common::shared_stream(&device);
        let mut out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap());
        let took = gated(&device, |gate| {
            held.wait_event(gate).unwrap();
            out.copy_from_device(&tensor, &held).unwrap();
            let start = Instant::now();
            if abort {
                held.abort().unwrap();
            }
            let bytes = out.get_mut().unwrap().to_vec();
            let took = start.elapsed();
            software_only(|| {
                if abort {
                    assert!(bytes.iter().all(|&word| word == 0), "the aborted download ran");
                } else {
                    assert_eq!(bytes, data, "host access did not wait for the download");
                }
            });
            took
        });
        software_only(|| {
            assert_eq!(took < GATE_DELAY, abort, "abort {abort}: host access took {took:?}");
        });
    }
}

/// The abort fails (injected): the `Ordered` buffer's use stays tracked,
/// and host access still waits for the download, which ran.
#[test]
fn ordered_memory_stays_tracked_when_the_abort_fails() {
    let (_serial, device) = common::serial_device_without_faults();
    if !on_software() {
        return;
    }
    let data = pattern();
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap());
    let held = common::shared_stream(&device);
    let mut out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, |gate| {
        held.wait_event(gate).unwrap();
        out.copy_from_device(&tensor, &held).unwrap();
        soft::inject_fault("aclrtStreamAbort", 1, CODE).unwrap();
        let error = held.abort().unwrap_err();
        assert_eq!(error.code(), Some(ErrorCode(CODE)));
        assert!(out.is_busy(), "the failed abort let the use go");
        assert_eq!(&out.get_mut().unwrap()[..], &data[..]);
    });
    soft::clear_faults();
}

/// A pool block whose upload is queued behind the gate, freed, and handed
/// out again for use on another stream: that use is ordered after the
/// upload, so it waits for the gate — unless an abort dropped the upload
/// (its record then counts as reached). When the abort fails (injected),
/// the new use still waits, and comes after the upload.
#[test]
fn a_pool_block_is_reused_after_its_aborted_work_only() {
    let (_serial, device) = common::serial_device_without_faults();
    let granule = common::pool::granule(&device);
    let pool = ascend::pool::DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let data: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8 | 1).collect();
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let failing = [None, Some("aclrtStreamAbort")];
    for fault in failing.into_iter().filter(|fault| fault.is_none() || on_software()) {
        let (first, second) = (common::shared_stream(&device), common::shared_stream(&device));
        let (took, bytes) = gated(&device, |gate| {
            first.wait_event(gate).unwrap();
            let block = pool.alloc(8192).unwrap();
            block.copy_from_host(&staging, &first).unwrap();
            drop(block); // the upload is still held back
            if let Some(api) = fault {
                soft::inject_fault(api, 1, CODE).unwrap();
            }
            let aborted = first.abort();
            assert_eq!(aborted.is_ok(), fault.is_none(), "{aborted:?}");
            let start = Instant::now();
            let reused = pool.alloc(8192).unwrap();
            reused.fill_bytes(0xEE, &second).unwrap();
            let bytes = common::pool::read_block(&device, &reused, &second);
            (start.elapsed(), bytes)
        });
        soft::clear_faults();
        assert!(bytes.iter().all(|&byte| byte == 0xEE), "the fill ran before the upload");
        software_only(|| {
            assert_eq!(
                took < GATE_DELAY,
                fault.is_none(),
                "fault {fault:?}: the reuse took {took:?}"
            );
        });
    }
}

/// A stream blocked in a value wait that nothing satisfies, with a write
/// queued after it: the abort ends the wait and drops the write (which
/// never lands), the flags are let go by the synchronisation `abort` makes,
/// and dropping the stream no longer waits [`Stream::VALUE_WAIT_LIMIT`].
#[test]
fn an_abort_ends_value_work_and_the_stream_drops_at_once() {
    use ascend::stream::{DeviceFlag, ValueCondition};
    let (_serial, device) = common::serial_device_without_faults();
    let never = DeviceFlag::new(&device, 0).unwrap();
    let written = DeviceFlag::new(&device, 5).unwrap();
    let stream = Stream::new(&device).unwrap();
    stream.wait_value(&never, 1, ValueCondition::GreaterOrEqual).unwrap();
    stream.write_value(&written, 6).unwrap();
    let start = Instant::now();
    stream.abort().unwrap();
    drop(stream);
    let took = start.elapsed();
    assert!(
        took < Stream::VALUE_WAIT_LIMIT,
        "the drop waited for the value wait ({took:?})"
    );
    software_only(|| assert_eq!(written.get().unwrap(), 5, "the dropped write landed"));
}
