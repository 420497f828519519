//! Streams, events, asynchronous and 2-D copies on the software device:
//! tasks run in order on each stream's worker, asynchronous calls return at
//! once, events order streams, `aclrtFreeHost` does not wait while the
//! `...WithDevSync` frees do, and every argument rule returns the real
//! runtime's code. Software device only.
//!
//! Tests here run in parallel threads of one process: each uses its own
//! streams and buffers, never blocks a default stream, and unblocks every
//! stream it blocks. Process-wide counts live in `soft_streams_process.rs`.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{
    Gate, destroy_event, destroy_stream, event_with_flag, free, malloc, plain_event, record, sync, sync_within,
    wait_event,
};
use soft_common::{holding_device, on_device_id as on_device, recent, software, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

/// Pinned host memory, filled with `fill`.
fn malloc_host(size: usize, fill: u8) -> *mut u8 {
    let mut ptr = null_mut();
    // SAFETY: `ptr` is a valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut ptr, size) }, ACL_SUCCESS);
    // SAFETY: the allocation holds at least `size` bytes.
    unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), fill, size) };
    ptr.cast()
}

fn free_host(ptr: *mut u8) {
    // SAFETY: `ptr` came from `malloc_host` and is freed once.
    assert_eq!(unsafe { aclrtFreeHost(ptr.cast()) }, ACL_SUCCESS);
}

