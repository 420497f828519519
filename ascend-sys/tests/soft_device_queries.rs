//! The device queries and event calls of issue 41 on the software device:
//! `aclrtGetDeviceInfo`, `aclrtDeviceGetStreamPriorityRange`, the device
//! resource limits, `aclrtQueryDeviceStatus`,
//! `aclrtGetDeviceUtilizationRate`, `aclrtRecordEventWithFlag`,
//! `aclrtStreamWaitEventWithFlag`, `aclrtGetEventId` and
//! `aclrtGetEventAvailNum`: each argument rule returns the runtime's code.
//! Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{
    Gate, create_stream, destroy_event, destroy_stream, event_with_flag, plain_event, record, sync,
};
use soft_common::{on_device_id as on_device, without_device};
use std::ptr::null_mut;

fn info(device: u32, attr: aclrtDevAttr) -> Result<i64, aclError> {
    let mut value = -1;
    // SAFETY: `value` is a valid out-pointer.
    match unsafe { aclrtGetDeviceInfo(device, attr, &mut value) } {
        ACL_SUCCESS => Ok(value),
        code => Err(code),
    }
}

#[test]
fn device_attributes() {
    without_device(|| {
        assert_eq!(info(0, ACL_DEV_ATTR_CUBE_CORE_NUM), Ok(24));
        assert_eq!(info(0, ACL_DEV_ATTR_AICORE_CORE_NUM), Ok(24));
        assert_eq!(info(0, ACL_DEV_ATTR_VECTOR_CORE_NUM), Ok(48));
        assert_eq!(info(0, ACL_DEV_ATTR_AICPU_CORE_NUM), Ok(6));
        assert_eq!(info(1, ACL_DEV_ATTR_PHY_CHIP_ID), Ok(1));
        assert_eq!(info(0, ACL_DEV_ATTR_IS_VIRTUAL), Ok(0));
        assert_eq!(info(0, ACL_DEV_ATTR_L2_CACHE_SIZE), Ok(192 << 20));
        let mut total = 0;
        let mut free = 0;
        on_device(0, || {
            // SAFETY: valid out-pointers.
            let code = unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) };
            assert_eq!(code, ACL_SUCCESS);
        });
        assert_eq!(info(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE), Ok(total as i64));
        // Attributes of chips the software device does not model.
        assert_eq!(info(0, ACL_DEV_ATTR_WARP_SIZE), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        assert_eq!(
            info(0, ACL_DEV_ATTR_SUPER_POD_ID),
            Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
        );
        // No attribute, a device that is not there, a NULL value.
        assert_eq!(info(0, 7), Err(ACL_ERROR_RT_PARAM_INVALID));
        assert_eq!(info(99, ACL_DEV_ATTR_CUBE_CORE_NUM), Err(ACL_ERROR_RT_INVALID_DEVICEID));
        assert_eq!(info(99, 7), Err(ACL_ERROR_RT_INVALID_DEVICEID));
        // SAFETY: a NULL value is refused before use.
        let code = unsafe { aclrtGetDeviceInfo(99, 7, null_mut()) };
        assert_eq!(code, ACL_ERROR_INVALID_PARAM);
    });
}

#[test]
fn stream_priority_range() {
    without_device(|| {
        let (mut least, mut greatest) = (-1, -1);
        // SAFETY: valid out-pointers.
        assert_eq!(
            unsafe { aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest) },
            ACL_SUCCESS
        );
        assert_eq!((least, greatest), (7, 0));
        // SAFETY: NULL out-pointers are refused before use.
        assert_eq!(
            unsafe { aclrtDeviceGetStreamPriorityRange(null_mut(), &mut greatest) },
            ACL_ERROR_INVALID_PARAM
        );
        // SAFETY: as above.
        assert_eq!(
            unsafe { aclrtDeviceGetStreamPriorityRange(&mut least, null_mut()) },
            ACL_ERROR_INVALID_PARAM
        );
    });
}

fn limit(device: i32, kind: aclrtDevResLimitType) -> Result<u32, aclError> {
    let mut value = 0;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetDeviceResLimit(device, kind, &mut value) } {
        ACL_SUCCESS => Ok(value),
        code => Err(code),
    }
}

fn in_thread(kind: aclrtDevResLimitType) -> u32 {
    let mut value = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetResInCurrentThread(kind, &mut value) }, ACL_SUCCESS);
    value
}

