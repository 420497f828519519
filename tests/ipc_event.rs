//! `IpcEvent` (`ACL_EVENT_IPC`, `aclrtIpcGetEventHandle`,
//! `aclrtIpcOpenEventHandle`) within one process (the software device lets a
//! process open its own IPC events; the cross-process wait is tested on the
//! raw calls, `ascend-sys/tests/soft_ipc_event.rs`).

mod common;

use ascend::ErrorCode;
use ascend::stream::{IpcEvent, IpcEventHandle, Stream};
use common::gate::gated;
use common::{device, software_only};

#[test]
fn an_opened_event_sees_the_records() {
    software_only(|| {
        let device = device();
        let (recorder, waiter) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
        let shared = IpcEvent::new(&device).unwrap();
        let handle = shared.handle().unwrap();
        let opened = IpcEvent::open(&device, &IpcEventHandle::from_bytes(*handle.as_bytes())).unwrap();
        assert!(opened.query().unwrap(), "complete before the first record");
        gated(&device, &recorder, || {
            shared.record(&recorder).unwrap();
            assert!(!opened.query().unwrap());
            waiter.wait_event(&opened).unwrap();
            assert!(!waiter.query().unwrap(), "the waiter waits for the held-back record");
        });
        waiter.synchronize().unwrap();
        assert!(opened.query().unwrap());
        // What IPC events do not support.
        assert_eq!(
            opened.reset(&recorder).unwrap_err().code(),
            Some(ErrorCode::RT_FEATURE_NOT_SUPPORT)
        );
        opened.destroy().unwrap();
        drop(shared);
        // The creator's event is gone: its handle opens nothing.
        assert!(IpcEvent::open(&device, &handle).is_err());
    });
}

#[test]
fn handles_round_trip_through_bytes() {
    let device = device();
    let Ok(shared) = IpcEvent::new(&device) else {
        return; // a chip without IPC events
    };
    let handle = shared.handle().unwrap();
    assert_eq!(IpcEventHandle::from_bytes(*handle.as_bytes()), handle);
    assert!(format!("{handle:?}").starts_with("IpcEventHandle("));
}
