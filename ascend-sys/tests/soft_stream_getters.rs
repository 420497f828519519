//! `aclrtStreamGetId`, `aclrtStreamGetPriority`, `aclrtStreamGetFlags` and
//! `aclrtEventGetTimestamp` on the software device: the argument rules
//! return the real runtime's codes in its order (the ACL layer's NULL
//! checks, 100000; the handle, 107017; for the stream getters a current
//! context, 107002 — for an ID only when the stream is NULL; for timestamps
//! external events 207000, never recorded 507000, not reached 107006), and
//! the values are those the stream was created with, or the record's time.
//! Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{create_stream, destroy_event, destroy_stream, event_with_flag};
use soft_common::{holding_device, on_device_id as on_device, recent, without_device};
use std::ptr::null_mut;

fn stream_id(stream: aclrtStream) -> Result<i32, aclError> {
    let mut id = -1;
    // SAFETY: `id` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtStreamGetId(stream, &mut id) } {
        ACL_SUCCESS => Ok(id),
        code => Err(code),
    }
}

fn priority(stream: aclrtStream) -> Result<u32, aclError> {
    let mut priority = u32::MAX;
    // SAFETY: `priority` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtStreamGetPriority(stream, &mut priority) } {
        ACL_SUCCESS => Ok(priority),
        code => Err(code),
    }
}

fn flags(stream: aclrtStream) -> Result<u32, aclError> {
    let mut flags = u32::MAX;
    // SAFETY: `flags` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtStreamGetFlags(stream, &mut flags) } {
        ACL_SUCCESS => Ok(flags),
        code => Err(code),
    }
}

fn stream_with_config(priority: u32, flag: u32) -> aclrtStream {
    let mut stream = null_mut();
    // SAFETY: `stream` is a valid out-pointer.
    assert_eq!(
        unsafe { aclrtCreateStreamWithConfig(&mut stream, priority, flag) },
        ACL_SUCCESS
    );
    stream
}

