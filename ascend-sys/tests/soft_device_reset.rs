//! The last `aclrtResetDevice` of a device tears its primary context down,
//! as on hardware: the device's streams, events and `aclrtMalloc*` memory
//! stop existing, and later calls on them fail as for destroyed handles and
//! freed memory (docs/runtime-choices.md). Work queued before the reset
//! still runs to the end. One test: retains are process-wide, so the file
//! needs its process to itself. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::software;
use std::ptr::null_mut;

#[test]
fn the_last_reset_destroys_the_devices_streams_events_and_memory() {
    software();
    let data = vec![0xA5u8; 1 << 20];
    let mut host = vec![0u8; data.len()];
    let (mut stream, mut event, mut device, mut kept) = (null_mut(), null_mut(), null_mut(), null_mut());
    // SAFETY: valid out-pointers; `data` and `host` outlive the copy, which
    // the reset lets finish before returning.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
        assert_eq!(aclrtCreateEvent(&mut event), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut device, data.len(), 0), ACL_SUCCESS);
        // A reset that is not the last one destroys nothing.
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        // Device 1's memory is not touched by device 0's teardown.
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut kept, 64, 0), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
        // Queued work, then the last retain of device 0 goes.
        assert_eq!(
            aclrtMemcpyAsync(
                device,
                data.len(),
                data.as_ptr().cast(),
                data.len(),
                ACL_MEMCPY_HOST_TO_DEVICE,
                stream
            ),
            ACL_SUCCESS
        );
        assert_eq!(
            aclrtMemcpyAsync(
                host.as_mut_ptr().cast(),
                host.len(),
                device,
                data.len(),
                ACL_MEMCPY_DEVICE_TO_HOST,
                stream
            ),
            ACL_SUCCESS
        );
        // Two retains are left: the second reset is the last.
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
    assert_eq!(host, data, "work queued before the teardown ran to the end");
    let live = soft::live();
    assert_eq!((live.streams, live.events, live.device_allocations), (0, 0, 1));
    // SAFETY: stale handles and a freed address: every call validates them.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtDestroyStream(stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtDestroyEvent(event), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtFree(device), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
        assert_eq!(aclrtFree(kept), ACL_SUCCESS, "device 1 kept its memory");
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
    }
    assert!(soft::live().is_empty(), "{}", soft::leak_report());
}
