//! Key-based IPC memory across real processes (`acl-behaviour.md` §9 and
//! the choices in `docs/runtime-choices.md`). Software device only.
//!
//! Tests that need a second process re-run this test binary as a child
//! (`child_peer`), which executes commands read line by line from its stdin
//! and answers each with one line `answer: ...` on its stdout. The parent
//! does its own half in-process with the same [`Side`] operations.

mod soft_common;

use ascend_sys::*;
use soft_common::peer::{self, Peer};
use soft_common::{on_device, software, without_device};
use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr::null_mut;

/// Set in the child's environment; without it the child test does nothing.
const CHILD_VAR: &str = "ASCEND_SOFT_IPC_CHILD";

/// The documented key buffer length.
const KEY_LEN: usize = 65;

fn recent() -> String {
    // SAFETY: no arguments; copied at once.
    let text = unsafe { aclGetRecentErrMsg() };
    assert!(!text.is_null());
    // SAFETY: a C string valid until the next call on this thread.
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

fn own_pid() -> i32 {
    std::process::id() as i32
}

fn malloc(size: usize) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { aclrtMalloc(&mut ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) },
        ACL_SUCCESS
    );
    ptr
}

fn free(ptr: *mut c_void) -> aclError {
    // SAFETY: the runtime validates the pointer.
    unsafe { aclrtFree(ptr) }
}

/// `aclrtIpcMemGetExportKey` with a 65-byte buffer: the key, or the code.
fn export_key(ptr: *mut c_void, size: usize, flags: u64) -> Result<String, aclError> {
    let mut buffer = [0 as c_char; KEY_LEN];
    // SAFETY: `buffer` holds KEY_LEN bytes; the device side is validated.
    match unsafe { aclrtIpcMemGetExportKey(ptr, size, buffer.as_mut_ptr(), KEY_LEN, flags) } {
        // SAFETY: the runtime wrote a NUL-terminated key.
        ACL_SUCCESS => Ok(unsafe { CStr::from_ptr(buffer.as_ptr()) }
            .to_string_lossy()
            .into_owned()),
        code => Err(code),
    }
}

fn c_key(key: &str) -> CString {
    CString::new(key).expect("no NUL in a key")
}

fn set_pid(key: &str, pids: &[i32]) -> aclError {
    let key = c_key(key);
    let mut pids = pids.to_vec();
    // SAFETY: valid string and array.
    unsafe { aclrtIpcMemSetImportPid(key.as_ptr(), pids.as_mut_ptr(), pids.len()) }
}

fn import(key: &str) -> Result<*mut c_void, aclError> {
    let key = c_key(key);
    let mut ptr = null_mut();
    // SAFETY: valid string and out-pointer.
    match unsafe { aclrtIpcMemImportByKey(&mut ptr, key.as_ptr(), 0) } {
        ACL_SUCCESS => Ok(ptr),
        code => Err(code),
    }
}

fn close(key: &str) -> aclError {
    let key = c_key(key);
    // SAFETY: a valid string.
    unsafe { aclrtIpcMemClose(key.as_ptr()) }
}

fn read_bytes(ptr: *mut c_void, len: usize) -> Result<Vec<u8>, aclError> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is live; the device side is validated.
    match unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, ptr, len, ACL_MEMCPY_DEVICE_TO_HOST) } {
        ACL_SUCCESS => Ok(out),
        code => Err(code),
    }
}

/// A block of device memory of a side: allocated here or imported.
struct Block {
    ptr: *mut c_void,
    size: usize,
}

/// One process's half of a scenario. Must run on a thread with a current
/// device.
#[derive(Default)]
struct Side {
    blocks: Vec<Block>,
}

impl Side {
    fn add(&mut self, ptr: *mut c_void, size: usize) -> usize {
        self.blocks.push(Block { ptr, size });
        self.blocks.len() - 1
    }

    /// A new allocation of `size` bytes filled with `fill`.
    fn alloc(&mut self, size: usize, fill: u8) -> usize {
        let id = self.add(malloc(size), size);
        assert_eq!(self.fill(id, fill), ACL_SUCCESS);
        id
    }

