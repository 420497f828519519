//! The hardware path, for real, without an NPU.
//!
//! A fake `libascendcl.so` (`tests/fake_acl/fake_acl.c`, built at test time
//! with the system C compiler) exports a handful of AscendCL functions, logs
//! every call with its arguments to `$FAKE_ACL_LOG`, and deliberately lacks
//! others. Because the backend is chosen once per process, every scenario
//! runs in a child process: each parent test re-runs this test binary on one
//! `#[ignore]`d child test with the scenario's environment, requires it to
//! pass, then checks the fake library's call log.

mod support;

use ascend_sys::*;
use core::ffi::CStr;
use core::ptr;
use support::{Child, fake_library, is_child, marked_fake_library, report_address};

/// What the fake library's `aclrtSetDevice` returns for an id >= 7.
const FAKE_INVALID_DEVICE: aclError = 107001;
/// The fake library's `aclrtMalloc` returns this plus the size.
const FAKE_DEVICE_BASE: usize = 0xdead_0000;

/// A fabricated virtual address, above 4 GiB so that a truncated pointer shows.
const FAKE_VA: usize = 0x1000_0020_0000;
/// A fabricated physical-memory handle, above 4 GiB too.
const FAKE_HANDLE: usize = 0xfeed_0000_beef;
/// A fabricated host source address for the copy.
const FAKE_HOST: usize = 0x1234_5678_9abc;
/// `destMax` of the copy: 8 GiB, which does not fit 32 bits.
const COPY_DEST_MAX: usize = 8 << 30;
/// `flags` of `aclrtMapMem`: bit 32 and bit 1, to prove a `uint64_t` passes
/// intact.
const MAP_FLAGS: u64 = 0x1_0000_0002;

/// `aclGetRecentErrMsg()`, copied at once (the pointer is only valid until
/// the next AscendCL call).
fn recent_message() -> Option<String> {
    // SAFETY: `aclGetRecentErrMsg` takes no arguments.
    let message = unsafe { aclGetRecentErrMsg() };
    if message.is_null() {
        return None;
    }
    // SAFETY: a non-NULL result is a NUL-terminated string that stays valid
    // until the next AscendCL call on this thread; it is copied before that.
    Some(unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned())
}

fn device_count() -> (aclError, u32) {
    let mut count = 0u32;
    // SAFETY: `count` is a valid out-pointer for the duration of the call.
    let rc = unsafe { aclrtGetDeviceCount(&mut count) };
    (rc, count)
}

// ---------------------------------------------------------------------------
// a. Calls reach the library with their arguments intact.
// ---------------------------------------------------------------------------

