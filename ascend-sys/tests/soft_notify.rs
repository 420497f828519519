//! Notifies and count notifies (`aclrtCreateNotify` ... `aclrtCntNotify*`)
//! on the software device: the argument rules with the runtime's codes, a
//! record on one stream releasing one wait on another, the count notify's
//! modes, an import in this process, and a second process importing a key
//! (with and without the pid whitelist). Software device only: the codes of
//! the rules marked "software device" are choices (`docs/runtime-choices.md`).
//!
//! The cross-process test re-runs this test binary as a child
//! (`child_peer`), which executes commands read line by line from its stdin.

mod soft_common;

use ascend_sys::*;
use soft_common::peer::{self, Peer};
use soft_common::raw::{Gate, create_stream, destroy_stream, sync};
use soft_common::{on_device_id as on_device, software, without_device};
use std::ffi::{CStr, CString, c_char};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

/// Set in the child's environment; without it the child test does nothing.
const CHILD_VAR: &str = "ASCEND_SOFT_NOTIFY_CHILD";

fn create() -> aclrtNotify {
    let mut notify = null_mut();
    // SAFETY: `notify` is a valid out-pointer.
    assert_eq!(
        unsafe { aclrtCreateNotify(&mut notify, ACL_NOTIFY_DEFAULT) },
        ACL_SUCCESS
    );
    notify
}

fn destroy(notify: aclrtNotify) {
    // SAFETY: a handle only.
    assert_eq!(unsafe { aclrtDestroyNotify(notify) }, ACL_SUCCESS);
}

fn record(notify: aclrtNotify, stream: aclrtStream) -> aclError {
    // SAFETY: handles only.
    unsafe { aclrtRecordNotify(notify, stream) }
}

fn wait(notify: aclrtNotify, stream: aclrtStream, seconds: u32) -> aclError {
    // SAFETY: handles only.
    unsafe { aclrtWaitAndResetNotify(notify, stream, seconds) }
}

fn id(notify: aclrtNotify) -> u32 {
    let mut id = u32::MAX;
    // SAFETY: `id` is a valid out-pointer.
    assert_eq!(unsafe { aclrtGetNotifyId(notify, &mut id) }, ACL_SUCCESS);
    id
}

fn export(notify: aclrtNotify, flags: u64) -> Result<String, aclError> {
    let mut key = [0 as c_char; 65];
    // SAFETY: `key` holds 65 bytes.
    match unsafe { aclrtNotifyGetExportKey(notify, key.as_mut_ptr(), key.len(), flags) } {
        // SAFETY: the call wrote a NUL-terminated key.
        ACL_SUCCESS => Ok(unsafe { CStr::from_ptr(key.as_ptr()) }.to_string_lossy().into_owned()),
        code => Err(code),
    }
}

fn import(key: &str) -> Result<aclrtNotify, aclError> {
    let key = CString::new(key).expect("a key without NUL");
    let mut notify = null_mut();
    // SAFETY: a valid out-pointer and a NUL-terminated key.
    match unsafe { aclrtNotifyImportByKey(&mut notify, key.as_ptr(), ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT) } {
        ACL_SUCCESS => Ok(notify),
        code => Err(code),
    }
}

fn set_pids(notify: aclrtNotify, pids: &mut [i32]) -> aclError {
    // SAFETY: `pids` holds `len` entries.
    unsafe { aclrtNotifySetImportPid(notify, pids.as_mut_ptr(), pids.len()) }
}

fn status(stream: aclrtStream) -> aclrtStreamStatus {
    let mut status = 99;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtStreamQuery(stream, &mut status) }, ACL_SUCCESS);
    status
}