#[test]
fn a_null_out_pointer_is_refused_first() {
    on_device(0, || {
        let stream = create_stream();
        // SAFETY: NULL out-pointers are refused before use.
        unsafe {
            assert_eq!(aclrtStreamGetId(stream, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("streamId is NULL"));
            assert_eq!(aclrtStreamGetPriority(stream, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("priority is NULL"));
            assert_eq!(aclrtStreamGetFlags(stream, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("flags is NULL"));
            // Before the handle check.
            let bad = 0x1234usize as aclrtStream;
            assert_eq!(aclrtStreamGetId(bad, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtStreamGetPriority(bad, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtStreamGetFlags(bad, null_mut()), ACL_ERROR_INVALID_PARAM);
        }
        destroy_stream(stream);
    });
}

#[test]
fn handles_are_checked() {
    on_device(0, || {
        let stream = create_stream();
        destroy_stream(stream);
        for bad in [stream, 0x1234usize as aclrtStream] {
            assert_eq!(stream_id(bad), Err(ACL_ERROR_RT_INVALID_HANDLE));
            assert_eq!(priority(bad), Err(ACL_ERROR_RT_INVALID_HANDLE));
            assert_eq!(flags(bad), Err(ACL_ERROR_RT_INVALID_HANDLE));
        }
    });
}

#[test]
fn context_rules() {
    holding_device(0, || {
        let stream = on_device(0, || create_stream() as usize);
        without_device(|| {
            let stream = stream as aclrtStream;
            // The handle is checked before the context.
            assert_eq!(stream_id(0x1234usize as aclrtStream), Err(ACL_ERROR_RT_INVALID_HANDLE));
            // NULL needs a current context for the default stream.
            assert_eq!(stream_id(null_mut()), Err(ACL_ERROR_RT_CONTEXT_NULL));
            assert_eq!(priority(null_mut()), Err(ACL_ERROR_RT_CONTEXT_NULL));
            assert_eq!(flags(null_mut()), Err(ACL_ERROR_RT_CONTEXT_NULL));
            // An explicit stream: the ID needs none, priority and flags do.
            assert!(stream_id(stream).is_ok());
            assert_eq!(priority(stream), Err(ACL_ERROR_RT_CONTEXT_NULL));
            assert_eq!(flags(stream), Err(ACL_ERROR_RT_CONTEXT_NULL));
        });
        // A stream of another device may be asked about.
        let id = on_device(0, || stream_id(stream as aclrtStream));
        on_device(1, || {
            assert_eq!(stream_id(stream as aclrtStream), id);
            assert_eq!(priority(stream as aclrtStream), Ok(0));
            assert_eq!(flags(stream as aclrtStream), Ok(0));
        });
        on_device(0, || destroy_stream(stream as aclrtStream));
    });
}

#[test]
fn ids_are_unique_and_stable() {
    on_device(0, || {
        let (first, second) = (create_stream(), create_stream());
        let (a, b) = (stream_id(first), stream_id(second));
        assert!(a.is_ok() && b.is_ok());
        assert_ne!(a, b);
        assert_eq!(stream_id(first), a);
        // NULL: the default stream, a stream of its own.
        let default = stream_id(null_mut());
        assert!(default.is_ok());
        assert_ne!(default, a);
        assert_ne!(default, b);
        assert_eq!(stream_id(null_mut()), default);
        destroy_stream(first);
        destroy_stream(second);
    });
}

#[test]
fn priorities_are_kept_and_clamped() {
    on_device(0, || {
        let plain = create_stream();
        assert_eq!(priority(plain), Ok(0));
        assert_eq!(priority(null_mut()), Ok(0));
        destroy_stream(plain);
        for (given, kept) in [(0, 0), (3, 3), (7, 7), (8, 7), (1000, 7)] {
            let stream = stream_with_config(given, 0);
            assert_eq!(priority(stream), Ok(kept), "priority {given}");
            destroy_stream(stream);
        }
    });
}

#[test]
fn flags_are_kept() {
    on_device(0, || {
        let plain = create_stream();
        assert_eq!(flags(plain), Ok(0));
        assert_eq!(flags(null_mut()), Ok(0));
        destroy_stream(plain);
        for flag in [
            ACL_STREAM_FAST_LAUNCH,
            ACL_STREAM_FAST_SYNC,
            ACL_STREAM_HUGE,
            ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC,
        ] {
            let stream = stream_with_config(2, flag);
            assert_eq!(flags(stream), Ok(flag));
            assert_eq!(priority(stream), Ok(2));
            destroy_stream(stream);
        }
        // Bits that are no ACL_STREAM_* flag are dropped by the ACL layer.
        let stream = stream_with_config(0, ACL_STREAM_FAST_SYNC | 0x8000_0000);
        assert_eq!(flags(stream), Ok(ACL_STREAM_FAST_SYNC));
        destroy_stream(stream);
    });
}

fn timestamp(event: aclrtEvent) -> Result<u64, aclError> {
    let mut stamp = 0;
    // SAFETY: `stamp` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtEventGetTimestamp(event, &mut stamp) } {
        ACL_SUCCESS => Ok(stamp),
        code => Err(code),
    }
}

fn record(event: aclrtEvent, stream: aclrtStream) {
    // SAFETY: live handles.
    assert_eq!(unsafe { aclrtRecordEvent(event, stream) }, ACL_SUCCESS);
}

fn sync(stream: aclrtStream) {
    // SAFETY: a live handle.
    assert_eq!(unsafe { aclrtSynchronizeStream(stream) }, ACL_SUCCESS);
}

#[test]
fn timestamp_rules() {
    on_device(0, || {
        let event = event_with_flag(ACL_EVENT_TIME_LINE);
        // SAFETY: NULL arguments are refused before use: the out-pointer first.
        unsafe {
            assert_eq!(aclrtEventGetTimestamp(null_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("timestamp is NULL"));
        }
        assert_eq!(timestamp(null_mut()), Err(ACL_ERROR_INVALID_PARAM));
        assert_eq!(timestamp(0x1234usize as aclrtEvent), Err(ACL_ERROR_RT_INVALID_HANDLE));
        assert_eq!(timestamp(event), Err(ACL_ERROR_RT_INTERNAL_ERROR));
        for flag in [ACL_EVENT_EXTERNAL, ACL_EVENT_IPC] {
            let mut other = null_mut();
            // SAFETY: `other` is a valid out-pointer.
            if unsafe { aclrtCreateEventWithFlag(&mut other, flag) } == ACL_SUCCESS {
                assert_eq!(timestamp(other), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
                destroy_event(other);
            }
        }
        // A record not reached yet: the stream waits for a gate.
        let stream = create_stream();
        let gate = event_with_flag(ACL_EVENT_SYNC);
        // SAFETY: live handles.
        assert_eq!(unsafe { aclrtStreamWaitEvent(stream, gate) }, ACL_SUCCESS);
        record(event, stream);
        assert_eq!(timestamp(event), Err(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID));
        let opener = create_stream();
        record(gate, opener);
        sync(opener);
        sync(stream);
        assert!(timestamp(event).is_ok());
        destroy_stream(opener);
        destroy_stream(stream);
        destroy_event(gate);
        destroy_event(event);
    });
}

#[test]
fn timestamps_follow_the_records_in_microseconds() {
    on_device(0, || {
        let stream = create_stream();
        let (first, second) = (
            event_with_flag(ACL_EVENT_TIME_LINE),
            event_with_flag(ACL_EVENT_TIME_LINE),
        );
        record(first, stream);
        sync(stream);
        std::thread::sleep(std::time::Duration::from_millis(20));
        record(second, stream);
        sync(stream);
        let (a, b) = (timestamp(first), timestamp(second));
        let (Ok(a), Ok(b)) = (a, b) else {
            panic!("timestamps: {a:?}, {b:?}");
        };
        assert!(b >= a + 20_000, "{a} us, then {b} us");
        assert_eq!(timestamp(first), Ok(a));
        destroy_stream(stream);
        destroy_event(first);
        destroy_event(second);
    });
}