#[test]
fn calls_reach_the_library_with_arguments_intact() {
    let run = Child::new("child_calls_reach_the_library")
        .env("ASCEND_BACKEND", "hardware")
        .fake_lib()
        .run();
    let count = run.address("count");
    let dev_ptr = run.address("devPtr");
    let allocated = FAKE_DEVICE_BASE + 4096;
    run.assert_log(&[
        "aclInit configPath=0x0".to_string(),
        "aclrtSetDevice deviceId=3".to_string(),
        format!("aclrtGetDeviceCount count={count}"),
        format!("aclrtMalloc devPtr={dev_ptr} size=4096 policy={ACL_MEM_MALLOC_NORMAL_ONLY}"),
        format!(
            "aclrtMemcpy dst={allocated:#x} destMax={COPY_DEST_MAX} src={FAKE_HOST:#x} count=4096 \
             kind={ACL_MEMCPY_HOST_TO_DEVICE}"
        ),
        format!("aclrtMapMem virPtr={FAKE_VA:#x} size=2097152 offset=65536 handle={FAKE_HANDLE:#x} flags={MAP_FLAGS}"),
        format!("aclrtFree devPtr={allocated:#x}"),
        "aclrtGetSocName".to_string(),
        "aclrtSetDevice deviceId=9".to_string(),
        "aclGetRecentErrMsg".to_string(),
        "aclFinalize".to_string(),
    ]);
    // The literal values, in case the constants above were wrong together
    // with the fake library.
    let log = run.log_lines();
    assert!(
        log[4].contains("destMax=8589934592 src=0x123456789abc"),
        "{}",
        run.describe()
    );
    assert!(
        log[5].ends_with("handle=0xfeed0000beef flags=4294967298"),
        "{}",
        run.describe()
    );
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_calls_reach_the_library() {
    if !is_child("child_calls_reach_the_library") {
        return;
    }
    let expected_path = std::env::var_os("ASCEND_ACL_LIB").expect("ASCEND_ACL_LIB set by the parent");
    let expected_path = std::path::Path::new(&expected_path);

    let info = backend().expect("the fake library opens");
    assert_eq!(info.backend, Backend::Hardware);
    assert_eq!(info.requested, BackendRequest::Hardware);
    assert_eq!(info.requested_by, "ASCEND_BACKEND");
    assert_eq!(info.library_path.as_deref(), Some(expected_path));
    assert_eq!(info.attempts.len(), 1, "{:?}", info.attempts);
    assert_eq!(info.attempts[0].path, expected_path);
    assert_eq!(info.attempts[0].source, "ASCEND_ACL_LIB");
    assert_eq!(info.attempts[0].error, None);
    assert!(
        info.describe().contains(&*expected_path.to_string_lossy()),
        "{}",
        info.describe()
    );

    // SAFETY: NULL is a valid `configPath` (use the defaults).
    assert_eq!(unsafe { aclInit(ptr::null()) }, ACL_SUCCESS);
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(3) }, ACL_SUCCESS);

    let mut count = 0u32;
    report_address("count", &count);
    // SAFETY: `count` is a valid out-pointer for the duration of the call.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
    assert_eq!(count, 7);

    let mut dev_ptr: *mut c_void = ptr::null_mut();
    report_address("devPtr", &dev_ptr);
    // SAFETY: `dev_ptr` is a valid out-pointer for the duration of the call.
    let rc = unsafe { aclrtMalloc(&mut dev_ptr, 4096, ACL_MEM_MALLOC_NORMAL_ONLY) };
    assert_eq!(rc, ACL_SUCCESS);
    assert_eq!(dev_ptr.addr(), FAKE_DEVICE_BASE + 4096);

    // SAFETY: the fake library only records the arguments of `aclrtMemcpy`;
    // it never reads `src` nor writes `dst`, so fabricated addresses are fine.
    let rc = unsafe {
        aclrtMemcpy(
            dev_ptr,
            COPY_DEST_MAX,
            ptr::without_provenance(FAKE_HOST),
            4096,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    };
    assert_eq!(rc, ACL_SUCCESS);

    // SAFETY: the fake library only records the arguments of `aclrtMapMem`;
    // nothing is mapped and neither address is dereferenced.
    let rc = unsafe {
        aclrtMapMem(
            ptr::without_provenance_mut(FAKE_VA),
            2 << 20,
            65536,
            ptr::without_provenance_mut(FAKE_HANDLE),
            MAP_FLAGS,
        )
    };
    assert_eq!(rc, ACL_SUCCESS);

    // SAFETY: `dev_ptr` came from `aclrtMalloc` of the same library.
    assert_eq!(unsafe { aclrtFree(dev_ptr) }, ACL_SUCCESS);

    // SAFETY: no arguments.
    let soc = unsafe { aclrtGetSocName() };
    assert!(!soc.is_null());
    // SAFETY: the fake library returns a static NUL-terminated string.
    assert_eq!(unsafe { CStr::from_ptr(soc) }, c"FakeAscend910");

    // The library's own error code passes through unchanged.
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(9) }, FAKE_INVALID_DEVICE);
    assert_eq!(recent_message().as_deref(), Some("fake library message"));

    // SAFETY: no arguments.
    assert_eq!(unsafe { aclFinalize() }, ACL_SUCCESS);
}

// ---------------------------------------------------------------------------
// b. A symbol the library lacks.
// ---------------------------------------------------------------------------