#[test]
fn notify_argument_rules() {
    on_device(0, || {
        // SAFETY: NULL arguments are refused before use.
        unsafe {
            assert_eq!(aclrtCreateNotify(null_mut(), 0), ACL_ERROR_INVALID_PARAM);
            let mut notify = null_mut();
            assert_eq!(aclrtCreateNotify(&mut notify, 2), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtDestroyNotify(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtRecordNotify(null_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtWaitAndResetNotify(null_mut(), null_mut(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtGetNotifyId(null_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtNotifyBatchReset(null_mut(), 1), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtNotifyImportByKey(null_mut(), c"k".as_ptr(), 0),
                ACL_ERROR_INVALID_PARAM
            );
        }
        let stale = 0x5a5a_0000 as aclrtNotify;
        assert_eq!(record(stale, null_mut()), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(wait(stale, null_mut(), 0), ACL_ERROR_RT_INVALID_HANDLE);
        let notify = create();
        // ACL_NOTIFY_DEVICE_USE_ONLY is accepted.
        let mut device_only = null_mut();
        // SAFETY: a valid out-pointer.
        assert_eq!(
            unsafe { aclrtCreateNotify(&mut device_only, ACL_NOTIFY_DEVICE_USE_ONLY) },
            ACL_SUCCESS
        );
        destroy(device_only);
        // Export: the key buffer, the flags (software device: 107000).
        let mut short = [0 as c_char; 64];
        // SAFETY: `short` holds 64 bytes.
        assert_eq!(
            unsafe { aclrtNotifyGetExportKey(notify, short.as_mut_ptr(), short.len(), 0) },
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(export(notify, 1).err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        // A whitelist before the export (software device: 107000).
        assert_eq!(set_pids(notify, &mut [1]), ACL_ERROR_RT_PARAM_INVALID);
        let key = export(notify, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT).unwrap();
        assert!(key.len() < 65);
        assert_eq!(export(notify, 0).unwrap(), key, "exporting again gives the same key");
        assert_eq!(set_pids(notify, &mut []), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(set_pids(notify, &mut [0]), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(set_pids(notify, &mut [1, 2]), ACL_SUCCESS);
        let mut pids = [1i32];
        let mut server = aclrtServerPid {
            sdid: 0,
            pid: pids.as_mut_ptr(),
            num: 1,
        };
        // SAFETY: valid arguments; NULL ones are refused.
        unsafe {
            assert_eq!(
                aclrtNotifySetImportPidInterServer(notify, null_mut(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtNotifySetImportPidInterServer(notify, &mut server, 1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
        }
        // Import: flags, keys that name nothing.
        let ckey = CString::new(key.clone()).unwrap();
        let mut imported = null_mut();
        // SAFETY: valid arguments.
        assert_eq!(
            unsafe { aclrtNotifyImportByKey(&mut imported, ckey.as_ptr(), 1) },
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(import("not a key").err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        let text = key.clone();
        without_device(move || assert_eq!(import(&text).err(), Some(ACL_ERROR_RT_CONTEXT_NULL)));
        // Batch reset: num 0, a stale handle.
        let mut handles = [notify, stale];
        // SAFETY: `handles` holds two entries.
        unsafe {
            assert_eq!(
                aclrtNotifyBatchReset(handles.as_mut_ptr(), 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtNotifyBatchReset(handles.as_mut_ptr(), 2),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            assert_eq!(aclrtNotifyBatchReset(handles.as_mut_ptr(), 1), ACL_SUCCESS);
        }
        destroy(notify);
        // A destroyed notify's key imports nothing; its handle is stale.
        assert_eq!(import(&key).err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        // SAFETY: a handle only.
        assert_eq!(unsafe { aclrtDestroyNotify(notify) }, ACL_ERROR_RT_INVALID_HANDLE);
        // No current context.
        without_device(|| {
            let mut notify = null_mut();
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { aclrtCreateNotify(&mut notify, 0) }, ACL_ERROR_RT_CONTEXT_NULL);
        });
    });
}

#[test]
fn a_record_releases_one_wait_on_another_stream() {
    on_device(0, || {
        let notify = create();
        let (producer, consumer) = (create_stream(), create_stream());
        let gate = Gate::block(producer);
        assert_eq!(record(notify, producer), ACL_SUCCESS);
        assert_eq!(wait(notify, consumer, 0), ACL_SUCCESS);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(status(consumer), ACL_STREAM_STATUS_NOT_READY);
        gate.open();
        assert_eq!(sync(consumer), ACL_SUCCESS);
        // The wait reset the notify: a second wait is not released
        // (software device: the timeout's code is the event wait's).
        let started = Instant::now();
        assert_eq!(wait(notify, consumer, 1), ACL_SUCCESS);
        assert_eq!(sync(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);
        assert!(started.elapsed() >= Duration::from_secs(1));
        // Two records before a wait count once.
        assert_eq!(record(notify, producer), ACL_SUCCESS);
        assert_eq!(record(notify, producer), ACL_SUCCESS);
        assert_eq!(sync(producer), ACL_SUCCESS);
        assert_eq!(wait(notify, consumer, 1), ACL_SUCCESS);
        assert_eq!(wait(notify, consumer, 1), ACL_SUCCESS);
        assert_eq!(sync(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);
        // A batch reset clears a record nobody waited for.
        assert_eq!(record(notify, producer), ACL_SUCCESS);
        assert_eq!(sync(producer), ACL_SUCCESS);
        let mut handles = [notify];
        // SAFETY: `handles` holds one entry.
        assert_eq!(unsafe { aclrtNotifyBatchReset(handles.as_mut_ptr(), 1) }, ACL_SUCCESS);
        assert_eq!(wait(notify, consumer, 1), ACL_SUCCESS);
        assert_eq!(sync(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);
        destroy_stream(producer);
        destroy_stream(consumer);
        destroy(notify);
    });
}

#[test]
fn destroying_a_notify_ends_only_the_waits_nothing_queued_can_release() {
    on_device(0, || {
        let (producer, consumer) = (create_stream(), create_stream());
        // A wait that no queued record can release ends at the destruction
        // (software device: recorded as misuse).
        let watch = soft::MisuseWatch::start();
        let notify = create();
        assert_eq!(wait(notify, consumer, 0), ACL_SUCCESS);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(status(consumer), ACL_STREAM_STATUS_NOT_READY);
        destroy(notify);
        assert_eq!(sync(consumer), ACL_SUCCESS);
        assert!(
            watch.seen().iter().any(|misuse| misuse.api == "aclrtDestroyNotify"),
            "{:?}",
            watch.seen()
        );
        // A wait whose record is queued still waits for that record.
        let notify = create();
        let gate = Gate::block(producer);
        assert_eq!(record(notify, producer), ACL_SUCCESS);
        assert_eq!(wait(notify, consumer, 0), ACL_SUCCESS);
        destroy(notify);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(status(consumer), ACL_STREAM_STATUS_NOT_READY);
        gate.open();
        assert_eq!(sync(consumer), ACL_SUCCESS);
        destroy_stream(producer);
        destroy_stream(consumer);
    });
}

#[test]
fn ids_count_up_per_kind() {
    on_device(0, || {
        let (first, second) = (create(), create());
        assert!(id(second) > id(first));
        let mut count = null_mut();
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { aclrtCntNotifyCreate(&mut count, 0) }, ACL_SUCCESS);
        let mut count_id = u32::MAX;
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { aclrtCntNotifyGetId(count, &mut count_id) }, ACL_SUCCESS);
        assert_ne!(count_id, u32::MAX);
        // A count notify is no notify, and the other way round.
        let mut ignored = 0;
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtGetNotifyId(count, &mut ignored), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(aclrtCntNotifyGetId(first, &mut ignored), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(aclrtCntNotifyDestroy(count), ACL_SUCCESS);
        }
        destroy(first);
        destroy(second);
    });
}

fn cnt_record(count: aclrtCntNotify, stream: aclrtStream, mode: aclrtCntNotifyRecordMode, value: u32) -> aclError {
    let mut info = aclrtCntNotifyRecordInfo { mode, value };
    // SAFETY: a valid info.
    unsafe { aclrtCntNotifyRecord(count, stream, &mut info) }
}

fn cnt_wait(
    count: aclrtCntNotify,
    stream: aclrtStream,
    mode: aclrtCntNotifyWaitMode,
    value: u32,
    clear: bool,
) -> aclError {
    let mut info = aclrtCntNotifyWaitInfo {
        mode,
        value,
        timeout: 1,
        isClear: clear,
        rsv: [0; 3],
    };
    // SAFETY: a valid info.
    unsafe { aclrtCntNotifyWaitWithTimeout(count, stream, &mut info) }
}

#[test]
fn count_notify_modes() {
    on_device(0, || {
        let mut count = null_mut();
        // SAFETY: out-pointers; NULL and a non-zero flag are refused.
        unsafe {
            assert_eq!(aclrtCntNotifyCreate(null_mut(), 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtCntNotifyCreate(&mut count, 1), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtCntNotifyCreate(&mut count, 0), ACL_SUCCESS);
            assert_eq!(
                aclrtCntNotifyRecord(count, null_mut(), null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtCntNotifyWaitWithTimeout(count, null_mut(), null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
        }
        let (producer, consumer) = (create_stream(), create_stream());
        assert_eq!(cnt_record(count, producer, 3, 1), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(cnt_wait(count, consumer, 5, 1, false), ACL_ERROR_RT_PARAM_INVALID);
        // Three additions release a wait for >= 3, which clears the counter.
        for _ in 0..3 {
            assert_eq!(
                cnt_record(count, producer, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1),
                ACL_SUCCESS
            );
        }
        assert_eq!(
            cnt_wait(count, consumer, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 3, true),
            ACL_SUCCESS
        );
        assert_eq!(sync(consumer), ACL_SUCCESS);
        assert_eq!(
            cnt_wait(count, consumer, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, false),
            ACL_SUCCESS
        );
        assert_eq!(sync(consumer), ACL_SUCCESS);
        // Bits: set, OR, AND; a bitmask wait.
        assert_eq!(
            cnt_record(count, producer, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 0b0011),
            ACL_SUCCESS
        );
        assert_eq!(
            cnt_record(count, producer, ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0b1100),
            ACL_SUCCESS
        );
        assert_eq!(
            cnt_record(count, producer, ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, 0b1010),
            ACL_SUCCESS
        );
        assert_eq!(
            cnt_wait(
                count,
                consumer,
                ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE,
                0b1010,
                false
            ),
            ACL_SUCCESS
        );
        assert_eq!(sync(consumer), ACL_SUCCESS);
        // A condition that never holds times out (1 s).
        assert_eq!(
            cnt_wait(count, consumer, ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 0, false),
            ACL_SUCCESS
        );
        assert_eq!(sync(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);
        // A reset on a stream clears the counter.
        // SAFETY: handles only.
        assert_eq!(unsafe { aclrtCntNotifyReset(count, producer) }, ACL_SUCCESS);
        assert_eq!(sync(producer), ACL_SUCCESS);
        assert_eq!(
            cnt_wait(count, consumer, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, false),
            ACL_SUCCESS
        );
        assert_eq!(sync(consumer), ACL_SUCCESS);
        destroy_stream(producer);
        destroy_stream(consumer);
        // SAFETY: a handle only.
        assert_eq!(unsafe { aclrtCntNotifyDestroy(count) }, ACL_SUCCESS);
    });
}

#[test]
fn a_notify_imported_in_this_process_shares_the_bit() {
    on_device(0, || {
        let notify = create();
        let key = export(notify, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT).unwrap();
        let imported = import(&key).unwrap();
        assert_ne!(imported, notify);
        assert_eq!(id(imported), id(notify));
        // An imported notify is not exported again (software device).
        assert_eq!(export(imported, 0).err(), Some(ACL_ERROR_RT_PARAM_INVALID));
        let (producer, consumer) = (create_stream(), create_stream());
        assert_eq!(record(imported, producer), ACL_SUCCESS);
        assert_eq!(wait(notify, consumer, 5), ACL_SUCCESS);
        assert_eq!(sync(consumer), ACL_SUCCESS);
        destroy_stream(producer);
        destroy_stream(consumer);
        destroy(imported);
        destroy(notify);
    });
}

/// The child half: `pid` answers its pid; `import <key>` answers the code
/// of the import; `record <key>` imports, records the notify and
/// synchronises, answering the code.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_peer() {
    peer::serve(CHILD_VAR, || {
        software();
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        |line: &str| {
            let (command, key) = line.split_once(' ').unwrap_or((line, ""));
            match command {
                "pid" => std::process::id().to_string(),
                "import" | "record" => match import(key) {
                    Err(code) => code.to_string(),
                    Ok(notify) => {
                        let mut code = ACL_SUCCESS;
                        if command == "record" {
                            let stream = create_stream();
                            code = record(notify, stream);
                            if code == ACL_SUCCESS {
                                code = sync(stream);
                            }
                            destroy_stream(stream);
                        }
                        destroy(notify);
                        code.to_string()
                    }
                },
                other => format!("unknown command {other}"),
            }
        }
    });
}

#[test]
fn another_process_imports_by_key_with_the_whitelist() {
    on_device(0, || {
        let notify = create();
        let key = export(notify, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT).unwrap();
        let mut peer = Peer::spawn(CHILD_VAR);
        // Not on the whitelist yet.
        assert_eq!(peer.code(&format!("import {key}")), ACL_ERROR_RT_NO_PERMISSION);
        let pid = peer.pid();
        assert_eq!(set_pids(notify, &mut [pid]), ACL_SUCCESS);
        // The child records; a wait here is released.
        let stream = create_stream();
        assert_eq!(wait(notify, stream, 5), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("record {key}")), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        peer.quit();
        // Without validation, any process imports.
        let open = create();
        let open_key = export(open, ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION).unwrap();
        let mut peer = Peer::spawn(CHILD_VAR);
        assert_eq!(peer.code(&format!("import {open_key}")), ACL_SUCCESS);
        peer.quit();
        destroy_stream(stream);
        destroy(open);
        destroy(notify);
    });
}
