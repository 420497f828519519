//! IPC events (`ACL_EVENT_IPC`, `aclrtIpcGetEventHandle`,
//! `aclrtIpcOpenEventHandle`) on the software device: the argument rules
//! with the runtime's codes, an event opened in this process sharing the
//! original's records, and a second process waiting for a record made here.
//! Software device only.
//!
//! The cross-process test re-runs this test binary as a child
//! (`child_peer`), which executes commands read line by line from its stdin.

mod soft_common;

use ascend_sys::*;
use soft_common::peer::{self, Peer};
use soft_common::raw::{Gate, create_stream, destroy_event, destroy_stream, plain_event, record, sync, wait_event};
use soft_common::{on_device_id as on_device, software, without_device};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

/// Set in the child's environment; without it the child test does nothing.
const CHILD_VAR: &str = "ASCEND_SOFT_IPC_EVENT_CHILD";

fn ipc_event() -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(
        unsafe { aclrtCreateEventExWithFlag(&mut event, ACL_EVENT_IPC) },
        ACL_SUCCESS
    );
    event
}

fn get_handle(event: aclrtEvent) -> Result<aclrtIpcEventHandle, aclError> {
    let mut handle = aclrtIpcEventHandle { reserved: [0; 64] };
    // SAFETY: `handle` is a valid out-pointer; the event is validated.
    match unsafe { aclrtIpcGetEventHandle(event, &mut handle) } {
        ACL_SUCCESS => Ok(handle),
        code => Err(code),
    }
}

fn open(handle: aclrtIpcEventHandle) -> Result<aclrtEvent, aclError> {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    match unsafe { aclrtIpcOpenEventHandle(handle, &mut event) } {
        ACL_SUCCESS => Ok(event),
        code => Err(code),
    }
}

fn status(event: aclrtEvent) -> aclrtEventRecordedStatus {
    let mut status = 99;
    // SAFETY: `status` is a valid out-pointer.
    assert_eq!(unsafe { aclrtQueryEventStatus(event, &mut status) }, ACL_SUCCESS);
    status
}

fn to_hex(handle: &aclrtIpcEventHandle) -> String {
    handle
        .reserved
        .iter()
        .map(|&byte| format!("{:02x}", byte as u8))
        .collect()
}

fn from_hex(text: &str) -> aclrtIpcEventHandle {
    let mut handle = aclrtIpcEventHandle { reserved: [0; 64] };
    for (at, byte) in handle.reserved.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * at..2 * at + 2], 16).expect("hex") as _;
    }
    handle
}