/// Reads `len` bytes of device memory with a synchronous copy (which does
/// not wait for streams).
fn read(device_ptr: *mut c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` holds `len` bytes; `device_ptr` is a live allocation.
    let rc = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, device_ptr, len, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(rc, ACL_SUCCESS);
    out
}

/// Sets device memory synchronously.
fn set(device_ptr: *mut c_void, value: i32, len: usize) {
    // SAFETY: `device_ptr` is a live allocation of at least `len` bytes.
    assert_eq!(unsafe { aclrtMemset(device_ptr, len, value, len) }, ACL_SUCCESS);
}

/// Asserts that the sanitizer, when it runs `check`, reported a hazard
/// whose text starts with `start` while `watch` lived: the caller planted
/// it on purpose (the hazard is the behaviour under test).
fn assert_planted(watch: &soft::MisuseWatch, check: soft::Checks, start: &str) {
    if soft::sanitizer_checks().contains(check) {
        let seen = watch.seen();
        assert!(
            seen.iter().any(|misuse| misuse.description.starts_with(start)),
            "the sanitizer did not report the planted hazard {start:?}: {seen:#?}"
        );
    }
}

/// The start of the sanitizer's report of `aclrtSynchronizeEvent` on
/// `event`, which was never recorded.
fn never_recorded_sync(event: aclrtEvent) -> String {
    format!(
        "sync misuse: aclrtSynchronizeEvent on the host waits for event {:#x}, which was never recorded",
        event as usize
    )
}

fn host_slice<'a>(ptr: *mut u8, len: usize) -> &'a mut [u8] {
    // SAFETY: callers pass pinned allocations of at least `len` bytes that
    // no stream task touches while the slice is used.
    unsafe { std::slice::from_raw_parts_mut(ptr, len) }
}

fn create_stream() -> aclrtStream {
    let mut stream = null_mut();
    // SAFETY: `stream` is a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, ACL_SUCCESS);
    assert!(!stream.is_null());
    stream
}

fn query(event: aclrtEvent) -> aclrtEventRecordedStatus {
    let mut status = 99;
    // SAFETY: `status` is a valid out-pointer.
    assert_eq!(unsafe { aclrtQueryEventStatus(event, &mut status) }, ACL_SUCCESS);
    status
}

fn elapsed(start: aclrtEvent, end: aclrtEvent) -> Result<f32, aclError> {
    let mut ms = f32::NAN;
    // SAFETY: `ms` is a valid out-pointer.
    match unsafe { aclrtEventElapsedTime(&mut ms, start, end) } {
        ACL_SUCCESS => Ok(ms),
        code => Err(code),
    }
}

fn memset_async(ptr: *mut c_void, value: i32, count: usize, stream: aclrtStream) -> aclError {
    // SAFETY: callers pass live device or pinned memory of `count` bytes
    // (or deliberately bad arguments the call refuses without touching).
    unsafe { aclrtMemsetAsync(ptr, count, value, count, stream) }
}

fn copy_async(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: as `memset_async`; host sides stay alive until synchronised.
    unsafe { aclrtMemcpyAsync(dst, count, src, count, kind, stream) }
}

/// Misuse records (process-wide, from every test) of `api` whose
/// description mentions every one of `words`.
fn misuse_about(api: &str, words: &[&str]) -> usize {
    soft::misuse()
        .iter()
        .filter(|m| m.api == api && words.iter().all(|word| m.description.contains(word)))
        .count()
}

// ---- ordering and asynchrony -------------------------------------------------

#[test]
fn tasks_on_one_stream_run_in_order() {
    on_device(0, || {
        const N: usize = 64 * 1024;
        let (a, b) = (malloc(N), malloc(N));
        let out = malloc_host(N, 0);
        let stream = create_stream();
        assert_eq!(memset_async(a, 0x11, N, stream), ACL_SUCCESS);
        assert_eq!(copy_async(b, a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, stream), ACL_SUCCESS);
        assert_eq!(memset_async(a, 0x22, N, stream), ACL_SUCCESS);
        assert_eq!(
            copy_async(out.cast(), b, N, ACL_MEMCPY_DEVICE_TO_HOST, stream),
            ACL_SUCCESS
        );
        assert_eq!(memset_async(b, 0x33, N, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(read(a, N).iter().all(|&x| x == 0x22));
        assert!(read(b, N).iter().all(|&x| x == 0x33));
        assert!(host_slice(out, N).iter().all(|&x| x == 0x11));
        destroy_stream(stream);
        free_host(out);
        free(a);
        free(b);
    });
}

#[test]
fn asynchronous_calls_return_before_the_work_runs() {
    on_device(0, || {
        const N: usize = 4096;
        let buf = malloc(N);
        set(buf, 0, N);
        let stream = create_stream();
        let gate = Gate::block(stream);
        let done = plain_event();
        let started = Instant::now();
        assert_eq!(memset_async(buf, 0xAB, N, stream), ACL_SUCCESS);
        assert_eq!(record(done, stream), ACL_SUCCESS);
        assert!(started.elapsed() < Duration::from_secs(1), "the calls must not wait");
        // The stream is blocked: nothing ran yet.
        assert!(read(buf, N).iter().all(|&x| x == 0));
        assert_eq!(query(done), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert!(recent().contains("timeout"));
        gate.open();
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(read(buf, N).iter().all(|&x| x == 0xAB));
        assert_eq!(query(done), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        destroy_event(done);
        destroy_stream(stream);
        free(buf);
    });
}

#[test]
fn a_stream_waits_for_an_event_recorded_on_another_stream() {
    on_device(0, || {
        const N: usize = 8192;
        let (x, y) = (malloc(N), malloc(N));
        set(x, 0, N);
        set(y, 0, N);
        let (producer, consumer) = (create_stream(), create_stream());
        let gate = Gate::block(producer);
        let produced = plain_event();
        assert_eq!(memset_async(x, 0x5A, N, producer), ACL_SUCCESS);
        assert_eq!(record(produced, producer), ACL_SUCCESS);
        assert_eq!(wait_event(consumer, produced), ACL_SUCCESS);
        assert_eq!(copy_async(y, x, N, ACL_MEMCPY_DEVICE_TO_DEVICE, consumer), ACL_SUCCESS);
        // The consumer is held by the producer's event.
        assert_eq!(sync_within(consumer, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        // A synchronous copy does not wait for streams: this read races the
        // held-back copy into `y` on purpose, and the sanitizer reports it.
        let watch = soft::MisuseWatch::start();
        assert!(read(y, N).iter().all(|&v| v == 0));
        gate.open();
        assert_planted(
            &watch,
            soft::Checks::RACE,
            &format!(
                "race (read after write): aclrtMemcpy on the host reads {:#x}..",
                y as usize
            ),
        );
        assert_eq!(sync(consumer), ACL_SUCCESS);
        assert!(read(y, N).iter().all(|&v| v == 0x5A));
        // SAFETY: a live event.
        assert_eq!(unsafe { aclrtSynchronizeEvent(produced) }, ACL_SUCCESS);
        destroy_event(produced);
        destroy_stream(producer);
        destroy_stream(consumer);
        free(x);
        free(y);
    });
}

#[test]
fn elapsed_time_is_non_negative_and_monotone() {
    on_device(0, || {
        const N: usize = 4 << 20;
        let buf = malloc(N);
        let stream = create_stream();
        let marks = [plain_event(), plain_event(), plain_event()];
        assert_eq!(record(marks[0], stream), ACL_SUCCESS);
        assert_eq!(memset_async(buf, 1, N, stream), ACL_SUCCESS);
        assert_eq!(record(marks[1], stream), ACL_SUCCESS);
        assert_eq!(memset_async(buf, 2, N, stream), ACL_SUCCESS);
        assert_eq!(record(marks[2], stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        let first = elapsed(marks[0], marks[1]).expect("both reached");
        let both = elapsed(marks[0], marks[2]).expect("both reached");
        assert!(first >= 0.0, "{first}");
        assert!(both >= first, "{both} < {first}");
        assert!(elapsed(marks[2], marks[0]).expect("both reached") <= 0.0);
        assert_eq!(elapsed(marks[1], marks[1]), Ok(0.0));
        for event in marks {
            destroy_event(event);
        }
        destroy_stream(stream);
        free(buf);
    });
}

#[test]
fn elapsed_time_needs_two_reached_records() {
    on_device(0, || {
        let stream = create_stream();
        let (start, end, never) = (plain_event(), plain_event(), plain_event());
        assert_eq!(record(start, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        // Never recorded: the runtime's "event recorder null".
        assert_eq!(elapsed(start, never), Err(ACL_ERROR_RT_INTERNAL_ERROR));
        assert!(recent().contains("never been recorded"));
        // Recorded but not reached yet.
        let gate = Gate::block(stream);
        assert_eq!(record(end, stream), ACL_SUCCESS);
        assert_eq!(elapsed(start, end), Err(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID));
        gate.open();
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(elapsed(start, end).expect("both reached") >= 0.0);
        // NULL arguments: the ACL layer.
        let mut ms = 0.0f32;
        // SAFETY: NULL arguments are refused before any use.
        unsafe {
            assert_eq!(aclrtEventElapsedTime(null_mut(), start, end), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtEventElapsedTime(&mut ms, null_mut(), end), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtEventElapsedTime(&mut ms, start, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
        }
        for event in [start, end, never] {
            destroy_event(event);
        }
        destroy_stream(stream);
    });
}

#[test]
fn events_before_their_first_record() {
    on_device(0, || {
        let classic = plain_event();
        let mut ex = null_mut();
        // SAFETY: `ex` is a valid out-pointer.
        assert_eq!(
            unsafe { aclrtCreateEventExWithFlag(&mut ex, ACL_EVENT_SYNC) },
            ACL_SUCCESS
        );
        // Synchronising an event never recorded returns at once (the
        // sanitizer reports both calls, planted on purpose).
        let watch = soft::MisuseWatch::start();
        // SAFETY: live events.
        unsafe {
            assert_eq!(aclrtSynchronizeEvent(classic), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeEvent(ex), ACL_SUCCESS);
        }
        for event in [classic, ex] {
            assert_planted(&watch, soft::Checks::SYNC, &never_recorded_sync(event));
        }
        // Status: Ex events are complete before their first record, the
        // others are not ready.
        assert_eq!(query(classic), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        assert_eq!(query(ex), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        let stream = create_stream();
        // Waiting for an Ex event never recorded is a no-op (the sanitizer
        // reports it, planted on purpose); for a classic event without
        // ACL_EVENT_SYNC it is refused.
        let watch = soft::MisuseWatch::start();
        assert_eq!(wait_event(stream, ex), ACL_SUCCESS);
        assert_planted(
            &watch,
            soft::Checks::SYNC,
            &format!(
                "sync misuse: stream {:#x} (device 0) waits for event {:#x}, which was never recorded",
                stream as usize, ex as usize
            ),
        );
        assert_eq!(sync_within(stream, 1000), ACL_SUCCESS);
        assert_eq!(wait_event(stream, classic), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("aclrtRecordEvent"));
        assert_eq!(record(classic, stream), ACL_SUCCESS);
        assert_eq!(record(ex, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(query(classic), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        assert_eq!(query(ex), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        // Recorded and reached: a wait is satisfied at once.
        assert_eq!(wait_event(stream, classic), ACL_SUCCESS);
        assert_eq!(sync_within(stream, 1000), ACL_SUCCESS);
        destroy_event(classic);
        destroy_event(ex);
        destroy_stream(stream);
    });
}

#[test]
fn event_flags_are_checked() {
    on_device(0, || {
        let mut event = null_mut();
        // SAFETY: `event` is a valid out-pointer; NULL out-pointers are
        // refused before any write.
        unsafe {
            assert_eq!(aclrtCreateEvent(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtCreateEventWithFlag(null_mut(), ACL_EVENT_SYNC),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtCreateEventExWithFlag(null_mut(), ACL_EVENT_SYNC),
                ACL_ERROR_INVALID_PARAM
            );
            for bad in [
                0,
                0x80,
                ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC,
                ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_TIME_LINE,
                ACL_EVENT_IPC,
            ] {
                assert_eq!(
                    aclrtCreateEventWithFlag(&mut event, bad),
                    ACL_ERROR_RT_PARAM_INVALID,
                    "{bad:#x}"
                );
            }
            for bad in [
                0,
                0x80,
                ACL_EVENT_EXTERNAL,
                ACL_EVENT_DEVICE_USE_ONLY,
                ACL_EVENT_IPC | ACL_EVENT_SYNC,
            ] {
                assert_eq!(
                    aclrtCreateEventExWithFlag(&mut event, bad),
                    ACL_ERROR_RT_PARAM_INVALID,
                    "{bad:#x}"
                );
            }
            for good in [
                ACL_EVENT_IPC,
                ACL_EVENT_SYNC,
                ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC,
                ACL_EVENT_CAPTURE_STREAM_PROGRESS,
            ] {
                assert_eq!(aclrtCreateEventExWithFlag(&mut event, good), ACL_SUCCESS);
                assert_eq!(aclrtDestroyEvent(event), ACL_SUCCESS);
            }
        }
        let stream = create_stream();
        // Without ACL_EVENT_SYNC a stream cannot wait for an event.
        let timeline = event_with_flag(ACL_EVENT_TIME_LINE);
        assert_eq!(wait_event(stream, timeline), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(record(timeline, stream), ACL_SUCCESS);
        // Device-only events cannot be used from the host.
        let device_only = event_with_flag(ACL_EVENT_DEVICE_USE_ONLY);
        assert_eq!(record(device_only, stream), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(wait_event(stream, device_only), ACL_ERROR_RT_PARAM_INVALID);
        // External events cannot be synchronised, queried or timed.
        let external = event_with_flag(ACL_EVENT_EXTERNAL);
        let mut status = 0;
        let mut ms = 0.0f32;
        // SAFETY: live events; valid out-pointers.
        unsafe {
            assert_eq!(aclrtSynchronizeEvent(external), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
            assert_eq!(
                aclrtQueryEventStatus(external, &mut status),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            assert_eq!(
                aclrtEventElapsedTime(&mut ms, timeline, external),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            assert_eq!(aclrtQueryEventStatus(timeline, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtQueryEventStatus(null_mut(), &mut status), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtSynchronizeEvent(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtRecordEvent(null_mut(), stream), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtStreamWaitEvent(stream, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtDestroyEvent(null_mut()), ACL_ERROR_INVALID_PARAM);
        }
        assert_eq!(sync(stream), ACL_SUCCESS);
        for event in [timeline, device_only, external] {
            destroy_event(event);
        }
        destroy_stream(stream);
    });
}

#[test]
fn stream_creation_rules() {
    on_device(0, || {
        let mut stream = null_mut();
        // SAFETY: valid out-pointers; NULL ones are refused before any write.
        unsafe {
            assert_eq!(aclrtCreateStream(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtCreateStreamWithConfig(null_mut(), 0, 0), ACL_ERROR_INVALID_PARAM);
            // Priority is reserved (clamped), unknown flag bits are ignored,
            // hint flags are accepted.
            for (priority, flag) in [
                (0, 0),
                (7, ACL_STREAM_FAST_LAUNCH),
                (100, ACL_STREAM_FAST_SYNC | ACL_STREAM_HUGE),
                (u32::MAX, 0x1000),
            ] {
                assert_eq!(aclrtCreateStreamWithConfig(&mut stream, priority, flag), ACL_SUCCESS);
                assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
            }
            assert_eq!(
                aclrtCreateStreamWithConfig(&mut stream, 0, ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_FAST_LAUNCH),
                ACL_ERROR_RT_PARAM_INVALID
            );
            for unsupported in [
                ACL_STREAM_PERSISTENT,
                ACL_STREAM_CPU_SCHEDULE,
                ACL_STREAM_DEVICE_USE_ONLY,
            ] {
                assert_eq!(
                    aclrtCreateStreamWithConfig(&mut stream, 0, unsupported),
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT
                );
            }
            assert_eq!(aclrtDestroyStream(null_mut()), ACL_ERROR_INVALID_PARAM);
        }
    });
}

#[test]
fn calls_that_need_a_context_fail_without_one() {
    // Handles made on a device, used from a thread without one.
    // This thread keeps the device (and so the handles) alive throughout.
    holding_device(0, || {
        let (stream, event) = on_device(0, || (create_stream() as usize, plain_event() as usize));
        without_device(|| {
            let (stream, event) = (stream as aclrtStream, event as aclrtEvent);
            let mut out = null_mut();
            let (mut a, b) = ([0u8; 16], [1u8; 16]);
            // SAFETY: valid out-pointers and host buffers.
            unsafe {
                assert_eq!(aclrtCreateStream(&mut out), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtCreateEvent(&mut out), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtSynchronizeStream(stream), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtSynchronizeDeviceWithTimeout(10), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtDestroyStream(stream), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtRecordEvent(event, stream), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(aclrtStreamWaitEvent(null_mut(), event), ACL_ERROR_RT_CONTEXT_NULL);
                assert_eq!(
                    aclrtMemcpyAsync(
                        a.as_mut_ptr().cast(),
                        16,
                        b.as_ptr().cast(),
                        16,
                        ACL_MEMCPY_DEFAULT,
                        null_mut()
                    ),
                    ACL_ERROR_RT_CONTEXT_NULL
                );
                assert_eq!(
                    aclrtMemsetAsync(a.as_mut_ptr().cast(), 16, 0, 16, null_mut()),
                    ACL_ERROR_RT_CONTEXT_NULL
                );
                assert_eq!(
                    aclrtMemcpy2d(a.as_mut_ptr().cast(), 4, b.as_ptr().cast(), 4, 4, 4, ACL_MEMCPY_DEFAULT),
                    ACL_ERROR_RT_CONTEXT_NULL
                );
                assert_eq!(
                    aclrtMemcpy2dAsync(
                        a.as_mut_ptr().cast(),
                        4,
                        b.as_ptr().cast(),
                        4,
                        4,
                        4,
                        ACL_MEMCPY_DEFAULT,
                        stream
                    ),
                    ACL_ERROR_RT_CONTEXT_NULL
                );
                // Events need no context to be synchronised or queried.
                // (Never recorded: the sanitizer reports the call, planted
                // on purpose.)
                let watch = soft::MisuseWatch::start();
                assert_eq!(aclrtSynchronizeEvent(event), ACL_SUCCESS);
                assert_planted(&watch, soft::Checks::SYNC, &never_recorded_sync(event));
            }
            assert_eq!(query(event), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        });
        on_device(0, || {
            destroy_stream(stream as aclrtStream);
            destroy_event(event as aclrtEvent);
        });
    });
}

#[test]
fn stale_and_unknown_handles_are_refused() {
    on_device(0, || {
        let stream = create_stream();
        let event = plain_event();
        let buf = malloc(64);
        destroy_stream(stream);
        destroy_event(event);
        let live_stream = create_stream();
        let live_event = plain_event();
        let bogus = 0x1234usize as aclrtStream;
        let mut status = 0;
        let mut ms = 0.0f32;
        for bad_stream in [stream, bogus, live_event] {
            assert_eq!(sync(bad_stream), ACL_ERROR_RT_INVALID_HANDLE);
            assert!(recent().contains("not a live stream"));
            assert_eq!(sync_within(bad_stream, 10), ACL_ERROR_RT_INVALID_HANDLE);
            // SAFETY: handles are validated before use.
            assert_eq!(unsafe { aclrtDestroyStream(bad_stream) }, ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(memset_async(buf, 0, 64, bad_stream), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(
                copy_async(buf, buf, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, bad_stream),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            assert_eq!(record(live_event, bad_stream), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(wait_event(bad_stream, live_event), ACL_ERROR_RT_INVALID_HANDLE);
        }
        for bad_event in [event, bogus, live_stream] {
            assert_eq!(record(bad_event, live_stream), ACL_ERROR_RT_INVALID_HANDLE);
            assert!(recent().contains("not a live event"));
            assert_eq!(wait_event(live_stream, bad_event), ACL_ERROR_RT_INVALID_HANDLE);
            // SAFETY: handles are validated before use; valid out-pointers.
            unsafe {
                assert_eq!(aclrtSynchronizeEvent(bad_event), ACL_ERROR_RT_INVALID_HANDLE);
                assert_eq!(
                    aclrtQueryEventStatus(bad_event, &mut status),
                    ACL_ERROR_RT_INVALID_HANDLE
                );
                assert_eq!(aclrtDestroyEvent(bad_event), ACL_ERROR_RT_INVALID_HANDLE);
                assert_eq!(
                    aclrtEventElapsedTime(&mut ms, bad_event, live_event),
                    ACL_ERROR_RT_INVALID_HANDLE
                );
                assert_eq!(
                    aclrtEventElapsedTime(&mut ms, live_event, bad_event),
                    ACL_ERROR_RT_INVALID_HANDLE
                );
            }
        }
        destroy_stream(live_stream);
        destroy_event(live_event);
        free(buf);
    });
}

#[test]
fn destroying_a_stream_waits_for_its_queued_work() {
    on_device(0, || {
        const N: usize = 4096;
        let buf = malloc(N);
        set(buf, 0, N);
        let stream = create_stream();
        let gate = Gate::block(stream);
        assert_eq!(memset_async(buf, 0xCD, N, stream), ACL_SUCCESS);
        let started = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
                std::thread::sleep(Duration::from_millis(60));
                gate.open();
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
            });
            destroy_stream(stream);
        });
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(
            read(buf, N).iter().all(|&x| x == 0xCD),
            "queued work ran before the destroy returned"
        );
        assert_eq!(sync(stream), ACL_ERROR_RT_INVALID_HANDLE);
        free(buf);
    });
}

#[test]
fn null_stream_is_the_default_stream() {
    on_device(1, || {
        const N: usize = 1024;
        let buf = malloc(N);
        let host = malloc_host(N, 0);
        let done = plain_event();
        assert_eq!(memset_async(buf, 0x42, N, null_mut()), ACL_SUCCESS);
        assert_eq!(
            copy_async(host.cast(), buf, N, ACL_MEMCPY_DEVICE_TO_HOST, null_mut()),
            ACL_SUCCESS
        );
        assert_eq!(record(done, null_mut()), ACL_SUCCESS);
        assert_eq!(sync(null_mut()), ACL_SUCCESS);
        assert!(host_slice(host, N).iter().all(|&x| x == 0x42));
        assert_eq!(query(done), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        assert_eq!(memset_async(buf, 0x43, N, null_mut()), ACL_SUCCESS);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSynchronizeDevice() }, ACL_SUCCESS);
        assert!(read(buf, N).iter().all(|&x| x == 0x43));
        destroy_event(done);
        free_host(host);
        free(buf);
    });
}

#[test]
fn a_stream_of_another_device_is_refused_with_107003() {
    software();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
                let stream = create_stream();
                let event = plain_event();
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(1) }, ACL_SUCCESS);
                let buf = malloc(256);
                let host = malloc_host(256, 0);
                assert_eq!(memset_async(buf, 1, 256, stream), ACL_ERROR_RT_STREAM_CONTEXT);
                assert!(recent().contains("belongs to device 0"));
                assert_eq!(
                    copy_async(host.cast(), buf, 256, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                    ACL_ERROR_RT_STREAM_CONTEXT
                );
                // SAFETY: live memory; a handle.
                let rc =
                    unsafe { aclrtMemcpy2dAsync(buf, 16, host.cast(), 16, 16, 16, ACL_MEMCPY_HOST_TO_DEVICE, stream) };
                assert_eq!(rc, ACL_ERROR_RT_STREAM_CONTEXT);
                assert_eq!(record(event, stream), ACL_ERROR_RT_STREAM_CONTEXT);
                let sync_event = event_with_flag(ACL_EVENT_SYNC);
                assert_eq!(wait_event(stream, sync_event), ACL_ERROR_RT_STREAM_CONTEXT);
                // SAFETY: a live handle.
                assert_eq!(unsafe { aclrtDestroyStream(stream) }, ACL_ERROR_RT_STREAM_CONTEXT);
                // Synchronising a stream of another device is allowed.
                assert_eq!(sync(stream), ACL_SUCCESS);
                destroy_event(sync_event);
                free_host(host);
                free(buf);
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtResetDevice(1) }, ACL_SUCCESS);
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
                destroy_stream(stream);
                destroy_event(event);
                // SAFETY: no pointer arguments (both retains of device 0).
                unsafe {
                    assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
                    assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
                }
            })
            .join()
            .expect("test thread panicked");
    });
}

#[test]
fn synchronisation_timeouts() {
    on_device(0, || {
        let stream = create_stream();
        for bad in [0, -2, i32::MIN] {
            assert_eq!(sync_within(stream, bad), ACL_ERROR_RT_PARAM_INVALID, "{bad}");
            // SAFETY: no pointer arguments.
            assert_eq!(
                unsafe { aclrtSynchronizeDeviceWithTimeout(bad) },
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert_eq!(sync_within(stream, -1), ACL_SUCCESS);
        let gate = Gate::block(stream);
        // SAFETY: no pointer arguments.
        assert_eq!(
            unsafe { aclrtSynchronizeDeviceWithTimeout(20) },
            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        );
        assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        gate.open();
        assert_eq!(sync_within(stream, 5000), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

// ---- aclrtMemcpyAsync / aclrtMemsetAsync -------------------------------------

#[test]
fn memcpy_async_argument_rules() {
    on_device(0, || {
        const N: usize = 512;
        let (dev, dev2) = (malloc(N), malloc(N));
        let (pinned, pinned2) = (malloc_host(N, 7), malloc_host(N, 0));
        let stream = create_stream();
        let mut pageable = vec![0u8; N];
        // SAFETY: every pointer is live memory of N bytes, or NULL / a bad
        // value the call refuses before touching anything.
        unsafe {
            // count 0: success whatever the rest.
            assert_eq!(
                aclrtMemcpyAsync(null_mut(), 0, std::ptr::null(), 0, 99, stream),
                ACL_SUCCESS
            );
            assert_eq!(
                aclrtMemcpyAsync(null_mut(), N, dev, N, 1, stream),
                ACL_ERROR_INVALID_PARAM
            );
            assert!(recent().contains("dst"));
            assert_eq!(
                aclrtMemcpyAsync(dev, N, std::ptr::null(), N, 1, stream),
                ACL_ERROR_INVALID_PARAM
            );
            for kind in [6, 7, 100] {
                assert_eq!(aclrtMemcpyAsync(dev, N, dev2, N, kind, stream), ACL_ERROR_INVALID_PARAM);
            }
            assert_eq!(
                aclrtMemcpyAsync(dev, N - 1, dev2, N, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("destMax"));
            assert_eq!(
                aclrtMemcpyAsync(dev, 0, dev2, N, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // dst == src: success, nothing queued.
            assert_eq!(
                aclrtMemcpyAsync(dev, N, dev, N, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                ACL_SUCCESS
            );
            // Pinned to pinned is host-to-host, refused on a host with a card.
            assert_eq!(
                aclrtMemcpyAsync(pinned2.cast(), N, pinned.cast(), N, ACL_MEMCPY_HOST_TO_HOST, stream),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            assert_eq!(
                aclrtMemcpyAsync(pinned2.cast(), N, pinned.cast(), N, ACL_MEMCPY_DEFAULT, stream),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            // A pinned/device pair forces the right kind.
            assert_eq!(
                aclrtMemcpyAsync(dev, N, pinned.cast(), N, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                ACL_SUCCESS
            );
            // Pageable memory: only some kinds are accepted.
            assert_eq!(
                aclrtMemcpyAsync(dev2, N, pageable.as_ptr().cast(), N, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("pageable"));
            assert_eq!(
                aclrtMemcpyAsync(
                    pageable.as_mut_ptr().cast(),
                    N,
                    dev2,
                    N,
                    ACL_MEMCPY_HOST_TO_DEVICE,
                    stream
                ),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // HOST_TO_BUF_TO_DEVICE needs a host source and a device destination.
            assert_eq!(
                aclrtMemcpyAsync(pinned2.cast(), N, dev, N, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // A bad device range fails at the call.
            assert_eq!(
                aclrtMemcpyAsync(
                    dev.cast::<u8>().add(N).cast(),
                    N,
                    pinned.cast(),
                    N,
                    ACL_MEMCPY_HOST_TO_DEVICE,
                    stream
                ),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("past the end"));
            assert_eq!(
                aclrtMemcpyAsync(dev, N + 64, pinned.cast(), N + 64, ACL_MEMCPY_HOST_TO_DEVICE, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(read(dev, N).iter().all(|&x| x == 7), "the corrected copy ran");
        // Pageable memory: the stream is synchronised and the copy done before
        // the call returns (no synchronisation needed to see the bytes).
        let gate_free = create_stream();
        assert_eq!(memset_async(dev2, 0x77, N, gate_free), ACL_SUCCESS);
        assert_eq!(
            copy_async(pageable.as_mut_ptr().cast(), dev2, N, ACL_MEMCPY_DEFAULT, gate_free),
            ACL_SUCCESS
        );
        assert!(pageable.iter().all(|&x| x == 0x77));
        let source = vec![0x66u8; N];
        assert_eq!(
            copy_async(dev2, source.as_ptr().cast(), N, ACL_MEMCPY_HOST_TO_DEVICE, gate_free),
            ACL_SUCCESS
        );
        assert!(read(dev2, N).iter().all(|&x| x == 0x66));
        destroy_stream(gate_free);
        destroy_stream(stream);
        free_host(pinned);
        free_host(pinned2);
        free(dev);
        free(dev2);
    });
}

#[test]
fn memset_async_argument_rules() {
    on_device(0, || {
        const N: usize = 256;
        let dev = malloc(N);
        let pinned = malloc_host(N, 0);
        let mut pageable = [0u8; N];
        let stream = create_stream();
        // SAFETY: live memory of N bytes, or arguments refused untouched.
        unsafe {
            assert_eq!(aclrtMemsetAsync(null_mut(), 0, 0, 0, stream), ACL_SUCCESS);
            assert_eq!(aclrtMemsetAsync(null_mut(), N, 0, N, stream), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemsetAsync(dev, N - 1, 0, N, stream), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("maxCount"));
            assert_eq!(
                aclrtMemsetAsync(pageable.as_mut_ptr().cast(), N, 0, N, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("pageable"));
            assert_eq!(
                aclrtMemsetAsync(dev.cast::<u8>().add(64).cast(), N, 0, N, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // The value is truncated to 8 bits; pinned host memory works.
            assert_eq!(aclrtMemsetAsync(dev, N, 0x1FF, N, stream), ACL_SUCCESS);
            assert_eq!(aclrtMemsetAsync(pinned.cast(), N, 0x3C, N, stream), ACL_SUCCESS);
        }
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(read(dev, N).iter().all(|&x| x == 0xFF));
        assert!(host_slice(pinned, N).iter().all(|&x| x == 0x3C));
        assert!(pageable.iter().all(|&x| x == 0));
        destroy_stream(stream);
        free_host(pinned);
        free(dev);
    });
}

// ---- 2-D copies --------------------------------------------------------------

/// A `rows` x `pitch` host matrix whose byte (r, c) is `r * 7 + c` (mod 256).
fn matrix(rows: usize, pitch: usize) -> Vec<u8> {
    (0..rows * pitch).map(|i| ((i / pitch) * 7 + i % pitch) as u8).collect()
}

#[test]
fn memcpy_2d_argument_rules() {
    on_device(0, || {
        let dev = malloc(4096);
        let (pinned, pinned2) = (malloc_host(4096, 0), malloc_host(4096, 0));
        let host = [0u8; 64];
        let p = host.as_ptr().cast::<c_void>();
        // SAFETY: live memory large enough for every accepted copy; the
        // others are refused before anything is touched.
        unsafe {
            assert_eq!(aclrtMemcpy2d(null_mut(), 0, std::ptr::null(), 0, 0, 5, 99), ACL_SUCCESS);
            assert_eq!(aclrtMemcpy2d(null_mut(), 0, std::ptr::null(), 0, 5, 0, 99), ACL_SUCCESS);
            assert_eq!(
                aclrtMemcpy2d(null_mut(), 8, p, 8, 8, 2, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemcpy2d(dev, 8, std::ptr::null(), 8, 8, 2, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemcpy2d(dev, 16, p, 8, 9, 2, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            assert!(recent().contains("spitch"));
            assert_eq!(
                aclrtMemcpy2d(dev, 8, p, 16, 9, 2, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            // A zero pitch is caught by the ACL layer's width check first.
            assert_eq!(
                aclrtMemcpy2d(dev, 0, p, 8, 8, 2, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            for kind in [ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, 9] {
                assert_eq!(
                    aclrtMemcpy2d(dev, 8, p, 8, 8, 2, kind),
                    ACL_ERROR_INVALID_PARAM,
                    "{kind}"
                );
            }
            assert_eq!(
                aclrtMemcpy2d(dev, 8, p, 8, 8, 5_242_881, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("height"));
            assert_eq!(
                aclrtMemcpy2d(dev, 5_000_001, p, 5_000_001, 5_000_001, 1, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("width"));
            // Synchronous 2-D copies do not do device-to-device.
            assert_eq!(
                aclrtMemcpy2d(dev, 8, dev, 8, 8, 2, ACL_MEMCPY_DEVICE_TO_DEVICE),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            // After correction the direction must be H2D or D2H.
            assert_eq!(
                aclrtMemcpy2d(dev, 8, dev.cast::<u8>().add(64).cast(), 8, 8, 2, ACL_MEMCPY_DEFAULT),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemcpy2d(pinned.cast(), 8, pinned2.cast(), 8, 8, 2, ACL_MEMCPY_DEFAULT),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // A span past the end of the allocation.
            assert_eq!(
                aclrtMemcpy2d(dev, 1024, p, 8, 8, 8, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        free_host(pinned);
        free_host(pinned2);
        free(dev);
    });
}

#[test]
fn memcpy_2d_moves_the_rows() {
    on_device(0, || {
        const ROWS: usize = 33;
        const WIDTH: usize = 48;
        const SPITCH: usize = 64;
        const DPITCH: usize = 80;
        let source = matrix(ROWS, SPITCH);
        let dev = malloc(ROWS * DPITCH);
        set(dev, 0xEE, ROWS * DPITCH);
        // SAFETY: `source` holds ROWS*SPITCH bytes; `dev` ROWS*DPITCH.
        let rc = unsafe {
            aclrtMemcpy2d(
                dev,
                DPITCH,
                source.as_ptr().cast(),
                SPITCH,
                WIDTH,
                ROWS,
                ACL_MEMCPY_DEFAULT,
            )
        };
        assert_eq!(rc, ACL_SUCCESS);
        let device_bytes = read(dev, ROWS * DPITCH);
        for row in 0..ROWS {
            assert_eq!(
                &device_bytes[row * DPITCH..row * DPITCH + WIDTH],
                &source[row * SPITCH..row * SPITCH + WIDTH]
            );
            assert!(
                device_bytes[row * DPITCH + WIDTH..(row + 1) * DPITCH]
                    .iter()
                    .all(|&x| x == 0xEE)
            );
        }
        // And back, packed.
        let mut back = vec![0u8; ROWS * WIDTH];
        // SAFETY: `back` holds ROWS*WIDTH bytes.
        let rc = unsafe {
            aclrtMemcpy2d(
                back.as_mut_ptr().cast(),
                WIDTH,
                dev,
                DPITCH,
                WIDTH,
                ROWS,
                ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        assert_eq!(rc, ACL_SUCCESS);
        for row in 0..ROWS {
            assert_eq!(
                &back[row * WIDTH..(row + 1) * WIDTH],
                &source[row * SPITCH..row * SPITCH + WIDTH]
            );
        }
        free(dev);
    });
}

#[test]
fn memcpy_2d_async_moves_the_rows_in_order() {
    on_device(0, || {
        const ROWS: usize = 17;
        const WIDTH: usize = 100;
        const PITCH: usize = 128;
        let source = malloc_host(ROWS * PITCH, 0);
        host_slice(source, ROWS * PITCH).copy_from_slice(&matrix(ROWS, PITCH));
        let out = malloc_host(ROWS * WIDTH, 0);
        let (a, b) = (malloc(ROWS * PITCH), malloc(ROWS * WIDTH));
        let stream = create_stream();
        let gate = Gate::block(stream);
        // SAFETY: pinned and device memory large enough for each copy; it
        // stays alive until the stream is synchronised.
        unsafe {
            assert_eq!(
                aclrtMemcpy2dAsync(
                    a,
                    PITCH,
                    source.cast(),
                    PITCH,
                    WIDTH,
                    ROWS,
                    ACL_MEMCPY_HOST_TO_DEVICE,
                    stream
                ),
                ACL_SUCCESS
            );
            assert_eq!(
                aclrtMemcpy2dAsync(b, WIDTH, a, PITCH, WIDTH, ROWS, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                ACL_SUCCESS
            );
            assert_eq!(
                aclrtMemcpy2dAsync(out.cast(), WIDTH, b, WIDTH, WIDTH, ROWS, ACL_MEMCPY_DEFAULT, stream),
                ACL_SUCCESS
            );
            // Pinned to pinned is not H2D, D2H or D2D.
            assert_eq!(
                aclrtMemcpy2dAsync(
                    out.cast(),
                    WIDTH,
                    source.cast(),
                    PITCH,
                    WIDTH,
                    ROWS,
                    ACL_MEMCPY_DEFAULT,
                    stream
                ),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // A span past the end fails at the call.
            assert_eq!(
                aclrtMemcpy2dAsync(b, PITCH, a, PITCH, WIDTH, ROWS, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert!(host_slice(out, ROWS * WIDTH).iter().all(|&x| x == 0), "nothing ran yet");
        gate.open();
        assert_eq!(sync(stream), ACL_SUCCESS);
        let expected = matrix(ROWS, PITCH);
        let got = host_slice(out, ROWS * WIDTH);
        for row in 0..ROWS {
            assert_eq!(
                &got[row * WIDTH..(row + 1) * WIDTH],
                &expected[row * PITCH..row * PITCH + WIDTH]
            );
        }
        // Pageable memory: done before the call returns.
        let mut pageable = vec![0u8; ROWS * WIDTH];
        // SAFETY: `pageable` holds ROWS*WIDTH bytes.
        let rc = unsafe {
            aclrtMemcpy2dAsync(
                pageable.as_mut_ptr().cast(),
                WIDTH,
                b,
                WIDTH,
                WIDTH,
                ROWS,
                ACL_MEMCPY_DEVICE_TO_HOST,
                stream,
            )
        };
        assert_eq!(rc, ACL_SUCCESS);
        assert_eq!(&pageable[..], &got[..]);
        destroy_stream(stream);
        free_host(source);
        free_host(out);
        free(a);
        free(b);
    });
}

// ---- freeing host memory with work queued -------------------------------------

#[test]
fn free_host_does_not_wait_and_records_the_misuse() {
    on_device(0, || {
        const N: usize = 4096;
        let dev = malloc(N);
        set(dev, 0, N);
        let pinned = malloc_host(N, 0x99);
        let address = pinned as usize;
        let stream = create_stream();
        let gate = Gate::block(stream);
        assert_eq!(
            copy_async(dev, pinned.cast(), N, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS
        );
        let started = Instant::now();
        free_host(pinned);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "aclrtFreeHost must not wait"
        );
        // Heap addresses are reused across tests: name both sides of the copy.
        let (tag, target) = (format!("{address:#x}"), format!("{:#x}", dev as usize));
        let noticed = misuse_about("aclrtFreeHost", &[&tag, &target, "aclrtMemcpyAsync"]);
        assert_eq!(noticed, 1, "the pending copy is reported: {:?}", soft::misuse());
        gate.open();
        assert_eq!(sync(stream), ACL_SUCCESS);
        // The copy was skipped rather than read freed memory.
        let skipped = misuse_about("aclrtMemcpyAsync", &[&tag, &target, "skipped"]);
        assert_eq!(skipped, 1, "{:?}", soft::misuse());
        assert!(read(dev, N).iter().all(|&x| x == 0));
        destroy_stream(stream);
        free(dev);
    });
}

#[test]
fn free_host_with_dev_sync_waits_for_queued_work() {
    on_device(0, || {
        const N: usize = 4096;
        let dev = malloc(N);
        set(dev, 0, N);
        let pinned = malloc_host(N, 0x3E);
        // Heap addresses are reused across tests: name both sides of the copy
        // and compare counts.
        let words = [format!("{:#x}", pinned as usize), format!("{:#x}", dev as usize)];
        let words = [words[0].as_str(), words[1].as_str()];
        let before = misuse_about("aclrtFreeHost", &words) + misuse_about("aclrtMemcpyAsync", &words);
        let stream = create_stream();
        let gate = Gate::block(stream);
        assert_eq!(
            copy_async(dev, pinned.cast(), N, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS
        );
        let started = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
                std::thread::sleep(Duration::from_millis(60));
                gate.open();
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
            });
            // SAFETY: `pinned` came from aclrtMallocHost and is freed once.
            assert_eq!(unsafe { aclrtFreeHostWithDevSync(pinned.cast()) }, ACL_SUCCESS);
        });
        assert!(
            started.elapsed() >= Duration::from_millis(50),
            "it waited for the device"
        );
        assert!(read(dev, N).iter().all(|&x| x == 0x3E), "the copy ran before the free");
        let after = misuse_about("aclrtFreeHost", &words) + misuse_about("aclrtMemcpyAsync", &words);
        assert_eq!(after, before, "no misuse: {:?}", soft::misuse());
        destroy_stream(stream);
        free(dev);
    });
}

#[test]
fn free_with_dev_sync_waits_for_queued_work() {
    on_device(1, || {
        const N: usize = 4096;
        let dev = malloc(N);
        let out = malloc_host(N, 0);
        let stream = create_stream();
        let gate = Gate::block(stream);
        assert_eq!(memset_async(dev, 0x21, N, stream), ACL_SUCCESS);
        assert_eq!(
            copy_async(out.cast(), dev, N, ACL_MEMCPY_DEVICE_TO_HOST, stream),
            ACL_SUCCESS
        );
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(1) }, ACL_SUCCESS);
                std::thread::sleep(Duration::from_millis(30));
                gate.open();
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtResetDevice(1) }, ACL_SUCCESS);
            });
            // SAFETY: `dev` came from aclrtMalloc and is freed once.
            assert_eq!(unsafe { aclrtFreeWithDevSync(dev) }, ACL_SUCCESS);
        });
        // The queued work ran before the free.
        assert!(host_slice(out, N).iter().all(|&x| x == 0x21));
        destroy_stream(stream);
        free_host(out);
    });
}

// ---- concurrency ---------------------------------------------------------------

#[test]
fn threads_with_their_own_streams_copy_concurrently() {
    software();
    const THREADS: usize = 8;
    const ROUNDS: usize = 40;
    const N: usize = 64 * 1024;
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            scope.spawn(move || {
                let device = (thread % 2) as i32;
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(device) }, ACL_SUCCESS);
                let stream = create_stream();
                let (a, b) = (malloc(N), malloc(N));
                let (src, dst) = (malloc_host(N, 0), malloc_host(N, 0));
                for round in 0..ROUNDS {
                    let pattern = (thread * 31 + round * 7) as u8;
                    for (i, byte) in host_slice(src, N).iter_mut().enumerate() {
                        *byte = pattern.wrapping_add(i as u8);
                    }
                    assert_eq!(
                        copy_async(a, src.cast(), N, ACL_MEMCPY_HOST_TO_DEVICE, stream),
                        ACL_SUCCESS
                    );
                    assert_eq!(copy_async(b, a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, stream), ACL_SUCCESS);
                    assert_eq!(memset_async(a, 0, N, stream), ACL_SUCCESS);
                    assert_eq!(
                        copy_async(dst.cast(), b, N, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                        ACL_SUCCESS
                    );
                    assert_eq!(sync(stream), ACL_SUCCESS);
                    let ok = host_slice(dst, N)
                        .iter()
                        .enumerate()
                        .all(|(i, &byte)| byte == pattern.wrapping_add(i as u8));
                    assert!(ok, "thread {thread} round {round}: wrong data");
                }
                assert!(read(a, N).iter().all(|&x| x == 0));
                destroy_stream(stream);
                free_host(src);
                free_host(dst);
                free(a);
                free(b);
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtResetDevice(device) }, ACL_SUCCESS);
            });
        }
    });
}
