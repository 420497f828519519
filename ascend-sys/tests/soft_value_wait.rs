//! `aclrtValueWrite`, `aclrtValueWait` and `aclrtDestroyStreamForce` on the
//! software device: argument rules in the runtime's order (hicann/runtime
//! `aclrtValue*Impl` → `rtsValue*` → `ApiErrorDecorator::Mem*Value` →
//! `ApiImpl::Mem*Value`; API reference 11-09 and 06), waits that block only
//! their own stream's worker, the four documented comparisons, and what
//! ends a wait that is never satisfied. Software device only.
//!
//! The tests of this file block streams on purpose, so they have its
//! process to themselves (a device-wide synchronisation elsewhere would
//! wait for them); each unblocks or destroys every stream it blocks.

mod soft_common;

use ascend_sys::*;
use soft_common::{on_device_id, recent, software, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

fn on_device<R: Send>(body: impl FnOnce() -> R + Send) -> R {
    on_device_id(0, body)
}

fn malloc(size: usize) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(
        unsafe { aclrtMalloc(&mut ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) },
        ACL_SUCCESS
    );
    ptr
}

fn free(ptr: *mut c_void) {
    // SAFETY: from `malloc`, freed once.
    assert_eq!(unsafe { aclrtFree(ptr) }, ACL_SUCCESS);
}

/// A device word set to `value` (synchronously).
fn word(value: u64) -> *mut c_void {
    let ptr = malloc(8);
    store(ptr, value);
    ptr
}

/// Writes the word from the host with a synchronous copy.
fn store(ptr: *mut c_void, value: u64) {
    // SAFETY: `value` is 8 live bytes; `ptr` is a live device word.
    let rc = unsafe { aclrtMemcpy(ptr, 8, (&raw const value).cast(), 8, ACL_MEMCPY_HOST_TO_DEVICE) };
    assert_eq!(rc, ACL_SUCCESS);
}

