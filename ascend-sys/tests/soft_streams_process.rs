//! Stream checks that need the whole process to themselves: live stream and
//! event counts, worker threads ending with their stream, and task failures
//! (which free device memory that another test could otherwise reuse).
//! Everything runs in one test, in order. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::create_stream;
use soft_common::recent;
use std::ffi::c_void;
use std::ptr::null_mut;

/// Threads of this process whose name starts like a stream worker's
/// (`ascend-soft-stream-N`, cut to 15 bytes by the kernel).
fn stream_workers() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .filter(|name| name.starts_with("ascend-soft-str"))
        .count()
}

/// Waits (up to a second) until [`stream_workers`] is `expected`: a new
/// thread names itself after it starts.
fn expect_workers(expected: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while stream_workers() != expected && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(stream_workers(), expected);
}

fn sync_event() -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(
        unsafe { aclrtCreateEventWithFlag(&mut event, ACL_EVENT_SYNC) },
        ACL_SUCCESS
    );
    event
}

fn live_counts_and_joined_workers() {
    assert_eq!((soft::live().streams, soft::live().events), (0, 0));
    let workers_before = stream_workers();
    let streams: Vec<_> = (0..3).map(|_| create_stream()).collect();
    let events = [sync_event(), sync_event()];
    assert_eq!((soft::live().streams, soft::live().events), (3, 2));
    expect_workers(workers_before + 3);
    let report = soft::leak_report();
    assert_eq!(report.matches("stream 0x").count(), 3, "{report}");
    assert_eq!(report.matches("event 0x").count(), 2, "{report}");
    assert!(!soft::live().is_empty());
    for stream in streams {
        // SAFETY: a live stream, destroyed once.
        assert_eq!(unsafe { aclrtDestroyStream(stream) }, ACL_SUCCESS);
    }
    for event in events {
        // SAFETY: a live event, destroyed once.
        assert_eq!(unsafe { aclrtDestroyEvent(event) }, ACL_SUCCESS);
    }
    assert_eq!((soft::live().streams, soft::live().events), (0, 0));
    // Each destroy joined its worker (the kernel may list an exited
    // thread for a moment after the join).
    expect_workers(workers_before);
}

fn task_failures_are_reported_by_the_next_synchronisation() {
    for through_device in [false, true] {
        let mut dev: *mut c_void = null_mut();
        // SAFETY: `dev` is a valid out-pointer.
        assert_eq!(unsafe { aclrtMalloc(&mut dev, 4096, 0) }, ACL_SUCCESS);
        let stream = create_stream();
        let gate = sync_event();
        let opener = create_stream();
        // SAFETY: live handles and memory (freed below, while queued: the
        // misuse this test is about).
        unsafe {
            assert_eq!(aclrtStreamWaitEvent(stream, gate), ACL_SUCCESS);
            assert_eq!(aclrtMemsetAsync(dev, 4096, 1, 4096, stream), ACL_SUCCESS);
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            assert_eq!(aclrtRecordEvent(gate, opener), ACL_SUCCESS);
            let rc = if through_device {
                aclrtSynchronizeDevice()
            } else {
                aclrtSynchronizeStream(stream)
            };
            assert_eq!(rc, ACL_ERROR_RT_SYS_DMA);
            let message = recent();
            assert!(message.contains("memset"), "{message}");
            assert!(message.contains("not inside a live allocation"), "{message}");
            // Reported once.
            assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(opener), ACL_SUCCESS);
            assert_eq!(aclrtDestroyEvent(gate), ACL_SUCCESS);
        }
    }
}

fn destroying_an_event_releases_a_stream_waiting_for_its_next_record() {
    let stream = create_stream();
    let gate = sync_event();
    let tag = format!("{:#x}", gate as usize);
    // SAFETY: live handles.
    unsafe {
        assert_eq!(aclrtStreamWaitEvent(stream, gate), ACL_SUCCESS);
        assert_eq!(
            aclrtSynchronizeStreamWithTimeout(stream, 10),
            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        );
        assert_eq!(aclrtDestroyEvent(gate), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
    }
    assert!(
        soft::misuse()
            .iter()
            .any(|m| m.api == "aclrtDestroyEvent" && m.description.contains(&tag))
    );
}

#[test]
fn process_wide_stream_behaviour() {
    select_backend(BackendRequest::Software).expect("software device");
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    live_counts_and_joined_workers();
    task_failures_are_reported_by_the_next_synchronisation();
    destroying_an_event_releases_a_stream_waiting_for_its_next_record();
    assert_eq!((soft::live().streams, soft::live().events), (0, 0));
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
}