    fn import(&mut self, key: &str, size: usize) -> Result<usize, aclError> {
        Ok(self.add(import(key)?, size))
    }

    /// The byte every position holds, `None` when they differ.
    fn read(&self, id: usize) -> Result<Option<u8>, aclError> {
        let block = &self.blocks[id];
        let out = read_bytes(block.ptr, block.size)?;
        Ok(out.iter().all(|&byte| byte == out[0]).then_some(out[0]))
    }

    fn fill(&self, id: usize, byte: u8) -> aclError {
        let block = &self.blocks[id];
        // SAFETY: the device side is validated.
        unsafe { aclrtMemset(block.ptr, block.size, i32::from(byte), block.size) }
    }

    /// Executes one protocol command; the answer (without the marker).
    fn execute(&mut self, line: &str) -> String {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |at: usize| words[at].parse::<usize>().expect("number");
        let code_or = |outcome: Result<String, aclError>| outcome.unwrap_or_else(|code| code.to_string());
        match words[0] {
            "pid" => own_pid().to_string(),
            "alloc" => self.alloc(number(1), number(2) as u8).to_string(),
            "export" => code_or(
                export_key(self.blocks[number(1)].ptr, number(2), number(3) as u64).map(|key| format!("0 {key}")),
            ),
            "setpid" => {
                let pids: Vec<i32> = words[2..].iter().map(|pid| pid.parse().expect("pid")).collect();
                set_pid(words[1], &pids).to_string()
            }
            "import" => code_or(self.import(words[1], number(2)).map(|id| format!("0 {id}"))),
            "read" => code_or(
                self.read(number(1))
                    .map(|byte| format!("0 {}", byte.map_or_else(|| "mixed".to_owned(), |b| b.to_string()))),
            ),
            "fill" => self.fill(number(1), number(2) as u8).to_string(),
            "close" => close(words[1]).to_string(),
            "free" => free(self.blocks[number(1)].ptr).to_string(),
            "listed" => {
                let wanted = format!("IPC import {:#x}", self.blocks[number(1)].ptr as usize);
                u8::from(soft::leak_report().contains(&wanted)).to_string()
            }
            "deref" => {
                println!("dereferencing an imported device address on the host");
                // SAFETY: deliberately unsound: the address is reserved
                // PROT_NONE, so the read faults (what the parent expects).
                let value = unsafe { std::ptr::read_volatile(self.blocks[number(1)].ptr.cast::<u8>()) };
                format!("read {value} without a fault")
            }
            other => panic!("unknown command {other}"),
        }
    }
}

/// The child half of the cross-process tests: executes commands from stdin.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_peer() {
    peer::serve(CHILD_VAR, || {
        software();
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let mut side = Side::default();
        move |line| side.execute(line)
    });
}

const SIZE: usize = 64 << 10;

#[test]
fn keys_move_data_both_ways() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child = peer.pid();
        let mut side = Side::default();
        // The parent exports, the child imports.
        let id = side.alloc(SIZE, 0x11);
        let key = export_key(side.blocks[id].ptr, SIZE, 0).expect("export");
        assert!(key.len() <= 64, "{key}");
        assert_eq!(set_pid(&key, &[child]), ACL_SUCCESS);
        let answer = peer.ask(&format!("import {key} {SIZE}"));
        assert_eq!(answer[0], "0", "child import: {answer:?}");
        let theirs = &answer[1];
        assert_eq!(peer.ask(&format!("read {theirs}")), ["0", "17"]);
        assert_eq!(peer.code(&format!("fill {theirs} 34")), ACL_SUCCESS);
        assert_eq!(side.read(id), Ok(Some(34)));
        // The child exports, the parent imports.
        let child_id = peer.ask(&format!("alloc {SIZE} 51"))[0].clone();
        let answer = peer.ask(&format!("export {child_id} {SIZE} 0"));
        assert_eq!(answer[0], "0", "child export: {answer:?}");
        let child_key = answer[1].clone();
        assert_eq!(peer.code(&format!("setpid {child_key} {}", own_pid())), ACL_SUCCESS);
        let mine = side.import(&child_key, SIZE).expect("parent import");
        assert_eq!(side.read(mine), Ok(Some(51)));
        assert_eq!(side.fill(mine, 68), ACL_SUCCESS);
        assert_eq!(peer.ask(&format!("read {child_id}")), ["0", "68"]);
        // Importers close first, then exporters destroy and free.
        assert_eq!(close(&child_key), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("close {child_key}")), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("free {child_id}")), ACL_SUCCESS);
        peer.quit();
        assert_eq!(close(&key), ACL_SUCCESS);
        assert_eq!(free(side.blocks[id].ptr), ACL_SUCCESS);
        assert!(!soft::misuse().iter().any(|m| m.description.contains(&key)));
    });
}

