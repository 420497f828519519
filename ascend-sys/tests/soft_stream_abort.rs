//! `aclrtStreamAbort` and `aclrtStreamStop` on the software device: the
//! argument rules and codes; an abort drops the queued work (it never
//! touches memory afterwards), ends the wait the stream is blocked in,
//! completes the records it dropped, and leaves the stream usable.
//! Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{
    Gate, create_stream, destroy_event, destroy_stream, event_with_flag, free, malloc, record, sync, sync_within,
};
use soft_common::{on_device_id as on_device, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;

fn abort(stream: aclrtStream) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclrtStreamAbort(stream) }
}

fn stop(stream: aclrtStream) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclrtStreamStop(stream) }
}

fn bytes(device: *mut c_void, len: usize) -> Vec<u8> {
    let mut host = vec![0xEE_u8; len];
    // SAFETY: `host` has `len` bytes; `device` is a live allocation of `len`.
    let code = unsafe { aclrtMemcpy(host.as_mut_ptr().cast(), len, device, len, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(code, ACL_SUCCESS);
    host
}

fn memset_async(device: *mut c_void, len: usize, value: i32, stream: aclrtStream) {
    // SAFETY: `device` is a live allocation of `len` bytes.
    assert_eq!(
        unsafe { aclrtMemsetAsync(device, len, value, len, stream) },
        ACL_SUCCESS
    );
}

#[test]
fn argument_rules() {
    on_device(0, || {
        let stream = create_stream();
        assert_eq!(abort(null_mut()), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(abort(0x1234 as aclrtStream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(stop(null_mut()), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(stop(0x1234 as aclrtStream), ACL_ERROR_RT_INVALID_HANDLE);
        // No stream the software device creates has ACL_STREAM_DEVICE_USE_ONLY.
        assert_eq!(stop(stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        // An idle stream aborts at once.
        assert_eq!(abort(stream), ACL_SUCCESS);
        let handle = stream as usize;
        on_device(1, || {
            assert_eq!(abort(handle as aclrtStream), ACL_ERROR_RT_STREAM_CONTEXT)
        });
        without_device(|| assert_eq!(abort(handle as aclrtStream), ACL_ERROR_RT_CONTEXT_NULL));
        destroy_stream(stream);
        assert_eq!(abort(stream), ACL_ERROR_RT_INVALID_HANDLE);
    });
}

#[test]
fn abort_drops_queued_work_and_the_stream_stays_usable() {
    on_device(0, || {
        const LEN: usize = 4096;
        let device = malloc(LEN);
        // SAFETY: a live allocation of LEN bytes.
        assert_eq!(unsafe { aclrtMemset(device, LEN, 0, LEN) }, ACL_SUCCESS);
        let stream = create_stream();
        let gate = Gate::block(stream);
        memset_async(device, LEN, 0xAB, stream);
        let after = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(record(after, stream), ACL_SUCCESS);
        let mut status = 99;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtQueryEventStatus(after, &mut status) }, ACL_SUCCESS);
        assert_eq!(status, ACL_EVENT_RECORDED_STATUS_NOT_READY);

        assert_eq!(abort(stream), ACL_SUCCESS);
        // The dropped work is complete for every observer, and never ran.
        let mut stream_status = 99;
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtStreamQuery(stream, &mut stream_status), ACL_SUCCESS);
            assert_eq!(aclrtQueryEventStatus(after, &mut status), ACL_SUCCESS);
        }
        assert_eq!(stream_status, ACL_STREAM_STATUS_COMPLETE);
        assert_eq!(status, ACL_EVENT_RECORDED_STATUS_COMPLETE);
        assert_eq!(sync(stream), ACL_SUCCESS);
        // SAFETY: a live event.
        assert_eq!(unsafe { aclrtSynchronizeEvent(after) }, ACL_SUCCESS);
        assert!(
            bytes(device, LEN).iter().all(|&byte| byte == 0),
            "the aborted memset ran"
        );

        // The gate's wait was ended; opening it later changes nothing.
        gate.open();
        // The stream runs new work as usual.
        memset_async(device, LEN, 0x5A, stream);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(bytes(device, LEN).iter().all(|&byte| byte == 0x5A));
        destroy_event(after);
        destroy_stream(stream);
        free(device);
    });
}

#[test]
fn abort_ends_a_value_wait_the_stream_is_blocked_in() {
    on_device(0, || {
        let word = malloc(8);
        // SAFETY: a live allocation of 8 bytes.
        assert_eq!(unsafe { aclrtMemset(word, 8, 0, 8) }, ACL_SUCCESS);
        let stream = create_stream();
        // SAFETY: `word` is 8-byte aligned device memory; it never reaches 1.
        assert_eq!(
            unsafe { aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream) },
            ACL_SUCCESS
        );
        assert_eq!(sync_within(stream, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert_eq!(abort(stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        free(word);
    });
}