/// Reads the word with a synchronous copy (which does not wait for streams).
fn load(ptr: *mut c_void) -> u64 {
    let mut value = 0u64;
    // SAFETY: `value` is 8 live bytes; `ptr` is a live device word.
    let rc = unsafe { aclrtMemcpy((&raw mut value).cast(), 8, ptr, 8, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(rc, ACL_SUCCESS);
    value
}

fn create_stream() -> aclrtStream {
    let mut stream = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, ACL_SUCCESS);
    stream
}

fn destroy(stream: aclrtStream) {
    // SAFETY: a live stream, destroyed once.
    assert_eq!(unsafe { aclrtDestroyStream(stream) }, ACL_SUCCESS);
}

fn destroy_force(stream: aclrtStream) -> aclError {
    // SAFETY: a handle (live or not: validated).
    unsafe { aclrtDestroyStreamForce(stream) }
}

fn sync(stream: aclrtStream) -> aclError {
    // SAFETY: a handle (validated).
    unsafe { aclrtSynchronizeStream(stream) }
}

fn sync_within(stream: aclrtStream, ms: i32) -> aclError {
    // SAFETY: a handle (validated).
    unsafe { aclrtSynchronizeStreamWithTimeout(stream, ms) }
}

fn write(ptr: *mut c_void, value: u64, stream: aclrtStream) -> aclError {
    // SAFETY: the runtime validates the address and the handle.
    unsafe { aclrtValueWrite(ptr, value, 0, stream) }
}

fn wait(ptr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError {
    // SAFETY: the runtime validates the address and the handle.
    unsafe { aclrtValueWait(ptr, value, flag, stream) }
}

fn memset_async(ptr: *mut c_void, value: i32, count: usize, stream: aclrtStream) -> aclError {
    // SAFETY: live device memory of `count` bytes.
    unsafe { aclrtMemsetAsync(ptr, count, value, count, stream) }
}

fn at(ptr: *mut c_void, offset: usize) -> *mut c_void {
    (ptr as usize + offset) as *mut c_void
}

/// Whether `watch` saw a misuse of `api` mentioning every one of `words`.
fn saw(watch: &soft::MisuseWatch, api: &str, words: &[&str]) -> bool {
    watch
        .seen()
        .iter()
        .any(|m| m.api == api && words.iter().all(|word| m.description.contains(word)))
}

// ---- argument rules ------------------------------------------------------------

/// ACL layer: `devAddr` NULL → 100000 (`ACL_REQUIRES_NOT_NULL`); runtime:
/// the stream handle (107017), the flag (write: reserved, 0; wait: below
/// `MEM_WAIT_VALUE_TYPE_MAX` = 4) and the pointer's location (DEVICE) →
/// 107000, then the context (107002) and the stream's context (107003).
/// Alignment and range are the software device's choices (107000).
#[test]
fn value_call_argument_rules() {
    on_device(|| {
        let ptr = word(0);
        let stream = create_stream();
        let mut host = null_mut();
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { aclrtMallocHost(&mut host, 64) }, ACL_SUCCESS);
        let mut pageable = [0u64; 2];
        let stale = 0xdead_0000 as aclrtStream;
        for call in [write as fn(_, _, _) -> _, |p, v, s| {
            wait(p, v, ACL_STREAM_WAIT_VALUE_EQ, s)
        }] {
            assert_eq!(call(null_mut(), 1, stream), ACL_ERROR_INVALID_PARAM);
            assert_eq!(call(ptr, 1, stale), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(call(host, 1, stream), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("not device memory"), "{}", recent());
            assert_eq!(
                call(pageable.as_mut_ptr().cast(), 1, stream),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(call(at(ptr, 4), 1, stream), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("8-byte aligned"), "{}", recent());
        }
        // SAFETY: validated arguments.
        unsafe {
            assert_eq!(aclrtValueWrite(ptr, 1, 1, stream), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("reserved"));
            // The handle is checked before the flag.
            assert_eq!(aclrtValueWrite(ptr, 1, 1, stale), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(aclrtValueWait(ptr, 1, 4, stream), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtValueWait(ptr, 1, 4, stale), ACL_ERROR_RT_INVALID_HANDLE);
        }
        // The word must lie inside one allocation: the last 8 bytes of a
        // 40-byte block (rounded and padded to 96) are, 8 bytes past are not.
        let block = malloc(40);
        assert_eq!(write(at(block, 88), 1, stream), ACL_SUCCESS);
        assert_eq!(write(at(block, 96), 1, stream), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(sync(stream), ACL_SUCCESS);
        // 107002 without a context (after the flag and location checks).
        let (ptr_bits, stream_bits) = (ptr as usize, stream as usize);
        without_device(move || {
            let (ptr, stream) = (ptr_bits as *mut c_void, stream_bits as aclrtStream);
            assert_eq!(write(ptr, 1, stream), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(
                wait(ptr, 1, ACL_STREAM_WAIT_VALUE_GEQ, stream),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            // SAFETY: validated arguments.
            assert_eq!(unsafe { aclrtValueWait(ptr, 1, 9, stream) }, ACL_ERROR_RT_PARAM_INVALID);
        });
        // 107003: a stream of another device.
        let (ptr_bits, stream_bits) = (ptr as usize, stream as usize);
        on_device_id(1, move || {
            let (ptr, stream) = (ptr_bits as *mut c_void, stream_bits as aclrtStream);
            assert_eq!(write(ptr, 1, stream), ACL_ERROR_RT_STREAM_CONTEXT);
            assert_eq!(
                wait(ptr, 1, ACL_STREAM_WAIT_VALUE_GEQ, stream),
                ACL_ERROR_RT_STREAM_CONTEXT
            );
        });
        destroy(stream);
        free(block);
        free(ptr);
        // SAFETY: from aclrtMallocHost, freed once.
        assert_eq!(unsafe { aclrtFreeHost(host) }, ACL_SUCCESS);
    });
}

// ---- semantics ---------------------------------------------------------------

/// A value write is a stream task (asynchronous, in order); NULL is the
/// default stream.
#[test]
fn a_value_write_runs_in_stream_order() {
    on_device(|| {
        let ptr = word(0);
        let stream = create_stream();
        assert_eq!(memset_async(ptr, 0x11, 8, stream), ACL_SUCCESS);
        assert_eq!(write(ptr, 0xABCD_EF01_2345_6789, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(load(ptr), 0xABCD_EF01_2345_6789);
        assert_eq!(write(ptr, 7, null_mut()), ACL_SUCCESS);
        assert_eq!(sync(null_mut()), ACL_SUCCESS);
        assert_eq!(load(ptr), 7);
        destroy(stream);
        free(ptr);
    });
}

/// A wait blocks its own stream only: later work on it waits, other
/// streams run, and a write on another stream releases it.
#[test]
fn a_wait_blocks_only_its_own_stream_until_another_stream_writes() {
    on_device(|| {
        let (flag, data) = (word(0), word(0));
        let (waiter, writer, bystander) = (create_stream(), create_stream(), create_stream());
        assert_eq!(wait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, waiter), ACL_SUCCESS);
        assert_eq!(write(data, 42, waiter), ACL_SUCCESS);
        // Another stream is not held up.
        let other = word(0);
        assert_eq!(write(other, 5, bystander), ACL_SUCCESS);
        assert_eq!(sync_within(bystander, 5000), ACL_SUCCESS);
        assert_eq!(load(other), 5);
        // The waiting stream is, and says why.
        assert_eq!(sync_within(waiter, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert!(recent().contains("blocked in a value wait"), "{}", recent());
        assert!(soft::leak_report().contains("blocked in a value wait"));
        assert_eq!(load(data), 0, "work after the wait must not have run");
        assert_eq!(write(flag, 1, writer), ACL_SUCCESS);
        assert_eq!(sync_within(waiter, 5000), ACL_SUCCESS);
        assert_eq!(load(data), 42);
        assert_eq!(sync(writer), ACL_SUCCESS);
        for stream in [waiter, writer, bystander] {
            destroy(stream);
        }
        for ptr in [flag, data, other] {
            free(ptr);
        }
    });
}

/// The four comparisons of the API reference (11-09): GEQ is
/// `(int64_t)(*devAddr - value) >= 0`, EQ `==`, AND `(*devAddr & value) !=
/// 0`, NOR `~(*devAddr | value) != 0`. Host writes (synchronous copies) end
/// waits too.
#[test]
fn each_comparison_follows_its_flag() {
    on_device(|| {
        // (flag, value waited for, initial word, a word that does not
        // satisfy, a word that does)
        let cases = [
            (ACL_STREAM_WAIT_VALUE_GEQ, 10, 3, 9, 11),
            (ACL_STREAM_WAIT_VALUE_GEQ, u64::MAX, u64::MAX - 5, u64::MAX - 1, 0), // wrapped counter
            (ACL_STREAM_WAIT_VALUE_EQ, 6, 0, 7, 6),
            (ACL_STREAM_WAIT_VALUE_AND, 0b1000, 0b0111, 0b0011, 0b1001),
            (ACL_STREAM_WAIT_VALUE_NOR, 0x00FF, !0u64, !0x00FFu64, !0x0100u64),
        ];
        let stream = create_stream();
        for (flag, value, initial, miss, hit) in cases {
            let ptr = word(initial);
            assert_eq!(wait(ptr, value, flag, stream), ACL_SUCCESS);
            assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "flag {flag}");
            store(ptr, miss);
            assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "flag {flag}");
            store(ptr, hit);
            assert_eq!(sync_within(stream, 5000), ACL_SUCCESS, "flag {flag}");
            // Already satisfied: no wait at all.
            assert_eq!(wait(ptr, value, flag, stream), ACL_SUCCESS);
            assert_eq!(sync_within(stream, 5000), ACL_SUCCESS, "flag {flag}");
            free(ptr);
        }
        destroy(stream);
    });
}

/// Two host threads, each with its own stream, pass a counter back and
/// forth through two device words: each stream waits for the other's write
/// before it writes its own.
#[test]
fn two_threads_on_two_streams_exchange_a_flag() {
    const ROUNDS: u64 = 50;
    on_device(|| {
        let (ping, pong) = (word(0) as usize, word(0) as usize);
        let player = move |mine: usize, theirs: usize, first: bool| {
            // SAFETY: no pointer arguments.
            assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
            let stream = create_stream();
            let (mine, theirs) = (mine as *mut c_void, theirs as *mut c_void);
            for round in 1..=ROUNDS {
                if !first {
                    assert_eq!(wait(theirs, round, ACL_STREAM_WAIT_VALUE_GEQ, stream), ACL_SUCCESS);
                }
                assert_eq!(write(mine, round, stream), ACL_SUCCESS);
                if first {
                    assert_eq!(wait(theirs, round, ACL_STREAM_WAIT_VALUE_GEQ, stream), ACL_SUCCESS);
                }
            }
            assert_eq!(sync_within(stream, 20_000), ACL_SUCCESS);
            destroy(stream);
            // SAFETY: balances the retain above.
            assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
        };
        std::thread::scope(|scope| {
            let a = scope.spawn(move || player(ping, pong, true));
            let b = scope.spawn(move || player(pong, ping, false));
            a.join().expect("first player");
            b.join().expect("second player");
        });
        assert_eq!((load(ping as *mut c_void), load(pong as *mut c_void)), (ROUNDS, ROUNDS));
        free(ping as *mut c_void);
        free(pong as *mut c_void);
    });
}

// ---- waits that are never satisfied ----------------------------------------------

/// Freeing the memory a stream waits on ends the wait, recorded as misuse
/// (as destroying an event a stream waits for does).
#[test]
fn freeing_the_memory_ends_a_wait_as_misuse() {
    on_device(|| {
        let watch = soft::MisuseWatch::start();
        let ptr = word(0);
        let stream = create_stream();
        assert_eq!(wait(ptr, 1, ACL_STREAM_WAIT_VALUE_EQ, stream), ACL_SUCCESS);
        assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        free(ptr);
        assert_eq!(sync_within(stream, 5000), ACL_SUCCESS);
        assert!(
            saw(&watch, "aclrtValueWait", &["ended without its condition", "gone"]),
            "{:?}",
            watch.seen()
        );
        destroy(stream);
    });
}

/// `aclrtDestroyStreamForce` (API reference 06: "does not wait for the
/// tasks, destroys the stream at once"): the running wait ends, every
/// queued task is dropped and never runs, and each is recorded; a stream
/// waiting for an event record that was dropped stops waiting.
#[test]
fn force_destroy_drops_queued_tasks_and_records_them() {
    on_device(|| {
        let watch = soft::MisuseWatch::start();
        let (flag, data) = (word(0), word(0));
        let stream = create_stream();
        let mut event = null_mut();
        // SAFETY: a valid out-pointer; live handles below.
        unsafe {
            assert_eq!(aclrtCreateEvent(&mut event), ACL_SUCCESS);
        }
        assert_eq!(wait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, stream), ACL_SUCCESS);
        assert_eq!(memset_async(data, 0x77, 8, stream), ACL_SUCCESS);
        // SAFETY: live handles.
        assert_eq!(unsafe { aclrtRecordEvent(event, stream) }, ACL_SUCCESS);
        let follower = create_stream();
        // SAFETY: live handles.
        assert_eq!(unsafe { aclrtStreamWaitEvent(follower, event) }, ACL_SUCCESS);
        assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        let start = Instant::now();
        assert_eq!(destroy_force(stream), ACL_SUCCESS);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "force destruction must not wait"
        );
        assert_eq!(load(data), 0, "a dropped memset never runs");
        assert!(saw(
            &watch,
            "aclrtDestroyStreamForce",
            &["a wait until", "ended without its condition"]
        ));
        assert!(saw(
            &watch,
            "aclrtDestroyStreamForce",
            &["a memset of 8 bytes", "dropped"]
        ));
        assert!(saw(
            &watch,
            "aclrtDestroyStreamForce",
            &["record 1 of event", "dropped"]
        ));
        // The follower waited for the dropped record: it goes on.
        assert_eq!(sync_within(follower, 5000), ACL_SUCCESS);
        assert!(saw(&watch, "aclrtDestroyStreamForce", &["stops waiting"]));
        // The handle is gone.
        assert_eq!(destroy_force(stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(write(flag, 1, stream), ACL_ERROR_RT_INVALID_HANDLE);
        // A later write finds no waiter and nothing else changes.
        store(flag, 1);
        assert_eq!(load(data), 0);
        destroy(follower);
        // SAFETY: a live event, destroyed once.
        assert_eq!(unsafe { aclrtDestroyEvent(event) }, ACL_SUCCESS);
        free(flag);
        free(data);
    });
}

/// `aclrtDestroyStreamForce` checks as `aclrtDestroyStream` does (ACL:
/// NULL → 100000; runtime: handle → 107017, context → 107002, the stream's
/// context → 107003), and on an idle stream is an ordinary destruction.
#[test]
fn force_destroy_rules() {
    on_device(|| {
        let watch = soft::MisuseWatch::start();
        assert_eq!(destroy_force(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(destroy_force(0xbad0 as aclrtStream), ACL_ERROR_RT_INVALID_HANDLE);
        let stream = create_stream();
        let bits = stream as usize;
        without_device(move || assert_eq!(destroy_force(bits as aclrtStream), ACL_ERROR_RT_CONTEXT_NULL));
        on_device_id(1, move || {
            assert_eq!(destroy_force(bits as aclrtStream), ACL_ERROR_RT_STREAM_CONTEXT)
        });
        let ptr = word(0);
        assert_eq!(write(ptr, 3, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(destroy_force(stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(load(ptr), 3);
        assert!(
            watch.seen().iter().all(|m| m.api != "aclrtDestroyStreamForce"),
            "nothing was dropped: {:?}",
            watch.seen()
        );
        free(ptr);
    });
}

/// The last `aclrtResetDevice` tears the context down (docs/runtime-choices.md);
/// value waits on the device's streams, created or default, end then
/// (recorded as misuse) instead of holding the reset forever. Runs in a
/// child process: the reset must be the device's last.
#[test]
fn the_last_reset_ends_value_waits() {
    let output = soft_common::child_output("child_resets_with_blocked_value_waits", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("child reset with blocked value waits"), "{stdout}");
}

#[test]
#[ignore = "run by its parent test in a child process"]
fn child_resets_with_blocked_value_waits() {
    software();
    let watch = soft::MisuseWatch::start();
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    let ptr = word(0);
    let stream = create_stream();
    assert_eq!(wait(ptr, 1, ACL_STREAM_WAIT_VALUE_EQ, stream), ACL_SUCCESS);
    assert_eq!(wait(ptr, 2, ACL_STREAM_WAIT_VALUE_EQ, null_mut()), ACL_SUCCESS);
    assert_eq!(sync_within(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    let start = Instant::now();
    // SAFETY: no pointer arguments; the only retain.
    assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
    assert!(start.elapsed() < Duration::from_secs(5));
    let ended = watch
        .seen()
        .iter()
        .filter(|m| m.api == "aclrtResetDevice" && m.description.contains("ended without its condition"))
        .count();
    assert_eq!(ended, 2, "{:?}", watch.seen());
    println!("child reset with blocked value waits");
}