#[test]
fn a_missing_symbol_is_unsupported_and_named() {
    let run = Child::new("child_missing_symbol")
        .env("ASCEND_BACKEND", "hardware")
        .fake_lib()
        .run();
    let count = run.address("count");
    // The crate's own message was served without reaching the library; the
    // missing functions never did either.
    run.assert_log(&[
        format!("aclrtGetDeviceCount count={count}"),
        "aclGetRecentErrMsg".to_string(),
    ]);
    let log = run.log_lines();
    assert!(
        !log.iter()
            .any(|line| line.contains("aclrtMemMapNoAccess") || line.contains("aclrtReserveMemAddress")),
        "{}",
        run.describe()
    );
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_missing_symbol() {
    if !is_child("child_missing_symbol") {
        return;
    }
    assert_eq!(backend().expect("the fake library opens").backend, Backend::Hardware);

    for attempt in 0..2 {
        // SAFETY: the call never reaches a library (the symbol is missing),
        // and the fake one would not dereference these addresses anyway.
        let rc = unsafe {
            aclrtMemMapNoAccess(
                ptr::without_provenance_mut(FAKE_VA),
                2 << 20,
                0,
                ptr::without_provenance_mut(FAKE_HANDLE),
                0,
            )
        };
        assert_eq!(rc, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "call {attempt}");
        let message = recent_message().expect("a message naming the missing symbol");
        assert!(message.contains("aclrtMemMapNoAccess"), "call {attempt}: {message}");
    }

    let mut reserved: *mut c_void = ptr::null_mut();
    // SAFETY: `reserved` is a valid out-pointer; NULL `expectPtr` means "any address".
    let rc = unsafe { aclrtReserveMemAddress(&mut reserved, 2 << 20, 0, ptr::null_mut(), 0) };
    assert_eq!(rc, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert!(reserved.is_null(), "the out-pointer must be left alone");
    let message = recent_message().expect("a message naming the missing symbol");
    assert!(message.contains("aclrtReserveMemAddress"), "{message}");
    assert!(
        !message.contains("aclrtMemMapNoAccess"),
        "the newer failure replaces the older: {message}"
    );

    // A successful forwarded call clears the crate's message: the library's
    // own `aclGetRecentErrMsg` answers again.
    let mut count = 0u32;
    report_address("count", &count);
    // SAFETY: `count` is a valid out-pointer for the duration of the call.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
    assert_eq!(count, 7);
    assert_eq!(recent_message().as_deref(), Some("fake library message"));
}

// ---------------------------------------------------------------------------
// c. Hardware requested, no library.
// ---------------------------------------------------------------------------

#[test]
fn hardware_with_a_bad_explicit_path_lists_it() {
    let run = Child::new("child_bad_explicit_path")
        .env("ASCEND_BACKEND", "hardware")
        .env("ASCEND_ACL_LIB", "/nonexistent/libascendcl.so")
        .run();
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_bad_explicit_path() {
    if !is_child("child_bad_explicit_path") {
        return;
    }
    let Err(BackendError::LibraryNotFound { attempts }) = backend() else {
        panic!("expected LibraryNotFound, got {:?}", backend());
    };
    assert_eq!(attempts.len(), 1, "ASCEND_ACL_LIB is the only candidate: {attempts:?}");
    assert_eq!(attempts[0].path.to_str(), Some("/nonexistent/libascendcl.so"));
    assert_eq!(attempts[0].source, "ASCEND_ACL_LIB");
    assert!(
        attempts[0].error.as_ref().is_some_and(|error| !error.is_empty()),
        "{attempts:?}"
    );
    let error = backend().unwrap_err().to_string();
    assert_eq!(error.matches("/nonexistent/libascendcl.so").count(), 1, "{error}");
    for what_to_do in ["ASCEND_ACL_LIB", "set_env.sh", "ASCEND_BACKEND=auto"] {
        assert!(error.contains(what_to_do), "{what_to_do} missing from: {error}");
    }
    assert!(
        error
            .lines()
            .any(|line| line.starts_with("  tried /nonexistent/libascendcl.so (ASCEND_ACL_LIB): ")),
        "{error}"
    );

    let (rc, _) = device_count();
    assert_eq!(rc, ACL_ERROR_RT_NO_DEVICE);
    let message = recent_message().expect("a message explaining why there is no backend");
    assert!(message.contains("/nonexistent/libascendcl.so"), "{message}");
    assert!(message.contains("aclrtGetDeviceCount"), "{message}");
}

#[test]
fn hardware_without_a_library_tries_the_documented_order() {
    let run = Child::new("child_search_order")
        .env("ASCEND_BACKEND", "hardware")
        .env("ASCEND_HOME_PATH", "/nonexistent-home")
        .env("ASCEND_TOOLKIT_HOME", "/nonexistent-toolkit")
        .run();
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_search_order() {
    if !is_child("child_search_order") {
        return;
    }
    let documented = [
        "/nonexistent-home/lib64/libascendcl.so",
        "/nonexistent-toolkit/lib64/libascendcl.so",
        "/usr/local/Ascend/cann/lib64/libascendcl.so",
        "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so",
        "libascendcl.so",
    ];
    match backend() {
        Err(BackendError::LibraryNotFound { attempts }) => {
            let paths: Vec<String> = attempts
                .iter()
                .map(|attempt| attempt.path.display().to_string())
                .collect();
            assert_eq!(paths, documented);
            assert_eq!(attempts[0].source, "ASCEND_HOME_PATH");
            assert_eq!(attempts[1].source, "ASCEND_TOOLKIT_HOME");
            for attempt in attempts {
                assert!(
                    attempt.error.as_ref().is_some_and(|error| !error.is_empty()),
                    "{attempt:?}"
                );
            }
            let (rc, _) = device_count();
            assert_eq!(rc, ACL_ERROR_RT_NO_DEVICE);
            let message = recent_message().expect("a message explaining why there is no backend");
            for path in documented {
                let lines = message
                    .lines()
                    .filter(|line| line.starts_with(&format!("  tried {path} (")))
                    .count();
                assert_eq!(lines, 1, "{path}: one line per attempt in: {message}");
            }
            for line in message.lines().filter(|line| line.starts_with("  tried ")) {
                // The path is named once per line: the loader's own message
                // (which starts with the path) is not repeated.
                let path = line["  tried ".len()..].split(' ').next().unwrap_or_default();
                assert_eq!(line.matches(path).count(), 1, "{line}");
            }
        }
        // A machine with CANN installed in a default location: the order up
        // to the library that opened is still the documented one.
        Ok(info) => {
            let paths: Vec<String> = info
                .attempts
                .iter()
                .map(|attempt| attempt.path.display().to_string())
                .collect();
            assert!(
                paths.len() <= documented.len() && paths.iter().zip(documented).all(|(a, b)| a == b),
                "{paths:?}"
            );
            eprintln!(
                "child_search_order: a real library opened ({}); checked the order up to it",
                info.describe()
            );
        }
        Err(other) => panic!("expected LibraryNotFound, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// d. auto: the library when it opens, the software device otherwise.
// ---------------------------------------------------------------------------

#[test]
fn auto_without_a_library_falls_back_to_the_software_device() {
    let run = Child::new("child_auto_falls_back")
        .env("ASCEND_BACKEND", "auto")
        .env("ASCEND_ACL_LIB", "/nonexistent/x.so")
        .run();
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_auto_falls_back() {
    if !is_child("child_auto_falls_back") {
        return;
    }
    let info = backend().expect("auto always has a backend");
    assert_eq!(info.backend, Backend::Software);
    assert_eq!(info.requested, BackendRequest::Auto);
    assert_eq!(info.library_path, None);
    assert_eq!(info.attempts.len(), 1, "{:?}", info.attempts);
    assert_eq!(info.attempts[0].path.to_str(), Some("/nonexistent/x.so"));
    assert_eq!(info.attempts[0].source, "ASCEND_ACL_LIB");
    assert!(info.attempts[0].error.is_some());
    let description = info.describe();
    assert_eq!(description.matches("/nonexistent/x.so").count(), 1, "{description}");
    assert_eq!(
        description.lines().count(),
        2,
        "a first line and one per attempt: {description}"
    );

    let (rc, count) = device_count();
    assert_eq!(rc, ACL_SUCCESS, "{:?}", recent_message());
    assert!(count >= 1);
}

#[test]
fn auto_falling_back_on_an_npu_host_warns_once() {
    let run = Child::new("child_auto_falls_back_on_npu_host")
        .env("ASCEND_BACKEND", "auto")
        .env("ASCEND_HOME_PATH", "/nonexistent/Ascend/cann")
        .run();
    run.assert_log(&[]);
}

/// A logger that keeps every record of `ascend_sys`, for the tests of what
/// the backend choice logs.
struct KeptLog(std::sync::Mutex<Vec<(log::Level, String)>>);

impl KeptLog {
    /// Installs it as this process's logger, at every level.
    fn install() -> &'static KeptLog {
        static KEPT: KeptLog = KeptLog(std::sync::Mutex::new(Vec::new()));
        log::set_logger(&KEPT).expect("the only logger of this child");
        log::set_max_level(log::LevelFilter::Trace);
        &KEPT
    }

    /// The records so far.
    fn records(&self) -> Vec<(log::Level, String)> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

impl log::Log for KeptLog {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        if record.target().starts_with("ascend_sys") {
            let mut kept = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            kept.push((record.level(), record.args().to_string()));
        }
    }
    fn flush(&self) {}
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_auto_falls_back_on_npu_host() {
    if !is_child("child_auto_falls_back_on_npu_host") {
        return;
    }
    let kept_log = KeptLog::install();

    let info = backend().expect("auto always has a backend");
    assert_eq!(info.backend, Backend::Software);
    assert_eq!(info.npu_host_signs, ["ASCEND_HOME_PATH is set"]);
    let description = info.describe();
    let warning = description.lines().last().unwrap_or_default();
    assert!(
        warning.contains("WARNING: this host looks like an NPU host (ASCEND_HOME_PATH is set)"),
        "{description}"
    );
    assert!(
        warning.contains("ASCEND_BACKEND=hardware") && warning.contains("ASCEND_ACL_LIB"),
        "{description}"
    );
    let (rc, _) = device_count();
    assert_eq!(rc, ACL_SUCCESS, "{:?}", recent_message());
    let _ = backend();

    let kept = kept_log.records();
    let warnings: Vec<_> = kept.iter().filter(|(level, _)| *level == log::Level::Warn).collect();
    assert_eq!(warnings.len(), 1, "one warning, once: {kept:?}");
    assert_eq!(warnings[0].1, description, "the warning is the description");
    assert!(
        !kept
            .iter()
            .any(|(level, text)| *level != log::Level::Warn && text.starts_with("AscendCL backend")),
        "the choice is logged once, at warn: {kept:?}"
    );
}

#[test]
fn a_missing_library_is_reported_once() {
    Child::new("child_missing_library_reported_once")
        .env("ASCEND_BACKEND", "hardware")
        .env("ASCEND_ACL_LIB", "/nonexistent/libascendcl.so")
        .run();
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_missing_library_reported_once() {
    if !is_child("child_missing_library_reported_once") {
        return;
    }
    let kept_log = KeptLog::install();

    let error = backend().expect_err("no library, hardware required");
    assert!(error.to_string().contains("/nonexistent/libascendcl.so"), "{error}");
    let (rc, _) = device_count();
    assert_eq!(rc, ACL_ERROR_RT_NO_DEVICE);
    let message = recent_message().unwrap_or_default();
    assert!(
        message.contains("/nonexistent/libascendcl.so"),
        "the call says why: {message}"
    );

    let kept = kept_log.records();
    assert!(
        !kept.iter().any(|(level, _)| *level <= log::Level::Info),
        "the failure reaches the program as an error, not also as a log line: {kept:?}"
    );
}

#[test]
fn auto_with_a_library_uses_it() {
    let run = Child::new("child_auto_uses_library")
        .env("ASCEND_BACKEND", "auto")
        .fake_lib()
        .run();
    let count = run.address("count");
    run.assert_log(&[format!("aclrtGetDeviceCount count={count}")]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_auto_uses_library() {
    if !is_child("child_auto_uses_library") {
        return;
    }
    let info = backend().expect("the fake library opens");
    assert_eq!(info.backend, Backend::Hardware);
    assert_eq!(info.requested, BackendRequest::Auto);
    assert_eq!(info.library_path.as_deref(), Some(fake_library()));

    let mut count = 0u32;
    report_address("count", &count);
    // SAFETY: `count` is a valid out-pointer for the duration of the call.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
    assert_eq!(count, 7);
}

// ---------------------------------------------------------------------------
// e. An invalid ASCEND_BACKEND.
// ---------------------------------------------------------------------------

#[test]
fn an_invalid_backend_request_is_an_error() {
    // The fake library is named too: it must never be opened.
    let run = Child::new("child_invalid_request")
        .env("ASCEND_BACKEND", "bogus")
        .fake_lib()
        .run();
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_invalid_request() {
    if !is_child("child_invalid_request") {
        return;
    }
    let Err(BackendError::InvalidRequest { value }) = backend() else {
        panic!("expected InvalidRequest, got {:?}", backend());
    };
    assert_eq!(value, "bogus");

    let (rc, _) = device_count();
    assert_eq!(rc, ACL_ERROR_RT_NO_DEVICE);
    let message = recent_message().expect("a message explaining why there is no backend");
    assert!(message.contains("bogus"), "{message}");

    // SAFETY: NULL is a valid `configPath`.
    assert_eq!(unsafe { aclInit(ptr::null()) }, ACL_ERROR_RT_NO_DEVICE);
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_ERROR_RT_NO_DEVICE);
    let message = recent_message().expect("a message explaining why there is no backend");
    assert!(message.contains("aclrtSetDevice"), "{message}");
}

// ---------------------------------------------------------------------------
// f. select_backend overrides ASCEND_BACKEND, once.
// ---------------------------------------------------------------------------

#[test]
fn select_backend_overrides_the_variable() {
    let run = Child::new("child_select_backend_overrides")
        .env("ASCEND_BACKEND", "hardware")
        .fake_lib()
        .run();
    // Not one call reached the library (it was never even opened).
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_select_backend_overrides() {
    if !is_child("child_select_backend_overrides") {
        return;
    }
    let info = select_backend(BackendRequest::Software).expect("the software device");
    assert_eq!(info.backend, Backend::Software);
    assert_eq!(info.requested_by, "select_backend");
    assert!(
        info.attempts.is_empty(),
        "no library is looked for: {:?}",
        info.attempts
    );

    let (rc, count) = device_count();
    assert_eq!(rc, ACL_SUCCESS, "{:?}", recent_message());
    assert!(count >= 1);
    assert_eq!(backend().expect("a backend").backend, Backend::Software);

    // Asking again for what is active is fine; asking for the other is not.
    assert_eq!(
        select_backend(BackendRequest::Software).expect("same choice").backend,
        Backend::Software
    );
    assert_eq!(
        select_backend(BackendRequest::Auto).expect("auto is satisfied").backend,
        Backend::Software
    );
    match select_backend(BackendRequest::Hardware) {
        Err(BackendError::AlreadyChosen { active }) => assert_eq!(active, "software"),
        other => panic!("expected AlreadyChosen, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// f. The software-device library (ascend-soft-acl) is never loaded as the
//    hardware backend: a library exporting the marker symbol is refused.
// ---------------------------------------------------------------------------

/// The one line the refusal of `path` adds to the attempts.
fn assert_refused(attempts: &[LibraryAttempt], path: &std::path::Path) {
    let attempt = attempts
        .iter()
        .find(|attempt| attempt.path == path)
        .unwrap_or_else(|| panic!("{} was not tried: {attempts:?}", path.display()));
    let error = attempt
        .error
        .as_deref()
        .expect("the marked library is refused, not used");
    assert!(error.starts_with("refused:"), "{error}");
    assert!(error.contains(SOFTWARE_LIBRARY_MARKER), "{error}");
    assert!(error.contains("ascend-soft-acl"), "{error}");
}

#[test]
fn auto_refuses_the_software_library_and_runs_in_process() {
    let run = Child::new("child_auto_refuses_marked")
        .env("ASCEND_BACKEND", "auto")
        .env("ASCEND_ACL_LIB", marked_fake_library())
        .run();
    // Not one call reached the marked library.
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_auto_refuses_marked() {
    if !is_child("child_auto_refuses_marked") {
        return;
    }
    let info = backend().expect("auto always has a backend");
    assert_eq!(info.backend, Backend::Software);
    assert_eq!(info.library_path, None);
    assert_eq!(info.attempts.len(), 1, "{:?}", info.attempts);
    assert_refused(&info.attempts, marked_fake_library());
    let description = info.describe();
    assert!(
        description.lines().any(|line| line.starts_with(&format!(
            "  tried {} (ASCEND_ACL_LIB): refused:",
            marked_fake_library().display()
        ))),
        "{description}"
    );
    // The in-process software device answers (the fake library says 7).
    let (rc, count) = device_count();
    assert_eq!(rc, ACL_SUCCESS, "{:?}", recent_message());
    assert_ne!(count, 7);
}

#[test]
fn hardware_refuses_the_software_library_and_lists_it() {
    let run = Child::new("child_hardware_refuses_marked")
        .env("ASCEND_BACKEND", "hardware")
        .env("ASCEND_ACL_LIB", marked_fake_library())
        .run();
    run.assert_log(&[]);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_hardware_refuses_marked() {
    if !is_child("child_hardware_refuses_marked") {
        return;
    }
    let Err(BackendError::LibraryNotFound { attempts }) = backend() else {
        panic!("expected LibraryNotFound, got {:?}", backend());
    };
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_refused(&attempts, marked_fake_library());
    let error = backend().unwrap_err().to_string();
    let path = marked_fake_library().display().to_string();
    let lines: Vec<&str> = error.lines().filter(|line| line.starts_with("  tried ")).collect();
    assert_eq!(lines.len(), 1, "one line per attempt: {error}");
    assert!(
        lines[0].starts_with(&format!("  tried {path} (ASCEND_ACL_LIB): refused:")),
        "{error}"
    );
    assert_eq!(lines[0].matches(&*path).count(), 1, "{error}");
    let (rc, _) = device_count();
    assert_eq!(rc, ACL_ERROR_RT_NO_DEVICE);
}

#[test]
fn the_search_goes_on_after_the_software_library() {
    // The marked library first (ASCEND_HOME_PATH), the real (fake) one after
    // it (ASCEND_TOOLKIT_HOME): the second one is used.
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("refusal-{}", std::process::id()));
    let (soft_root, real_root) = (root.join("soft"), root.join("real"));
    for (dir, library) in [(&soft_root, marked_fake_library()), (&real_root, fake_library())] {
        std::fs::create_dir_all(dir.join("lib64")).expect("a lib64 directory");
        std::fs::copy(library, dir.join("lib64/libascendcl.so")).expect("a copy of the library");
    }
    let run = Child::new("child_search_goes_on")
        .env("ASCEND_BACKEND", "hardware")
        .env("ASCEND_HOME_PATH", &soft_root)
        .env("ASCEND_TOOLKIT_HOME", &real_root)
        .run();
    let count = run.address("count");
    run.assert_log(&[format!("aclrtGetDeviceCount count={count}")]);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_search_goes_on() {
    if !is_child("child_search_goes_on") {
        return;
    }
    let info = backend().expect("the second library opens");
    assert_eq!(info.backend, Backend::Hardware);
    let home = std::env::var_os("ASCEND_HOME_PATH").expect("set by the parent");
    let toolkit = std::env::var_os("ASCEND_TOOLKIT_HOME").expect("set by the parent");
    let marked = std::path::Path::new(&home).join("lib64/libascendcl.so");
    assert_refused(&info.attempts, &marked);
    assert_eq!(
        info.library_path.as_deref(),
        Some(std::path::Path::new(&toolkit).join("lib64/libascendcl.so").as_path())
    );
    let mut count = 0u32;
    report_address("count", &count);
    // SAFETY: `count` is a valid out-pointer for the duration of the call.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
    assert_eq!(count, 7);
}

#[test]
fn the_fake_library_builds() {
    // Fails loudly (rather than skipping) when there is no C compiler.
    assert!(fake_library().is_file(), "{}", fake_library().display());
}