/// Device 1 only: no other test of this file uses its limits.
#[test]
fn resource_limits() {
    const DEVICE: i32 = 1;
    assert_eq!(limit(DEVICE, ACL_RT_DEV_RES_CUBE_CORE), Ok(24));
    assert_eq!(limit(DEVICE, ACL_RT_DEV_RES_VECTOR_CORE), Ok(48));
    // SAFETY: plain values.
    unsafe {
        assert_eq!(aclrtSetDeviceResLimit(DEVICE, ACL_RT_DEV_RES_CUBE_CORE, 8), ACL_SUCCESS);
        assert_eq!(
            aclrtSetDeviceResLimit(DEVICE, ACL_RT_DEV_RES_CUBE_CORE, 12),
            ACL_SUCCESS
        );
        assert_eq!(
            aclrtSetDeviceResLimit(DEVICE, ACL_RT_DEV_RES_VECTOR_CORE, 0),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            aclrtSetDeviceResLimit(DEVICE, ACL_RT_DEV_RES_VECTOR_CORE, 49),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(aclrtSetDeviceResLimit(DEVICE, 2, 1), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtSetDeviceResLimit(99, 2, 1), ACL_ERROR_RT_INVALID_DEVICEID);
    }
    // The last setting wins; the thread's view narrows with it.
    assert_eq!(limit(DEVICE, ACL_RT_DEV_RES_CUBE_CORE), Ok(12));
    assert_eq!(limit(DEVICE, ACL_RT_DEV_RES_VECTOR_CORE), Ok(48));
    on_device(DEVICE, || assert_eq!(in_thread(ACL_RT_DEV_RES_CUBE_CORE), 12));
    assert_eq!(limit(DEVICE, 2), Err(ACL_ERROR_RT_PARAM_INVALID));
    assert_eq!(limit(-1, ACL_RT_DEV_RES_CUBE_CORE), Err(ACL_ERROR_RT_INVALID_DEVICEID));
    // SAFETY: a NULL value is refused before use.
    let code = unsafe { aclrtGetDeviceResLimit(DEVICE, ACL_RT_DEV_RES_CUBE_CORE, null_mut()) };
    assert_eq!(code, ACL_ERROR_INVALID_PARAM);
    // SAFETY: plain values.
    unsafe {
        assert_eq!(aclrtResetDeviceResLimit(99), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(aclrtResetDeviceResLimit(DEVICE), ACL_SUCCESS);
    }
    assert_eq!(limit(DEVICE, ACL_RT_DEV_RES_CUBE_CORE), Ok(24));
    on_device(DEVICE, || assert_eq!(in_thread(ACL_RT_DEV_RES_CUBE_CORE), 24));
}

#[test]
fn device_status_and_utilization() {
    without_device(|| {
        let mut status = 99;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtQueryDeviceStatus(0, &mut status) }, ACL_SUCCESS);
        assert_eq!(status, ACL_RT_DEVICE_STATUS_NORMAL);
        // SAFETY: as above; then a NULL status is refused before use.
        unsafe {
            assert_eq!(aclrtQueryDeviceStatus(99, &mut status), ACL_ERROR_RT_INVALID_DEVICEID);
            assert_eq!(aclrtQueryDeviceStatus(0, null_mut()), ACL_ERROR_INVALID_PARAM);
        }
        let mut info = aclrtUtilizationInfo {
            cubeUtilization: -1,
            vectorUtilization: -1,
            aicpuUtilization: -1,
            memoryUtilization: -1,
            utilizationExtend: null_mut(),
        };
        // SAFETY: valid out-pointer with a NULL reserved field.
        assert_eq!(unsafe { aclrtGetDeviceUtilizationRate(0, &mut info) }, ACL_SUCCESS);
        assert_eq!(
            (info.cubeUtilization, info.vectorUtilization, info.aicpuUtilization),
            (0, 0, 0)
        );
        assert!((0..=100).contains(&info.memoryUtilization));
        let mut reserved = 0_u8;
        info.utilizationExtend = (&raw mut reserved).cast();
        // SAFETY: the reserved field is refused before it is read through.
        unsafe {
            assert_eq!(aclrtGetDeviceUtilizationRate(0, &mut info), ACL_ERROR_INVALID_PARAM);
            info.utilizationExtend = null_mut();
            assert_eq!(
                aclrtGetDeviceUtilizationRate(99, &mut info),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(aclrtGetDeviceUtilizationRate(0, null_mut()), ACL_ERROR_INVALID_PARAM);
        }
    });
}

#[test]
fn records_and_waits_with_flags() {
    on_device(0, || {
        let stream = create_stream();
        let event = event_with_flag(ACL_EVENT_SYNC);
        // SAFETY: live handles; flags and NULL arguments checked before use.
        unsafe {
            assert_eq!(aclrtRecordEventWithFlag(event, stream, 2), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtRecordEventWithFlag(null_mut(), stream, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtRecordEventWithFlag(event, stream, ACL_EVENT_RECORD_EXTERNAL),
                ACL_ERROR_RT_STREAM_NOT_CAPTURED
            );
            assert_eq!(
                aclrtRecordEventWithFlag(event, 0x1234 as aclrtStream, ACL_EVENT_RECORD_EXTERNAL),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            assert_eq!(
                aclrtStreamWaitEventWithFlag(stream, event, 0, 2),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtStreamWaitEventWithFlag(stream, event, 5, ACL_EVENT_WAIT_EXTERNAL),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtStreamWaitEventWithFlag(stream, event, 0, ACL_EVENT_WAIT_EXTERNAL),
                ACL_ERROR_RT_STREAM_NOT_CAPTURED
            );
            assert_eq!(
                aclrtStreamWaitEventWithFlag(stream, null_mut(), 0, 0),
                ACL_ERROR_INVALID_PARAM
            );
        }
        // DEFAULT: a record and a wait as usual; the waiting stream waits.
        let waiter = create_stream();
        let gate = Gate::block(stream);
        // SAFETY: live handles.
        unsafe {
            assert_eq!(
                aclrtRecordEventWithFlag(event, stream, ACL_EVENT_RECORD_DEFAULT),
                ACL_SUCCESS
            );
            assert_eq!(
                aclrtStreamWaitEventWithFlag(waiter, event, 0, ACL_EVENT_WAIT_DEFAULT),
                ACL_SUCCESS
            );
        }
        let mut status = 99;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtStreamQuery(waiter, &mut status) }, ACL_SUCCESS);
        assert_eq!(status, ACL_STREAM_STATUS_NOT_READY);
        gate.open();
        assert_eq!(sync(waiter), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_event(event);
        destroy_stream(waiter);
        destroy_stream(stream);
    });
}

fn event_id(event: aclrtEvent) -> Result<u32, aclError> {
    let mut id = 0;
    // SAFETY: valid out-pointer; the handle is validated.
    match unsafe { aclrtGetEventId(event, &mut id) } {
        ACL_SUCCESS => Ok(id),
        code => Err(code),
    }
}

fn available() -> Result<u32, aclError> {
    let mut count = 0;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetEventAvailNum(&mut count) } {
        ACL_SUCCESS => Ok(count),
        code => Err(code),
    }
}

#[test]
fn event_ids_and_events_left() {
    on_device(0, || {
        let first = plain_event();
        let second = plain_event();
        let (a, b) = (event_id(first).unwrap(), event_id(second).unwrap());
        assert_ne!(a, b);
        assert_eq!(event_id(first), Ok(a), "an event keeps its id");
        let left = available().unwrap();
        assert!(left < 65_536 && left > 60_000, "{left} events left");
        let ipc = {
            let mut event = null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(
                unsafe { aclrtCreateEventExWithFlag(&mut event, ACL_EVENT_IPC) },
                ACL_SUCCESS
            );
            event
        };
        assert_eq!(event_id(ipc), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        assert_eq!(event_id(0x1234 as aclrtEvent), Err(ACL_ERROR_RT_INVALID_HANDLE));
        assert_eq!(event_id(null_mut()), Err(ACL_ERROR_INVALID_PARAM));
        // SAFETY: NULL out-pointers are refused before use.
        unsafe {
            assert_eq!(aclrtGetEventId(first, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtGetEventAvailNum(null_mut()), ACL_ERROR_INVALID_PARAM);
        }
        let stream = create_stream();
        assert_eq!(record(first, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        for event in [first, second, ipc] {
            destroy_event(event);
        }
        assert_eq!(event_id(first), Err(ACL_ERROR_RT_INVALID_HANDLE));
    });
    without_device(|| assert_eq!(available(), Err(ACL_ERROR_RT_CONTEXT_NULL)));
}
