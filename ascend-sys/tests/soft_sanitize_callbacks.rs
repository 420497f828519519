//! The sanitizer orders a callback with its stream: the host accesses a
//! callback makes come after the work queued before it (and, for a
//! blocking callback, before the work queued after it). Planted races
//! through callbacks are reported; their correctly ordered twins are not.
//! Software device only (the sanitizer is part of it).

mod soft_common;

use ascend_sys::*;
use soft_common::on_device;
use soft_common::sanitize::ok;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());
const N: usize = 4096;

fn races(body: impl FnOnce() + Send) -> Vec<String> {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    soft::start_sanitizer(soft::Checks::RACE);
    let watch = soft::MisuseWatch::start();
    on_device(body);
    watch
        .seen()
        .into_iter()
        .map(|misuse| misuse.description)
        .filter(|text| text.starts_with("race"))
        .collect()
}

/// Reads the device buffer at `data` on the host, as a callback would.
unsafe extern "C" fn read_back(data: *mut c_void) {
    let mut out = [0u8; N];
    // SAFETY: `data` is device memory of N bytes, alive until the test
    // has processed its callbacks.
    let rc = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), N, data, N, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(rc, ACL_SUCCESS);
}

/// A callback on `a` reads a buffer written by a memset queued on `writer`
/// before it: a race unless `writer` is `a`.
fn callback_reads(same_stream: bool, block: aclrtCallbackBlockType, memset_after: bool) {
    let (mut a, mut b, mut buf) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid out-pointers, live handles, every callback processed
    // before the buffer is freed.
    unsafe {
        ok(aclrtCreateStream(&mut a), "stream a");
        ok(aclrtCreateStream(&mut b), "stream b");
        ok(aclrtMalloc(&mut buf, N, ACL_MEM_MALLOC_HUGE_FIRST), "malloc");
        ok(aclrtMemset(buf, N, 0, N), "memset");
        ok(aclrtSubscribeReport(current_thread_id(), a), "subscribe");
        let writer = if same_stream { a } else { b };
        if !memset_after {
            ok(aclrtMemsetAsync(buf, N, 1, N, writer), "memsetAsync before");
        }
        ok(aclrtLaunchCallback(Some(read_back), buf, block, a), "launch");
        if memset_after {
            ok(aclrtMemsetAsync(buf, N, 2, N, a), "memsetAsync after");
        }
        ok(aclrtProcessReport(5_000), "process");
        for stream in [a, b] {
            ok(aclrtSynchronizeStream(stream), "synchronize");
        }
        ok(aclrtUnSubscribeReport(current_thread_id(), a), "unsubscribe");
        for stream in [a, b] {
            ok(aclrtDestroyStream(stream), "destroy");
        }
        ok(aclrtFree(buf), "free");
    }
}

#[test]
fn a_callback_reading_what_another_stream_writes_races() {
    let found = races(|| callback_reads(false, ACL_CALLBACK_NO_BLOCK, false));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("aclrtMemsetAsync") && found[0].contains("aclrtMemcpy"),
        "{}",
        found[0]
    );
    let twin = races(|| callback_reads(true, ACL_CALLBACK_NO_BLOCK, false));
    assert!(
        twin.is_empty(),
        "the work before the callback is ordered before it: {twin:#?}"
    );
}

#[test]
fn work_after_a_non_blocking_callback_races_with_it_but_not_after_a_blocking_one() {
    let found = races(|| callback_reads(true, ACL_CALLBACK_NO_BLOCK, true));
    assert_eq!(found.len(), 1, "{found:#?}");
    let twin = races(|| callback_reads(true, ACL_CALLBACK_BLOCK, true));
    assert!(
        twin.is_empty(),
        "a blocking callback holds back the work after it: {twin:#?}"
    );
}