#[test]
fn allocations_that_do_not_start_a_page_can_be_shared() {
    on_device(|| {
        // aclrtMalloc blocks are 512-byte aligned; find one inside a page.
        let mut side = Side::default();
        let mut spare = Vec::new();
        let id = loop {
            let id = side.alloc(1000, 0x5c);
            if !(side.blocks[id].ptr as usize).is_multiple_of(4096) {
                break id;
            }
            spare.push(side.blocks[id].ptr);
            assert!(spare.len() < 64, "no unaligned block");
        };
        let key = export_key(
            side.blocks[id].ptr,
            1000,
            ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
        )
        .expect("export");
        let mut peer = Peer::spawn(CHILD_VAR);
        let answer = peer.ask(&format!("import {key} 1000"));
        assert_eq!(answer[0], "0");
        assert_eq!(peer.ask(&format!("read {}", answer[1])), ["0", "92"]);
        assert_eq!(peer.code(&format!("fill {} 93", answer[1])), ACL_SUCCESS);
        assert_eq!(side.read(id), Ok(Some(93)));
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        peer.quit();
        assert_eq!(close(&key), ACL_SUCCESS);
        for ptr in spare.into_iter().chain([side.blocks[id].ptr]) {
            assert_eq!(free(ptr), ACL_SUCCESS);
        }
    });
}

#[test]
fn whitelist_is_enforced_and_can_be_disabled() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child = peer.pid();
        let ptr = malloc(SIZE);
        let key = export_key(ptr, SIZE, 0).expect("export");
        assert_eq!(peer.code(&format!("import {key} {SIZE}")), ACL_ERROR_RT_NO_PERMISSION);
        assert_eq!(set_pid(&key, &[own_pid()]), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("import {key} {SIZE}")), ACL_ERROR_RT_NO_PERMISSION);
        assert_eq!(set_pid(&key, &[child]), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("import {key} {SIZE}")), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        assert_eq!(close(&key), ACL_SUCCESS);
        // Without validation, any process of the user may import; pids can
        // no longer be set.
        let open = export_key(ptr, SIZE, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION).expect("export");
        assert_eq!(peer.code(&format!("import {open} {SIZE}")), ACL_SUCCESS);
        assert_eq!(set_pid(&open, &[child]), ACL_ERROR_RT_NO_PERMISSION);
        assert_eq!(peer.code(&format!("close {open}")), ACL_SUCCESS);
        peer.quit();
        assert_eq!(close(&open), ACL_SUCCESS);
        assert_eq!(free(ptr), ACL_SUCCESS);
    });
}

#[test]
fn import_in_the_exporting_process_is_refused() {
    on_device(|| {
        let ptr = malloc(SIZE);
        let key = export_key(ptr, SIZE, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION).expect("export");
        assert_eq!(import(&key).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("exported by this process"), "{}", recent());
        assert_eq!(close(&key), ACL_SUCCESS);
        assert_eq!(free(ptr), ACL_SUCCESS);
    });
}

