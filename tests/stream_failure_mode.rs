//! `Stream::set_failure_mode` (`aclrtSetStreamFailureMode`) and
//! `Event::waits_passed` (`aclrtQueryEventWaitStatus`); the crate's own
//! ordering after a stream in stop mode (issue 38).

mod common;

use ascend::stream::{Event, EventFlags, FailureMode, Ordered, Stream};
use ascend::{DeviceBuf, Error, ErrorCode, PinnedHostBuf};
use common::gate::gated;
use common::{device, software_only};
use std::sync::{Arc, mpsc};
use std::time::Duration;

#[test]
fn stop_mode_is_one_way() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    stream.set_failure_mode(FailureMode::Continue).unwrap();
    stream.set_failure_mode(FailureMode::Stop).unwrap();
    stream.set_failure_mode(FailureMode::Stop).unwrap();
    let refused = stream.set_failure_mode(FailureMode::Continue).unwrap_err();
    assert_eq!(refused.code(), Some(ErrorCode::RT_FEATURE_NOT_SUPPORT));
    // The stream still works.
    let buf = DeviceBuf::<u8>::zeroed(&device, 16).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.to_vec().unwrap(), [0; 16]);
    assert_eq!(FailureMode::default(), FailureMode::Continue);
}

/// Queues 0x11, a wait that fails after one second (an `ACL_EVENT_SYNC`
/// event never recorded: software device only), then 0x22; returns the
/// synchronisation's error code and the bytes.
fn fill_around_a_failed_wait(mode: FailureMode) -> (Option<ErrorCode>, Vec<u8>) {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    stream.set_failure_mode(mode).unwrap();
    let never = Event::with_flags(&device, EventFlags::SYNC).unwrap();
    let mut buf = DeviceBuf::<u8>::zeroed(&device, 64).unwrap();
    let outcome = stream.scope(|s| {
        let held = s.hold_device(&mut buf);
        s.fill_bytes(held, 0x11)?;
        stream.wait_event_timeout(&never, Duration::from_secs(1))?;
        s.fill_bytes(held, 0x22)
    });
    let code = outcome.err().and_then(|error| error.code());
    (code, buf.to_vec().unwrap())
}

#[test]
fn continue_mode_runs_the_work_after_a_failed_task() {
    software_only(|| {
        let (code, bytes) = fill_around_a_failed_wait(FailureMode::Continue);
        assert_eq!(code, Some(ErrorCode::RT_WAIT_TIMEOUT));
        assert_eq!(bytes, [0x22; 64]);
    });
}

#[test]
fn stop_mode_skips_the_work_after_a_failed_task() {
    software_only(|| {
        let (code, bytes) = fill_around_a_failed_wait(FailureMode::Stop);
        assert_eq!(code, Some(ErrorCode::RT_WAIT_TIMEOUT));
        assert_eq!(bytes, [0x11; 64], "the memset after the failed wait must not run");
    });
}

#[test]
fn waits_passed_follows_the_stream_waits() {
    let device = device();
    let (recorder, waiter) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
    let event = Event::new(&device).unwrap();
    assert!(event.waits_passed().unwrap());
    gated(&device, &recorder, || {
        event.record(&recorder).unwrap();
        waiter.wait_event(&event).unwrap();
        // The record is held back behind the gate: the wait has not passed.
        assert!(!event.waits_passed().unwrap());
    });
    waiter.synchronize().unwrap();
    assert!(event.waits_passed().unwrap());
    // Events of `with_flags_ex` do not support the query.
    let ex = Event::with_flags_ex(&device, EventFlags::SYNC).unwrap();
    assert_eq!(
        ex.waits_passed().unwrap_err().code(),
        Some(ErrorCode::RT_FEATURE_NOT_SUPPORT)
    );
}