#[test]
fn ipc_event_argument_rules() {
    on_device(0, || {
        let event = ipc_event();
        // SAFETY: NULL arguments are refused before use: the handle first.
        unsafe {
            assert_eq!(aclrtIpcGetEventHandle(null_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
            assert!(soft_common::recent().contains("handle is NULL"));
            let mut handle = aclrtIpcEventHandle { reserved: [0; 64] };
            assert_eq!(aclrtIpcGetEventHandle(null_mut(), &mut handle), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtIpcOpenEventHandle(handle, null_mut()), ACL_ERROR_INVALID_PARAM);
        }
        assert_eq!(
            get_handle(0x5a5a_0000 as aclrtEvent).err(),
            Some(ACL_ERROR_RT_INVALID_HANDLE)
        );
        let plain = plain_event();
        assert_eq!(get_handle(plain).err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        destroy_event(plain);
        // A handle that names no IPC event.
        let garbage = aclrtIpcEventHandle { reserved: [7; 64] };
        assert_eq!(open(garbage).err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        let handle = get_handle(event).unwrap();
        // No current context.
        let text = to_hex(&handle);
        without_device(move || assert_eq!(open(from_hex(&text)).err(), Some(ACL_ERROR_RT_CONTEXT_NULL)));
        // What an IPC event does not support.
        let stream = create_stream();
        let mut old = 0;
        // SAFETY: live handles and a valid out-pointer.
        unsafe {
            assert_eq!(aclrtQueryEvent(event, &mut old), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
            assert_eq!(aclrtResetEvent(event, stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
            let mut stamp = 0;
            assert_eq!(
                aclrtEventGetTimestamp(event, &mut stamp),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
        }
        // A destroyed event's handle opens nothing.
        destroy_event(event);
        assert_eq!(open(handle).err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        destroy_stream(stream);
    });
}

#[test]
fn an_event_opened_in_this_process_shares_the_records() {
    on_device(0, || {
        let event = ipc_event();
        let opened = open(get_handle(event).unwrap()).unwrap();
        assert_ne!(opened, event);
        // Never recorded: complete, and synchronising returns at once.
        assert_eq!(status(opened), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        // SAFETY: a live event.
        assert_eq!(unsafe { aclrtSynchronizeEvent(opened) }, ACL_SUCCESS);
        let (recorder, waiter) = (create_stream(), create_stream());
        let gate = Gate::block(recorder);
        assert_eq!(record(event, recorder), ACL_SUCCESS);
        assert_eq!(status(opened), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        assert_eq!(wait_event(waiter, opened), ACL_SUCCESS);
        // SAFETY: `status` is a valid out-pointer.
        let mut query = 99;
        assert_eq!(unsafe { aclrtStreamQuery(waiter, &mut query) }, ACL_SUCCESS);
        assert_eq!(query, ACL_STREAM_STATUS_NOT_READY);
        gate.open();
        assert_eq!(sync(waiter), ACL_SUCCESS);
        assert_eq!(status(opened), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        // The opened event records too; the original sees it.
        assert_eq!(record(opened, recorder), ACL_SUCCESS);
        // SAFETY: a live event.
        assert_eq!(unsafe { aclrtSynchronizeEvent(event) }, ACL_SUCCESS);
        assert_eq!(status(event), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        destroy_stream(recorder);
        destroy_stream(waiter);
        destroy_event(opened);
        destroy_event(event);
    });
}

/// The child half: `sync <hex>` opens the event, waits for it (5 s at most)
/// and answers the code and whether it was complete after; `status <hex>`
/// answers the status of the opened event.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_peer() {
    peer::serve(CHILD_VAR, || {
        software();
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        |line: &str| {
            let (command, hex) = line.split_once(' ').unwrap_or((line, ""));
            match command {
                "pid" => std::process::id().to_string(),
                "sync" | "status" => match open(from_hex(hex)) {
                    Err(code) => code.to_string(),
                    Ok(event) => {
                        let code = if command == "sync" {
                            // SAFETY: a live event.
                            unsafe { aclrtSynchronizeEventWithTimeout(event, 5000) }
                        } else {
                            ACL_SUCCESS
                        };
                        let answer = format!("{code} {}", status(event));
                        destroy_event(event);
                        answer
                    }
                },
                other => format!("unknown command {other}"),
            }
        }
    });
}

#[test]
fn another_process_waits_for_a_record_made_here() {
    on_device(0, || {
        let event = ipc_event();
        let hex = to_hex(&get_handle(event).unwrap());
        let stream = create_stream();
        let gate = Gate::block(stream);
        assert_eq!(record(event, stream), ACL_SUCCESS);
        let mut peer = Peer::spawn(CHILD_VAR);
        let not_ready = ACL_EVENT_RECORDED_STATUS_NOT_READY.to_string();
        assert_eq!(peer.ask(&format!("status {hex}")), ["0", not_ready.as_str()]);
        const DELAY: Duration = Duration::from_millis(300);
        let started = Instant::now();
        let answer = std::thread::scope(|threads| {
            let asking = threads.spawn(|| peer.ask(&format!("sync {hex}")));
            std::thread::sleep(DELAY);
            gate.open();
            asking.join().expect("the asking thread")
        });
        let complete = ACL_EVENT_RECORDED_STATUS_COMPLETE.to_string();
        assert_eq!(answer, ["0", complete.as_str()]);
        assert!(started.elapsed() >= DELAY, "the child did not wait for the record");
        peer.quit();
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        destroy_event(event);
    });
}