#[test]
fn import_after_close_free_or_exit_is_refused() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let flags = ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION;
        // The exporter destroyed the key.
        let ptr = malloc(SIZE);
        let key = export_key(ptr, SIZE, flags).expect("export");
        assert_eq!(close(&key), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("import {key} {SIZE}")), ACL_ERROR_RT_PARAM_INVALID);
        // The exporter freed the memory: its keys go with it.
        let key = export_key(ptr, SIZE, flags).expect("export");
        assert_eq!(free(ptr), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("import {key} {SIZE}")), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(close(&key), ACL_ERROR_RT_PARAM_INVALID);
        // The exporter exited.
        let child_id = peer.ask(&format!("alloc {SIZE} 1"))[0].clone();
        let answer = peer.ask(&format!("export {child_id} {SIZE} 1"));
        assert_eq!(answer[0], "0");
        peer.quit();
        assert_eq!(import(&answer[1]).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not a live key"), "{}", recent());
    });
}

#[test]
fn close_releases_the_first_import_of_a_key() {
    on_device(|| {
        let mut side = Side::default();
        let id = side.alloc(SIZE, 0x2a);
        let key = export_key(
            side.blocks[id].ptr,
            SIZE,
            ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
        )
        .expect("export");
        let mut peer = Peer::spawn(CHILD_VAR);
        let first = peer.ask(&format!("import {key} {SIZE}"))[1].clone();
        let second = peer.ask(&format!("import {key} {SIZE}"))[1].clone();
        assert_eq!(peer.ask(&format!("listed {first}")), ["1"]);
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        assert_eq!(peer.ask(&format!("listed {first}")), ["0"]);
        assert_eq!(peer.ask(&format!("listed {second}")), ["1"]);
        assert_eq!(peer.ask(&format!("read {second}")), ["0", "42"]);
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        // Neither imported nor exported there any more.
        assert_eq!(peer.code(&format!("close {key}")), ACL_ERROR_RT_PARAM_INVALID);
        peer.quit();
        assert_eq!(close(&key), ACL_SUCCESS);
        assert_eq!(free(side.blocks[id].ptr), ACL_SUCCESS);
    });
}

#[test]
fn destroying_a_key_still_imported_is_reported_as_misuse() {
    on_device(|| {
        let flags = ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION;
        let mut peer = Peer::spawn(CHILD_VAR);
        let ptr = malloc(SIZE);
        // By aclrtIpcMemClose.
        let key = export_key(ptr, SIZE, flags).expect("export");
        assert_eq!(peer.ask(&format!("import {key} {SIZE}"))[0], "0");
        assert_eq!(close(&key), ACL_SUCCESS);
        let found = soft::misuse();
        assert!(
            found
                .iter()
                .any(|m| m.api == "aclrtIpcMemClose" && m.description.contains(&key)),
            "{found:?}"
        );
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        // By aclrtFree.
        let key = export_key(ptr, SIZE, flags).expect("export");
        assert_eq!(peer.ask(&format!("import {key} {SIZE}"))[0], "0");
        assert_eq!(free(ptr), ACL_SUCCESS);
        let found = soft::misuse();
        assert!(
            found
                .iter()
                .any(|m| m.api == "aclrtFree" && m.description.contains(&key)),
            "{found:?}"
        );
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        // An importer that closed first, or exited, is no misuse.
        let ptr = malloc(SIZE);
        let key = export_key(ptr, SIZE, flags).expect("export");
        assert_eq!(peer.ask(&format!("import {key} {SIZE}"))[0], "0");
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        assert_eq!(close(&key), ACL_SUCCESS);
        let exited = export_key(ptr, SIZE, flags).expect("export");
        assert_eq!(peer.ask(&format!("import {exited} {SIZE}"))[0], "0");
        peer.quit();
        assert_eq!(close(&exited), ACL_SUCCESS);
        assert!(
            !soft::misuse()
                .iter()
                .any(|m| m.description.contains(&key) || m.description.contains(&exited))
        );
        assert_eq!(free(ptr), ACL_SUCCESS);
    });
}

