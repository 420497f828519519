//! Stream callbacks and host functions (`aclrtSubscribeReport`,
//! `aclrtLaunchCallback`, `aclrtProcessReport`, `aclrtUnSubscribeReport`,
//! `aclrtLaunchHostFunc`, `aclrtSubscribeHostFunc`, `aclrtProcessHostFunc`,
//! `aclrtUnSubscribeHostFunc`) and the state callbacks
//! (`aclrtRegStreamStateCallback`, `aclrtRegDeviceStateCallback`): the
//! rules and the runtime's codes. Written against the crate-root functions,
//! so the bodies hold on hardware too; the assertions only the software
//! device can make (its misuse list) are marked.

mod soft_common;

use ascend_sys::*;
use soft_common::{on_device, recent};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

const N: usize = 256;

fn ok(code: aclError, what: &str) {
    assert_eq!(code, ACL_SUCCESS, "{what}: {}", recent());
}

fn stream() -> aclrtStream {
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateStream(&mut stream) }, "create stream");
    stream
}

fn destroy(stream: aclrtStream) {
    // SAFETY: a live stream, destroyed once.
    ok(unsafe { aclrtDestroyStream(stream) }, "destroy stream");
}

fn malloc() -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtMalloc(&mut ptr, N, ACL_MEM_MALLOC_HUGE_FIRST) }, "malloc");
    ptr
}

fn free(ptr: *mut c_void) {
    // SAFETY: a live allocation, freed once.
    ok(unsafe { aclrtFree(ptr) }, "free");
}

fn fill(ptr: *mut c_void, value: i32, stream: aclrtStream) {
    // SAFETY: `ptr` is device memory of `N` bytes.
    ok(unsafe { aclrtMemsetAsync(ptr, N, value, N, stream) }, "memsetAsync");
}

fn me() -> u64 {
    current_thread_id()
}

/// What a reading callback saw: the first byte of the buffer it read.
struct Probe {
    buffer: *mut c_void,
    seen: Mutex<Vec<u8>>,
    thread: AtomicUsize,
}

impl Probe {
    fn new(buffer: *mut c_void) -> Self {
        Self {
            buffer,
            seen: Mutex::new(Vec::new()),
            thread: AtomicUsize::new(0),
        }
    }