/// Runs `body` on its own thread and fails the test if it has not returned
/// within `limit` (a hang is a failure, not a test run that never ends; the
/// hung thread is left behind).
fn within(limit: Duration, body: impl FnOnce() + Send + 'static) {
    let (done, returned) = mpsc::channel();
    let runner = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match returned.recv_timeout(limit) {
        Ok(()) => runner.join().expect("the body returned"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked: fail with its panic.
            if let Err(panic) = runner.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the body did not return within {limit:?}: it hangs"),
    }
}

/// Two streams of `device`: `s` in stop mode, `t` in continue mode.
fn stop_mode_and_other(device: &ascend::Device) -> (Arc<Stream>, Arc<Stream>) {
    let (s, t) = (
        Arc::new(Stream::new(device).unwrap()),
        Arc::new(Stream::new(device).unwrap()),
    );
    s.set_failure_mode(FailureMode::Stop).unwrap();
    (s, t)
}

/// The stream and failure of an [`Error::StreamStopped`].
fn stopped(error: Error) -> (usize, Option<ErrorCode>) {
    match error {
        Error::StreamStopped { stream, failure, .. } => (stream, failure.and_then(|failure| failure.code())),
        other => panic!("expected Error::StreamStopped, got {other:?}"),
    }
}

/// Issue 38: a copy on `t` ordered after the uses of `s`, a stream in stop
/// mode one of whose tasks failed, is refused with a typed error naming
/// `s` instead of waiting on the device for a record that `s` skips (which
/// never completes, so `t`, its synchronisation and the owners' drops never
/// returned). Software device only: the failure is a wait for an
/// `ACL_EVENT_SYNC` event never recorded, timing out after one second.
#[test]
fn ordering_after_a_stopped_stream_is_refused_and_never_hangs() {
    software_only(|| {
        within(Duration::from_secs(30), || {
            let device = device();
            let (s, t) = stop_mode_and_other(&device);
            let buf = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64).unwrap());
            buf.fill_bytes(0x11, &s).unwrap();
            let never = Event::with_flags(&device, EventFlags::SYNC).unwrap();
            s.wait_event_timeout(&never, Duration::from_secs(1)).unwrap(); // fails on `s`
            buf.fill_bytes(0x22, &s).unwrap(); // skipped
            let staging = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 64).unwrap());
            assert!(!s.is_stopped(), "the failure is not known before a synchronisation");
            // The copy must follow the fills on `s`: the crate learns of the
            // failure (a host wait for `s` instead of an event on it) and
            // refuses, naming `s` and the failure.
            let refused = staging.copy_from_device(&buf, &t).unwrap_err();
            assert_eq!(
                stopped(refused),
                (s.as_raw() as usize, Some(ErrorCode::RT_WAIT_TIMEOUT))
            );
            assert!(s.is_stopped());
            // Known from now on: refused at once, the failure reported before.
            let refused = staging.copy_from_device(&buf, &t).unwrap_err();
            assert_eq!(stopped(refused), (s.as_raw() as usize, None));
            let refused = buf.fill_bytes(0x55, &t).unwrap_err();
            assert_eq!(stopped(refused), (s.as_raw() as usize, None));
            // Nothing was queued on `t`; host access and the drops return.
            t.synchronize().unwrap();
            assert_eq!(staging.view().with_host(|bytes| bytes.to_vec()).unwrap(), [0; 64]);
            assert_eq!(
                buf.view().to_vec::<u8>().unwrap(),
                [0x11; 64],
                "the fill after the failure was skipped"
            );
            drop((staging, buf));
            s.synchronize().unwrap();
            drop(never);
        });
    });
}

/// A stream in stop mode with no failure is waited for on the host, and
/// the work ordered after it runs as usual.
#[test]
fn ordering_after_a_healthy_stream_in_stop_mode_works() {
    let device = device();
    let (s, t) = stop_mode_and_other(&device);
    let buf = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64).unwrap());
    buf.fill_bytes(0x33, &s).unwrap();
    let staging = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 64).unwrap());
    staging.copy_from_device(&buf, &t).unwrap();
    assert_eq!(staging.view().with_host(|bytes| bytes.to_vec()).unwrap(), [0x33; 64]);
    // And the other way round: `t` (continue mode) before `s`.
    buf.fill_bytes(0x44, &t).unwrap();
    staging.copy_from_device(&buf, &s).unwrap();
    assert_eq!(staging.view().with_host(|bytes| bytes.to_vec()).unwrap(), [0x44; 64]);
    assert!(!s.is_stopped() && !t.is_stopped());
}

/// A `RuntimePool` block used on a stopped stream: its drop would order
/// the free (on the block's stream) after that stream with an event; it
/// leaks the block instead (logged), and nothing hangs. Software device
/// only (the failure injected as above).
#[test]
fn a_runtime_pool_block_used_on_a_stopped_stream_is_leaked_not_hung() {
    use ascend::pool::{RuntimePool, RuntimePoolConfig};
    software_only(|| {
        within(Duration::from_secs(30), || {
            let device = device();
            let (s, t) = stop_mode_and_other(&device);
            let pool = RuntimePool::new(&device, RuntimePoolConfig::default()).unwrap();
            let block = pool.alloc::<u8>(64, &t).unwrap();
            t.synchronize().unwrap();
            block.fill_bytes(0x11, &s).unwrap();
            let never = Event::with_flags(&device, EventFlags::SYNC).unwrap();
            s.wait_event_timeout(&never, Duration::from_secs(1)).unwrap();
            assert_eq!(s.synchronize().unwrap_err().code(), Some(ErrorCode::RT_WAIT_TIMEOUT));
            assert!(s.is_stopped());
            drop(block); // the free is not ordered after `s`: leaked
            t.synchronize().unwrap();
            assert!(pool.stats().unwrap().used_current > 0, "the block is leaked, not freed");
        });
    });
}