#[test]
fn host_dereference_of_imported_memory_faults() {
    on_device(|| {
        let ptr = malloc(SIZE);
        let key = export_key(ptr, SIZE, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION).expect("export");
        let mut peer = Peer::spawn(CHILD_VAR);
        let id = peer.ask(&format!("import {key} {SIZE}"))[1].clone();
        let (rest, status) = peer.send_and_wait(&format!("deref {id}"));
        assert!(rest.contains("dereferencing"), "the child did not get that far: {rest}");
        assert!(!rest.contains("without a fault"), "the read did not fault: {rest}");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(11), "expected SIGSEGV, got {status:?}");
        assert_eq!(close(&key), ACL_SUCCESS);
        assert_eq!(free(ptr), ACL_SUCCESS);
    });
}

#[test]
fn copies_stay_inside_the_imported_range() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child_id = peer.ask("alloc 8192 7")[0].clone();
        let answer = peer.ask(&format!("export {child_id} 5000 1"));
        assert_eq!(answer[0], "0");
        let ptr = import(&answer[1]).expect("import");
        assert_eq!(read_bytes(ptr, 5000).expect("inside"), vec![7u8; 5000]);
        assert_eq!(read_bytes(ptr, 5001).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not inside the memory imported"), "{}", recent());
        let last = (ptr as usize + 4999) as *mut c_void;
        assert_eq!(read_bytes(last, 1).expect("the last byte"), [7]);
        assert_eq!(read_bytes(last, 2).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
        let leaks = soft::leak_report();
        assert!(
            leaks.contains(&format!("IPC import {:#x}: 5000 bytes", ptr as usize)),
            "{leaks}"
        );
        assert_eq!(close(&answer[1]), ACL_SUCCESS);
        assert!(!soft::leak_report().contains(&format!("IPC import {:#x}", ptr as usize)));
        peer.quit();
    });
}

#[test]
fn imported_memory_is_device_memory_for_queries_and_async_copies() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child_id = peer.ask("alloc 4096 3")[0].clone();
        let answer = peer.ask(&format!("export {child_id} 4096 1"));
        let ptr = import(&answer[1]).expect("import");
        let mut attributes = std::mem::MaybeUninit::<aclrtPtrAttributes>::zeroed();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { aclrtPointerGetAttributes(ptr, attributes.as_mut_ptr()) },
            ACL_SUCCESS
        );
        // SAFETY: written by the successful call.
        let attributes = unsafe { attributes.assume_init() };
        assert_eq!(attributes.location.type_, ACL_MEM_LOCATION_TYPE_DEVICE);
        assert_eq!(attributes.location.id, 0);
        let local = malloc(4096);
        // SAFETY: device pointers, validated by the runtime; NULL is the default stream.
        unsafe {
            assert_eq!(aclrtMemset(local, 4096, 9, 4096), ACL_SUCCESS);
            assert_eq!(
                aclrtMemcpyAsync(ptr, 4096, local, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, null_mut()),
                ACL_SUCCESS
            );
            assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        }
        assert_eq!(peer.ask(&format!("read {child_id}")), ["0", "9"]);
        assert_eq!(close(&answer[1]), ACL_SUCCESS);
        assert_eq!(free(local), ACL_SUCCESS);
        peer.quit();
    });
}