    fn seen(&self) -> Vec<u8> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads the probe's buffer with a synchronous copy and notes its first byte.
unsafe extern "C" fn read_probe(data: *mut c_void) {
    // SAFETY: `data` is a `Probe` that outlives the callback (the tests
    // process every callback before dropping it).
    let probe = unsafe { &*data.cast::<Probe>() };
    let mut bytes = [0u8; N];
    // SAFETY: `bytes` holds N bytes; the buffer is device memory of N bytes.
    let rc = unsafe { aclrtMemcpy(bytes.as_mut_ptr().cast(), N, probe.buffer, N, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(rc, ACL_SUCCESS);
    probe.seen.lock().unwrap().push(bytes[0]);
    probe.thread.store(current_thread_id() as usize, Ordering::SeqCst);
}

unsafe extern "C" fn count(data: *mut c_void) {
    // SAFETY: `data` is an `AtomicUsize` that outlives the callback.
    unsafe { &*data.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

fn as_data<T>(value: &T) -> *mut c_void {
    std::ptr::from_ref(value).cast_mut().cast()
}

#[test]
fn a_callback_runs_on_its_thread_after_the_work_before_it() {
    on_device(|| {
        let (s, buf) = (stream(), malloc());
        let probe = Probe::new(buf);
        // SAFETY: live stream; the probe outlives the processing below.
        unsafe {
            ok(aclrtSubscribeReport(me(), s), "subscribe");
            fill(buf, 7, s);
            ok(
                aclrtLaunchCallback(Some(read_probe), as_data(&probe), ACL_CALLBACK_NO_BLOCK, s),
                "launch",
            );
            ok(aclrtProcessReport(5_000), "process");
            assert_eq!(probe.seen(), vec![7], "the callback saw the memset queued before it");
            assert_eq!(
                probe.thread.load(Ordering::SeqCst) as u64,
                me(),
                "it ran on the subscribed thread"
            );
            ok(aclrtSynchronizeStream(s), "synchronize");
            ok(aclrtUnSubscribeReport(me(), s), "unsubscribe");
        }
        destroy(s);
        free(buf);
    });
}

#[test]
fn a_blocking_callback_holds_back_the_work_after_it() {
    on_device(|| {
        let (s, buf) = (stream(), malloc());
        let probe = Probe::new(buf);
        // SAFETY: live stream; the probe outlives the processing below.
        unsafe {
            ok(aclrtSubscribeReport(me(), s), "subscribe");
            fill(buf, 1, s);
            ok(
                aclrtLaunchCallback(Some(read_probe), as_data(&probe), ACL_CALLBACK_BLOCK, s),
                "launch",
            );
            fill(buf, 2, s);
            std::thread::sleep(std::time::Duration::from_millis(50));
            let mut status = ACL_STREAM_STATUS_COMPLETE;
            ok(aclrtStreamQuery(s, &mut status), "query");
            assert_eq!(status, ACL_STREAM_STATUS_NOT_READY, "the stream waits for its callback");
            ok(aclrtProcessReport(5_000), "process");
            ok(aclrtSynchronizeStream(s), "synchronize");
            assert_eq!(probe.seen(), vec![1], "the memset after the callback had not run");
            ok(aclrtUnSubscribeReport(me(), s), "unsubscribe");
        }
        destroy(s);
        free(buf);
    });
}

#[test]
fn argument_rules_and_codes() {
    on_device(|| {
        let s = stream();
        let calls = AtomicUsize::new(0);
        // SAFETY: live stream; the counter outlives every call.
        unsafe {
            assert_eq!(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM, "timeout 0");
            assert_eq!(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM, "timeout below -1");
            assert_eq!(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "no subscription");
            assert_eq!(
                aclrtProcessHostFunc(0),
                ACL_ERROR_RT_PARAM_INVALID,
                "host func timeout 0"
            );
            assert_eq!(
                aclrtProcessHostFunc(10),
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                "no host func subscription"
            );
            let data = as_data(&calls);
            assert_eq!(
                aclrtLaunchCallback(Some(count), data, 2, s),
                ACL_ERROR_INVALID_PARAM,
                "block type"
            );
            assert_eq!(
                aclrtLaunchCallback(Some(count), data, ACL_CALLBACK_NO_BLOCK, s),
                ACL_ERROR_RT_STREAM_NO_CB_REG,
                "no thread subscribed to the stream"
            );
            assert_eq!(
                aclrtSubscribeReport(me(), null_mut()),
                ACL_ERROR_RT_PARAM_INVALID,
                "NULL stream"
            );
            ok(aclrtSubscribeReport(me(), s), "subscribe");
            assert_eq!(
                aclrtLaunchCallback(None, data, ACL_CALLBACK_NO_BLOCK, s),
                ACL_ERROR_INVALID_PARAM,
                "NULL fn"
            );
            assert_eq!(
                aclrtSubscribeReport(me(), s),
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                "subscribed twice"
            );
            assert_eq!(
                aclrtSubscribeReport(me() ^ 1, s),
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                "a second thread"
            );
            assert_eq!(
                aclrtProcessReport(20),
                ACL_ERROR_RT_REPORT_TIMEOUT,
                "nothing to process"
            );
            assert_eq!(
                aclrtLaunchHostFunc(s, Some(count), data),
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                "host functions and callbacks are not mixed on one stream"
            );
            assert_eq!(
                aclrtUnSubscribeReport(me() ^ 1, s),
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                "wrong thread"
            );
            ok(aclrtUnSubscribeReport(me(), s), "unsubscribe");
            assert_eq!(
                aclrtUnSubscribeReport(me(), s),
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                "not subscribed"
            );
            assert_eq!(
                aclrtProcessReport(10),
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                "subscription ended"
            );
        }
        destroy(s);
    });
}

#[test]
fn host_functions_run_in_order_without_a_subscription() {
    on_device(|| {
        let (s, buf) = (stream(), malloc());
        let probe = Probe::new(buf);
        // SAFETY: live stream; the probe outlives the synchronisation.
        unsafe {
            fill(buf, 3, s);
            ok(
                aclrtLaunchHostFunc(s, Some(read_probe), as_data(&probe)),
                "launch host func",
            );
            fill(buf, 4, s);
            ok(aclrtSynchronizeStream(s), "synchronize");
            assert_eq!(
                probe.seen(),
                vec![3],
                "after the work before it, before the work after it"
            );
            assert_ne!(
                probe.thread.load(Ordering::SeqCst) as u64,
                me(),
                "on the runtime's own thread"
            );
            assert_eq!(
                aclrtSubscribeReport(me(), s),
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                "no mixing"
            );
            assert_eq!(
                aclrtLaunchHostFunc(s, None, null_mut()),
                ACL_ERROR_RT_PARAM_INVALID,
                "NULL fn"
            );
        }
        destroy(s);
        free(buf);
    });
}

#[test]
fn a_host_function_thread_runs_the_host_functions_of_its_streams() {
    on_device(|| {
        let s = stream();
        let calls = AtomicUsize::new(0);
        // SAFETY: live stream; the counter outlives the processing.
        unsafe {
            ok(aclrtSubscribeHostFunc(me(), s), "subscribe host func");
            for _ in 0..2 {
                ok(aclrtLaunchHostFunc(s, Some(count), as_data(&calls)), "launch host func");
            }
            while calls.load(Ordering::SeqCst) < 2 {
                ok(aclrtProcessHostFunc(5_000), "process host func");
            }
            ok(aclrtSynchronizeStream(s), "synchronize");
            ok(aclrtUnSubscribeHostFunc(me(), s), "unsubscribe host func");
        }
        destroy(s);
    });
}

#[test]
fn unsubscribing_drops_waiting_callbacks_and_frees_the_stream() {
    on_device(|| {
        let s = stream();
        let calls = AtomicUsize::new(0);
        let watch = soft::MisuseWatch::start(); // software device only
        // SAFETY: live stream; the counter outlives the stream.
        unsafe {
            ok(aclrtSubscribeReport(me(), s), "subscribe");
            ok(
                aclrtLaunchCallback(Some(count), as_data(&calls), ACL_CALLBACK_BLOCK, s),
                "launch",
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
            ok(aclrtUnSubscribeReport(me(), s), "unsubscribe");
            ok(aclrtSynchronizeStream(s), "the stream goes on");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        // Software device only: the dropped callback is recorded as misuse.
        assert!(
            watch
                .seen()
                .iter()
                .any(|m| m.description.contains("dropped without running"))
        );
        destroy(s);
    });
}

/// `(thread, stream, state)` seen by the stream state callback.
static STREAM_STATES: Mutex<Vec<(u64, usize, u32)>> = Mutex::new(Vec::new());
/// `(thread, device, state)` seen by the device state callback.
static DEVICE_STATES: Mutex<Vec<(u64, i32, u32)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_stream(stream: aclrtStream, state: aclrtStreamState, _args: *mut c_void) {
    STREAM_STATES
        .lock()
        .unwrap()
        .push((current_thread_id(), stream as usize, state));
}

unsafe extern "C" fn on_device_state(device: i32, state: aclrtDeviceState, _args: *mut c_void) {
    DEVICE_STATES.lock().unwrap().push((current_thread_id(), device, state));
}

#[test]
fn state_callbacks_see_streams_and_devices_change() {
    let name = c"soft_callbacks";
    // SAFETY: NUL-terminated names; the callbacks are plain functions.
    unsafe {
        assert_eq!(
            aclrtRegStreamStateCallback(null_mut(), Some(on_stream), null_mut()),
            ACL_ERROR_INVALID_PARAM
        );
        ok(
            aclrtRegStreamStateCallback(name.as_ptr(), Some(on_stream), null_mut()),
            "register stream",
        );
        assert_eq!(
            aclrtRegStreamStateCallback(name.as_ptr(), Some(on_stream), null_mut()),
            ACL_ERROR_RT_PARAM_INVALID,
            "a name registered twice"
        );
        ok(
            aclrtRegDeviceStateCallback(name.as_ptr(), Some(on_device_state), null_mut()),
            "register device",
        );
    }
    let (handle, thread) = on_device(|| {
        let s = stream();
        destroy(s);
        (s as usize, me())
    });
    // SAFETY: as above; NULL removes.
    unsafe {
        ok(
            aclrtRegStreamStateCallback(name.as_ptr(), None, null_mut()),
            "remove stream",
        );
        ok(
            aclrtRegDeviceStateCallback(name.as_ptr(), None, null_mut()),
            "remove device",
        );
        ok(
            aclrtRegDeviceStateCallback(name.as_ptr(), None, null_mut()),
            "removing twice is fine",
        );
    }
    let streams: Vec<u32> = STREAM_STATES
        .lock()
        .unwrap()
        .iter()
        .filter(|&&(t, s, _)| t == thread && s == handle)
        .map(|&(_, _, state)| state)
        .collect();
    assert_eq!(
        streams,
        vec![ACL_RT_STREAM_STATE_CREATE_POST, ACL_RT_STREAM_STATE_DESTROY_PRE]
    );
    let devices: Vec<u32> = DEVICE_STATES
        .lock()
        .unwrap()
        .iter()
        .filter(|&&(t, d, _)| t == thread && d == 0)
        .map(|&(_, _, state)| state)
        .collect();
    assert_eq!(
        devices,
        vec![
            ACL_RT_DEVICE_STATE_SET_PRE,
            ACL_RT_DEVICE_STATE_SET_POST,
            ACL_RT_DEVICE_STATE_RESET_PRE,
            ACL_RT_DEVICE_STATE_RESET_POST
        ]
    );
}
