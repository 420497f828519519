//! The harness of the sanitizer's tests (`tests/soft_sanitize*.rs`): run a
//! body under every check and collect the reports, assert a planted hazard
//! is reported and its synchronised twin is not, and the raw calls those
//! bodies make, each asserting success with the recent error message.
//!
//! The sanitizer is process-wide, so the reports of one test binary are
//! collected one body at a time (a lock).

use super::on_device;
use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

/// Asserts `code` is success, with the software device's message if not.
pub fn ok(code: aclError, what: &str) {
    assert_eq!(
        code,
        ACL_SUCCESS,
        "{what}: {}",
        soft::recent_error().unwrap_or_default()
    );
}

/// The sanitizer's reports (races, uninitialised reads, misused
/// synchronisation) while `body` runs on device 0 under every check.
pub fn reports(body: impl FnOnce() + Send) -> Vec<String> {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    soft::start_sanitizer(soft::Checks::all());
    let watch = soft::MisuseWatch::start();
    on_device(body);
    watch
        .seen()
        .into_iter()
        .map(|misuse| misuse.description)
        .filter(|text| {
            text.starts_with("race") || text.starts_with("uninitialized read") || text.starts_with("sync misuse")
        })
        .collect()
}

/// `body(false)` (the hazard) is reported once, with every word of `words`;
/// `body(true)` (its synchronised twin) is not reported.
pub fn planted(words: &[&str], body: impl Fn(bool) + Sync) {
    let found = reports(|| body(false));
    assert_eq!(found.len(), 1, "one report expected, got {found:#?}");
    for word in words {
        assert!(found[0].contains(word), "{word:?} missing from {:?}", found[0]);
    }
    let twin = reports(|| body(true));
    assert!(twin.is_empty(), "the synchronised twin was reported: {twin:#?}");
}

/// `body`, correctly ordered, is not reported.
pub fn quiet(body: impl FnOnce() + Send) {
    let found = reports(body);
    assert!(found.is_empty(), "{found:#?}");
}

/// A new stream on the current device.
pub fn stream() -> aclrtStream {
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateStream(&mut stream) }, "create stream");
    stream
}

/// Synchronises and destroys a stream from [`stream`].
pub fn done(stream: aclrtStream) {
    // SAFETY: a live stream.
    ok(unsafe { aclrtSynchronizeStream(stream) }, "synchronize");
    // SAFETY: a live stream, destroyed once.
    ok(unsafe { aclrtDestroyStream(stream) }, "destroy stream");
}

/// `size` bytes of device memory on the current device.
pub fn malloc(size: usize) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: valid out-pointer.
    ok(
        unsafe { aclrtMalloc(&mut ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) },
        "malloc",
    );
    ptr
}

/// Frees what [`malloc`] returned.
pub fn free(ptr: *mut c_void) {
    // SAFETY: a live allocation, freed once.
    ok(unsafe { aclrtFree(ptr) }, "free");
}

/// Queues a memset of `len` bytes at `ptr` to `value` on `stream`.
pub fn fill(ptr: *mut c_void, value: i32, len: usize, stream: aclrtStream) {
    // SAFETY: `ptr` is device memory of at least `len` bytes.
    ok(unsafe { aclrtMemsetAsync(ptr, len, value, len, stream) }, "memsetAsync");
}