/// Names in `dir` that look like ours.
fn our_entries(dir: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains("ascend") || name.contains("memfd"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn nothing_is_left_in_the_file_system() {
    // A key names an anonymous memfd of the exporter through /proc: it
    // exists in no directory, disappears when the exporter closes it or
    // exits, and the memory is the exporter's device memory. So nothing can
    // be left behind in /dev/shm or /tmp.
    let before_shm = our_entries("/dev/shm");
    let before_tmp = our_entries("/tmp");
    on_device(|| {
        let ptr = malloc(SIZE);
        let key = export_key(ptr, SIZE, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION).expect("export");
        let path = key.split('#').next().expect("path");
        assert!(path.starts_with(&format!("/proc/{}/fd/", own_pid())), "{key}");
        let target = std::fs::read_link(path).expect("the key's descriptor");
        let target = target.to_string_lossy();
        assert!(
            target.starts_with("/memfd:") && target.ends_with("(deleted)"),
            "{target}"
        );
        assert!(soft::leak_report().contains(&format!("IPC key {key}")));
        let mut peer = Peer::spawn(CHILD_VAR);
        let answer = peer.ask(&format!("import {key} {SIZE}"));
        assert_eq!(answer[0], "0");
        assert_eq!(peer.code(&format!("close {key}")), ACL_SUCCESS);
        peer.quit();
        assert_eq!(close(&key), ACL_SUCCESS);
        assert!(!soft::leak_report().contains(&key));
        assert_eq!(free(ptr), ACL_SUCCESS);
    });
    assert_eq!(our_entries("/dev/shm"), before_shm);
    assert_eq!(our_entries("/tmp"), before_tmp);
}

#[test]
fn export_key_checks_its_arguments() {
    without_device(|| {
        let mut buffer = [0 as c_char; KEY_LEN];
        let key = buffer.as_mut_ptr();
        let dummy = 0x1000 as *mut c_void;
        // SAFETY: refused before any access.
        unsafe {
            assert_eq!(
                aclrtIpcMemGetExportKey(null_mut(), 1, key, KEY_LEN, 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(dummy, 1, null_mut(), KEY_LEN, 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(dummy, 0, key, KEY_LEN, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtIpcMemGetExportKey(dummy, 1, key, 0, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtIpcMemGetExportKey(dummy, 1, key, 1 << 32, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(dummy, 1, key, KEY_LEN, 2),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(dummy, 1, key, KEY_LEN, 0),
                ACL_ERROR_RT_CONTEXT_NULL
            );
        }
    });
    on_device(|| {
        let mut buffer = [0 as c_char; KEY_LEN];
        let key = buffer.as_mut_ptr();
        let ptr = malloc(SIZE);
        // SAFETY: the runtime validates the device side; `key` holds KEY_LEN bytes.
        unsafe {
            assert_eq!(
                aclrtIpcMemGetExportKey(ptr, SIZE, key, 64, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("65"), "{}", recent());
            let inside = (ptr as usize + 512) as *mut c_void;
            assert_eq!(
                aclrtIpcMemGetExportKey(inside, 1, key, KEY_LEN, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("not its start"), "{}", recent());
            // The reserved size (rounded and padded) may be shared, no more.
            assert_eq!(aclrtIpcMemGetExportKey(ptr, SIZE + 32, key, KEY_LEN, 0), ACL_SUCCESS);
            assert_eq!(aclrtIpcMemClose(key), ACL_SUCCESS);
            assert_eq!(
                aclrtIpcMemGetExportKey(ptr, SIZE + 33, key, KEY_LEN, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            let mut host = [0u8; 64];
            assert_eq!(
                aclrtIpcMemGetExportKey(host.as_mut_ptr().cast(), 1, key, KEY_LEN, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            let mut base = null_mut();
            assert_eq!(
                aclrtReserveMemAddress(&mut base, 2 << 20, 0, null_mut(), 0),
                ACL_SUCCESS
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(base, 1, key, KEY_LEN, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("virtual-memory"), "{}", recent());
            assert_eq!(aclrtReleaseMemAddress(base), ACL_SUCCESS);
        }
        assert_eq!(free(ptr), ACL_SUCCESS);
    });
}

#[test]
fn import_close_and_set_pid_check_their_arguments() {
    let bogus = c_key("/proc/1/fd/0#0123456789abcdef");
    let garbage = c_key("not a key");
    let mut pids = [1234i32];
    without_device(|| {
        let mut ptr = null_mut();
        // SAFETY: refused before any access.
        unsafe {
            assert_eq!(
                aclrtIpcMemImportByKey(null_mut(), bogus.as_ptr(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtIpcMemImportByKey(&mut ptr, std::ptr::null(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtIpcMemImportByKey(&mut ptr, bogus.as_ptr(), 2),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemImportByKey(&mut ptr, bogus.as_ptr(), 0),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(aclrtIpcMemClose(std::ptr::null()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtIpcMemClose(bogus.as_ptr()), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(
                aclrtIpcMemSetImportPid(std::ptr::null(), pids.as_mut_ptr(), 1),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtIpcMemSetImportPid(bogus.as_ptr(), null_mut(), 1),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtIpcMemSetImportPid(bogus.as_ptr(), pids.as_mut_ptr(), 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // `num` becomes an int32_t: 2^31 is negative, 2^32 is 0.
            assert_eq!(
                aclrtIpcMemSetImportPid(bogus.as_ptr(), pids.as_mut_ptr(), 1 << 31),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemSetImportPid(bogus.as_ptr(), pids.as_mut_ptr(), 1 << 32),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemSetImportPid(bogus.as_ptr(), pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_CONTEXT_NULL
            );
        }
    });
    on_device(|| {
        let mut ptr = null_mut();
        // SAFETY: valid strings and out-pointers.
        unsafe {
            // ENABLE_PEER_ACCESS is accepted; the key is checked after.
            assert_eq!(
                aclrtIpcMemImportByKey(
                    &mut ptr,
                    garbage.as_ptr(),
                    ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS
                ),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("not a key"), "{}", recent());
            // A well-formed key naming something that is not a key.
            assert!(matches!(
                aclrtIpcMemImportByKey(&mut ptr, bogus.as_ptr(), 0),
                ACL_ERROR_RT_PARAM_INVALID | ACL_ERROR_RT_NO_PERMISSION
            ));
            assert!(ptr.is_null());
            assert_eq!(aclrtIpcMemClose(bogus.as_ptr()), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtIpcMemSetImportPid(bogus.as_ptr(), pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        let block = malloc(SIZE);
        let key = export_key(block, SIZE, 0).expect("export");
        assert_eq!(set_pid(&key, &[0]), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(set_pid(&key, &[own_pid(), own_pid()]), ACL_SUCCESS);
        let many: Vec<i32> = (1..=65_534).map(|pid| pid + 1_000_000).collect();
        assert_eq!(set_pid(&key, &many), ACL_SUCCESS);
        assert_eq!(set_pid(&key, &[7]), ACL_ERROR_RT_OVER_LIMIT);
        assert_eq!(close(&key), ACL_SUCCESS);
        assert_eq!(set_pid(&key, &[7]), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(free(block), ACL_SUCCESS);
    });
}

#[test]
fn inter_server_whitelists_and_link_attributes_are_a3_only() {
    let key = c_key("/proc/1/fd/0#0123456789abcdef");
    without_device(|| {
        let mut pids = [1i32];
        let mut servers = [aclrtServerPid {
            sdid: 0,
            pid: pids.as_mut_ptr(),
            num: 1,
        }];
        let mut no_pids = [aclrtServerPid {
            sdid: 0,
            pid: null_mut(),
            num: 1,
        }];
        // SAFETY: valid or NULL arguments, refused before any access.
        unsafe {
            assert_eq!(
                aclrtIpcMemImportPidInterServer(std::ptr::null(), servers.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemImportPidInterServer(key.as_ptr(), null_mut(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemImportPidInterServer(key.as_ptr(), servers.as_mut_ptr(), 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemImportPidInterServer(key.as_ptr(), no_pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // No context is needed to be told the chip lacks it.
            assert_eq!(
                aclrtIpcMemImportPidInterServer(key.as_ptr(), servers.as_mut_ptr(), 1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            assert_eq!(
                aclrtIpcMemSetAttr(std::ptr::null(), ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 1, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtIpcMemSetAttr(key.as_ptr(), ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 4),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtIpcMemSetAttr(key.as_ptr(), ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0),
                ACL_ERROR_RT_CONTEXT_NULL
            );
        }
    });
    on_device(|| {
        // SAFETY: valid arguments.
        unsafe {
            assert_eq!(
                aclrtIpcMemSetAttr(
                    key.as_ptr(),
                    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,
                    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS
                ),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
        }
    });
}
