//! The last `aclrtResetDevice` of a device tears its primary context down,
//! as on hardware: the device's streams, events and `aclrtMalloc*` memory
//! stop existing, and later calls on them fail as for destroyed handles and
//! freed memory (docs/runtime-choices.md). Work queued before the reset —
//! on its created streams and on its default stream — still runs to the end
//! first. One test: retains are process-wide, so the file needs its process
//! to itself. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::software;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::Duration;

/// Bytes each stream's gated work writes.
const BYTES: usize = 1 << 20;

/// Pinned host memory of [`BYTES`] bytes (pageable memory would turn the
/// asynchronous copies into synchronous ones).
fn pinned() -> *mut c_void {
    let mut host = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut host, BYTES) }, ACL_SUCCESS);
    host
}

/// Queues, on `stream` (NULL: the default stream), a wait for `gate`, a
/// memset of `device` to `value` and a copy of it into `host`.
///
/// # Safety
///
/// `device` and `host` hold [`BYTES`] bytes and stay allocated until the
/// work has run.
unsafe fn gated_fill(stream: aclrtStream, gate: aclrtEvent, device: *mut c_void, host: *mut c_void, value: i32) {
    // SAFETY: forwarded contract; live handles.
    unsafe {
        assert_eq!(aclrtStreamWaitEvent(stream, gate), ACL_SUCCESS);
        assert_eq!(aclrtMemsetAsync(device, BYTES, value, BYTES, stream), ACL_SUCCESS);
        assert_eq!(
            aclrtMemcpyAsync(host, BYTES, device, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream),
            ACL_SUCCESS
        );
    }
}

fn all_bytes(host: *mut c_void, value: u8) -> bool {
    // SAFETY: `host` is a live pinned allocation of BYTES bytes that no
    // queued work writes any more.
    unsafe { std::slice::from_raw_parts(host.cast::<u8>(), BYTES) }
        .iter()
        .all(|&byte| byte == value)
}

#[test]
fn the_last_reset_destroys_the_devices_streams_events_and_memory() {
    software();
    let (from_stream, from_default) = (pinned_on(0), pinned_on(0));
    let (mut stream, mut event, mut on_stream, mut on_default, mut kept) =
        (null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
    let (mut stream_gate, mut default_gate) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers; the pinned buffers outlive the gated
    // work, which the reset lets finish before returning.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
        assert_eq!(aclrtCreateEvent(&mut event), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut on_stream, BYTES, 0), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut on_default, BYTES, 0), ACL_SUCCESS);
        // A reset that is not the last one destroys nothing.
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        // Device 1's memory and events are not touched by device 0's
        // teardown. The gates are ACL_EVENT_SYNC events of device 1 that a
        // helper thread records 200 ms (the created stream's) and 400 ms
        // (the default stream's) from now: the work queued behind them is
        // still queued when device 0's last retain goes, and the default
        // stream's outlasts the created stream's.
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut kept, 64, 0), ACL_SUCCESS);
        assert_eq!(aclrtCreateEventWithFlag(&mut stream_gate, ACL_EVENT_SYNC), ACL_SUCCESS);
        assert_eq!(aclrtCreateEventWithFlag(&mut default_gate, ACL_EVENT_SYNC), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
        gated_fill(stream, stream_gate, on_stream, from_stream, 0xA5);
        gated_fill(null_mut(), default_gate, on_default, from_default, 0x5A);
    }
    let gates = [stream_gate as usize, default_gate as usize];
    let opener = std::thread::spawn(move || {
        for gate in gates {
            std::thread::sleep(Duration::from_millis(200));
            let gate = gate as aclrtEvent;
            // SAFETY: a live event, recorded on device 1's default stream.
            unsafe {
                assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
                assert_eq!(aclrtRecordEvent(gate, null_mut()), ACL_SUCCESS);
                assert_eq!(aclrtSynchronizeEvent(gate), ACL_SUCCESS);
                assert_eq!(aclrtDestroyEvent(gate), ACL_SUCCESS);
                assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
            }
        }
    });
    // SAFETY: no pointer arguments. Two retains of device 0 are left (this
    // thread set it three times and reset it once): the second reset is the
    // last.
    unsafe {
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
    assert!(all_bytes(from_stream, 0xA5), "a created stream's work ran to the end");
    assert!(
        all_bytes(from_default, 0x5A),
        "the default stream's work ran to the end"
    );
    opener.join().expect("the gate opened");
    let live = soft::live();
    assert_eq!(
        (
            live.streams,
            live.events,
            live.device_allocations,
            live.host_allocations
        ),
        (0, 0, 1, 2),
        "streams, events and device memory are gone; device 1's memory and pinned host memory stay"
    );
    // SAFETY: stale handles and freed addresses: every call validates them.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtDestroyStream(stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtDestroyEvent(event), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtFree(on_stream), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtFree(on_default), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            aclrtFreeHost(from_stream),
            ACL_SUCCESS,
            "pinned host memory is left as it is"
        );
        assert_eq!(aclrtFreeHost(from_default), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
        assert_eq!(aclrtFree(kept), ACL_SUCCESS, "device 1 kept its memory");
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
    }
    assert!(soft::live().is_empty(), "{}", soft::leak_report());
}

/// [`pinned`] allocated with `device` current on a thread of its own (which
/// holds no retain afterwards).
fn pinned_on(device: i32) -> *mut c_void {
    let address = soft_common::on_device_id(device, || pinned() as usize);
    address as *mut c_void
}
