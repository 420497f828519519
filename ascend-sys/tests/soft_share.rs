//! Shareable handles across real processes (`acl-behaviour.md` §8 and the
//! choices in `docs/runtime-choices.md`). Software device only.
//!
//! Tests that need a second process re-run this test binary as a child
//! (`child_peer`), which executes commands read line by line from its stdin
//! and answers each with one line `answer: ...` on its stdout. The parent does
//! its own half in-process with the same [`Side`] operations.

mod soft_common;

use ascend_sys::*;
use soft_common::peer::{self, Peer};
use soft_common::{device_prop, on_device, physical, software, without_device};
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;

/// Set in the child's environment; without it the child test does nothing.
const CHILD_VAR: &str = "ASCEND_SOFT_SHARE_CHILD";

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

/// A shareable handle as text: `v1:<hex>`, `v2:<hex>` or `fabric:<hex>`.
fn handle_text(kind: &str, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{kind}:{hex}")
}

fn parse_handle(text: &str) -> (String, Vec<u8>) {
    let (kind, hex) = text.split_once(':').expect("kind:hex");
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex"))
        .collect();
    (kind.to_owned(), bytes)
}

fn u64_of(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

/// Free bytes of device 0 (`aclrtGetMemInfo`).
fn free_device_bytes() -> usize {
    let (mut free, mut total) = (0, 0);
    // SAFETY: valid out-pointers.
    assert_eq!(
        unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) },
        ACL_SUCCESS
    );
    free
}

/// One physical allocation of a side, mapped in a range of its own.
struct Obj {
    handle: aclrtDrvMemHandle,
    base: *mut c_void,
    size: usize,
}

/// One process's half of a scenario. Must run on a thread with a current
/// device.
#[derive(Default)]
struct Side {
    objs: Vec<Option<Obj>>,
}

fn granularity() -> usize {
    let prop = device_prop(0);
    let mut value = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe {
            aclrtMemGetAllocationGranularity(
                &prop as *const _ as *mut _,
                ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                &mut value,
            )
        },
        ACL_SUCCESS
    );
    value
}

/// Exports `handle` as `kind` with `flags`: the handle text, or the code.
fn export(handle: aclrtDrvMemHandle, kind: &str, flags: u64) -> Result<String, aclError> {
    let mut buffer = [0u8; 128];
    // SAFETY: `buffer` holds a u64 or a fabric handle; the runtime checks the rest.
    let code = unsafe {
        match kind {
            "v1" => {
                aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, flags, buffer.as_mut_ptr().cast())
            }
            "v2" => aclrtMemExportToShareableHandleV2(
                handle,
                flags,
                ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                buffer.as_mut_ptr().cast(),
            ),
            _ => aclrtMemExportToShareableHandleV2(
                handle,
                flags,
                ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                buffer.as_mut_ptr().cast(),
            ),
        }
    };
    let used = if kind == "fabric" { 128 } else { 8 };
    match code {
        ACL_SUCCESS => Ok(handle_text(kind, &buffer[..used])),
        code => Err(code),
    }
}

fn set_pid(text: &str, pids: &[i32]) -> aclError {
    let (kind, mut bytes) = parse_handle(text);
    let mut pids = pids.to_vec();
    // SAFETY: valid buffers of the right type and length.
    unsafe {
        match kind.as_str() {
            "v1" => aclrtMemSetPidToShareableHandle(u64_of(&bytes), pids.as_mut_ptr(), pids.len()),
            "v2" => aclrtMemSetPidToShareableHandleV2(
                bytes.as_mut_ptr().cast(),
                ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                pids.as_mut_ptr(),
                pids.len(),
            ),
            _ => aclrtMemSetPidToShareableHandleV2(
                bytes.as_mut_ptr().cast(),
                ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                pids.as_mut_ptr(),
                pids.len(),
            ),
        }
    }
}

/// Imports a handle text: the new handle, or the code.
fn import(text: &str) -> Result<aclrtDrvMemHandle, aclError> {
    let (kind, mut bytes) = parse_handle(text);
    let mut handle = null_mut();
    // SAFETY: valid buffers of the right type and a valid out-pointer.
    let code = unsafe {
        match kind.as_str() {
            "v1" => aclrtMemImportFromShareableHandle(u64_of(&bytes), 0, &mut handle),
            "v2" => aclrtMemImportFromShareableHandleV2(
                bytes.as_mut_ptr().cast(),
                ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                0,
                &mut handle,
            ),
            _ => aclrtMemImportFromShareableHandleV2(
                bytes.as_mut_ptr().cast(),
                ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                0,
                &mut handle,
            ),
        }
    };
    match code {
        ACL_SUCCESS => Ok(handle),
        code => Err(code),
    }
}

impl Side {
    /// Maps `handle` (of `size` bytes) in a fresh range; returns its id.
    fn adopt(&mut self, handle: aclrtDrvMemHandle, size: usize) -> usize {
        let mut base = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { aclrtReserveMemAddress(&mut base, size, 0, null_mut(), 0) },
            ACL_SUCCESS
        );
        // SAFETY: the runtime validates the handle and address.
        assert_eq!(unsafe { aclrtMapMem(base, size, 0, handle, 0) }, ACL_SUCCESS);
        self.objs.push(Some(Obj { handle, base, size }));
        self.objs.len() - 1
    }

    fn obj(&self, id: usize) -> &Obj {
        self.objs[id].as_ref().expect("live object")
    }

    /// A new mapped allocation filled with `fill`.
    fn alloc(&mut self, fill: u8) -> usize {
        let size = granularity();
        let id = self.adopt(physical(size), size);
        assert_eq!(self.fill(id, fill), ACL_SUCCESS);
        id
    }

    fn export(&self, id: usize, kind: &str, flags: u64) -> Result<String, aclError> {
        export(self.obj(id).handle, kind, flags)
    }

    /// Imports and maps: the id, or the code.
    fn import(&mut self, text: &str) -> Result<usize, aclError> {
        let handle = import(text)?;
        let mut prop = std::mem::MaybeUninit::<aclrtPhysicalMemProp>::zeroed();
        // SAFETY: valid handle and out-pointer.
        assert_eq!(
            unsafe { aclrtMemGetAllocationPropertiesFromHandle(handle, prop.as_mut_ptr()) },
            ACL_SUCCESS
        );
        Ok(self.adopt(handle, granularity()))
    }

    /// The byte every position holds, `None` when they differ.
    fn read(&self, id: usize) -> Result<Option<u8>, aclError> {
        let obj = self.obj(id);
        let mut out = vec![0u8; obj.size];
        // SAFETY: `out` is live; the device side is validated.
        let code = unsafe {
            aclrtMemcpy(
                out.as_mut_ptr().cast(),
                obj.size,
                obj.base,
                obj.size,
                ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        if code != ACL_SUCCESS {
            return Err(code);
        }
        Ok(out.iter().all(|&byte| byte == out[0]).then_some(out[0]))
    }

    fn fill(&self, id: usize, byte: u8) -> aclError {
        let obj = self.obj(id);
        // SAFETY: the device side is validated.
        unsafe { aclrtMemset(obj.base, obj.size, i32::from(byte), obj.size) }
    }

    /// Unmaps, releases and frees the handle.
    fn free(&mut self, id: usize) -> aclError {
        let obj = self.objs[id].take().expect("live object");
        // SAFETY: addresses and handles are validated by the runtime.
        unsafe {
            assert_eq!(aclrtUnmapMem(obj.base), ACL_SUCCESS);
            assert_eq!(aclrtReleaseMemAddress(obj.base), ACL_SUCCESS);
            aclrtFreePhysical(obj.handle)
        }
    }

    /// Executes one protocol command; the answer (without the marker).
    fn execute(&mut self, line: &str) -> String {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |at: usize| words[at].parse::<usize>().expect("number");
        let code_or = |outcome: Result<String, aclError>| outcome.unwrap_or_else(|code| code.to_string());
        match words[0] {
            "pid" => own_pid().to_string(),
            "alloc" => self.alloc(number(1) as u8).to_string(),
            "export" => code_or(
                self.export(number(1), words[2], number(3) as u64)
                    .map(|text| format!("0 {text}")),
            ),
            "setpid" => {
                let pids: Vec<i32> = words[2..].iter().map(|pid| pid.parse().expect("pid")).collect();
                set_pid(words[1], &pids).to_string()
            }
            "import" => code_or(self.import(words[1]).map(|id| format!("0 {id}"))),
            "read" => code_or(
                self.read(number(1))
                    .map(|byte| format!("0 {}", byte.map_or_else(|| "mixed".to_owned(), |b| b.to_string()))),
            ),
            "fill" => self.fill(number(1), number(2) as u8).to_string(),
            "free" => self.free(number(1)).to_string(),
            "meminfo" => free_device_bytes().to_string(),
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

/// Data crosses processes both ways with `kind` handles.
fn round_trip(kind: &str) {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let mut side = Side::default();
        let child = peer.pid();
        // The parent exports, the child imports.
        let id = side.alloc(0x11);
        let text = side.export(id, kind, 0).expect("export");
        assert_eq!(set_pid(&text, &[child]), ACL_SUCCESS);
        let answer = peer.ask(&format!("import {text}"));
        assert_eq!(answer[0], "0", "child import: {answer:?}");
        let theirs = &answer[1];
        assert_eq!(peer.ask(&format!("read {theirs}")), ["0", "17"]);
        assert_eq!(peer.code(&format!("fill {theirs} 34")), ACL_SUCCESS);
        assert_eq!(side.read(id), Ok(Some(34)));
        // The child exports, the parent imports.
        let child_id = peer.ask("alloc 51")[0].clone();
        let answer = peer.ask(&format!("export {child_id} {kind} 0"));
        assert_eq!(answer[0], "0", "child export: {answer:?}");
        assert_eq!(peer.code(&format!("setpid {} {}", answer[1], own_pid())), ACL_SUCCESS);
        let mine = side.import(&answer[1]).expect("parent import");
        assert_eq!(side.read(mine), Ok(Some(51)));
        assert_eq!(side.fill(mine, 68), ACL_SUCCESS);
        assert_eq!(peer.ask(&format!("read {child_id}")), ["0", "68"]);
        // Everyone frees; the parent's tables are back to empty for these.
        assert_eq!(peer.code(&format!("free {theirs}")), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("free {child_id}")), ACL_SUCCESS);
        peer.quit();
        assert_eq!(side.free(mine), ACL_SUCCESS);
        assert_eq!(side.free(id), ACL_SUCCESS);
    });
}

#[test]
fn v1_handles_move_data_both_ways() {
    round_trip("v1");
}

#[test]
fn v2_default_handles_move_data_both_ways() {
    round_trip("v2");
}

#[test]
fn v2_fabric_handles_move_data_both_ways() {
    round_trip("fabric");
}

#[test]
fn whitelist_is_enforced_across_processes() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child = peer.pid();
        for kind in ["v1", "fabric"] {
            let handle = physical(granularity());
            let text = export(handle, kind, 0).expect("export");
            // Not whitelisted at all, then another pid only.
            assert_eq!(peer.code(&format!("import {text}")), ACL_ERROR_RT_NO_PERMISSION);
            assert_eq!(set_pid(&text, &[own_pid()]), ACL_SUCCESS);
            assert_eq!(peer.code(&format!("import {text}")), ACL_ERROR_RT_NO_PERMISSION);
            // Whitelisted: allowed.
            assert_eq!(set_pid(&text, &[child]), ACL_SUCCESS);
            let answer = peer.ask(&format!("import {text}"));
            assert_eq!(answer[0], "0");
            assert_eq!(peer.code(&format!("free {}", answer[1])), ACL_SUCCESS);
            // SAFETY: a live handle.
            assert_eq!(unsafe { aclrtFreePhysical(handle) }, ACL_SUCCESS);
        }
        peer.quit();
    });
}

#[test]
fn disable_pid_validation_lets_any_process_of_the_user_import() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let mut side = Side::default();
        for kind in ["v1", "v2", "fabric"] {
            let id = side.alloc(9);
            let text = side
                .export(id, kind, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
                .expect("export");
            let answer = peer.ask(&format!("import {text}"));
            assert_eq!(answer[0], "0", "{kind}: {answer:?}");
            assert_eq!(peer.ask(&format!("read {}", answer[1])), ["0", "9"]);
            assert_eq!(peer.code(&format!("free {}", answer[1])), ACL_SUCCESS);
            // The driver's rule: no pid list after "no validation".
            assert_eq!(set_pid(&text, &[own_pid()]), ACL_ERROR_RT_NO_PERMISSION, "{kind}");
            assert!(recent().contains("DISABLE_PID_VALIDATION"));
            assert_eq!(side.free(id), ACL_SUCCESS);
        }
        peer.quit();
    });
}

#[test]
fn import_after_the_exporter_freed_is_refused() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child = peer.pid();
        // The exporter frees its handle (still mapped: the export is gone).
        let mut side = Side::default();
        let id = side.alloc(1);
        let text = side.export(id, "v1", 0).expect("export");
        assert_eq!(set_pid(&text, &[child]), ACL_SUCCESS);
        // SAFETY: a live handle; the mapping keeps the memory.
        assert_eq!(unsafe { aclrtFreePhysical(side.obj(id).handle) }, ACL_SUCCESS);
        assert_eq!(peer.code(&format!("import {text}")), ACL_ERROR_RT_PARAM_INVALID);
        // SAFETY: the mapping's start; its reservation is released after.
        unsafe {
            assert_eq!(aclrtUnmapMem(side.obj(id).base), ACL_SUCCESS);
            assert_eq!(aclrtReleaseMemAddress(side.obj(id).base), ACL_SUCCESS);
        }
        // The exporter exits: its handles die with it.
        let child_id = peer.ask("alloc 2")[0].clone();
        let answer = peer.ask(&format!("export {child_id} fabric 0"));
        assert_eq!(peer.code(&format!("setpid {} {}", answer[1], own_pid())), ACL_SUCCESS);
        peer.quit();
        assert_eq!(import(&answer[1]).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("does not name a live export"), "{}", recent());
    });
}

#[test]
fn imported_memory_outlives_its_exporter() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child_id = peer.ask("alloc 90")[0].clone();
        let answer = peer.ask(&format!("export {child_id} v2 0"));
        assert_eq!(peer.code(&format!("setpid {} {}", answer[1], own_pid())), ACL_SUCCESS);
        let mut side = Side::default();
        let mine = side.import(&answer[1]).expect("import");
        // The exporter frees everything and exits.
        assert_eq!(peer.code(&format!("free {child_id}")), ACL_SUCCESS);
        peer.quit();
        // The memory lives until every process freed its handle.
        assert_eq!(side.read(mine), Ok(Some(90)));
        assert_eq!(side.fill(mine, 91), ACL_SUCCESS);
        assert_eq!(side.read(mine), Ok(Some(91)));
        assert_eq!(side.free(mine), ACL_SUCCESS);
    });
}

#[test]
fn imports_do_not_count_against_the_importing_device() {
    on_device(|| {
        let mut side = Side::default();
        let id = side.alloc(4);
        let text = side
            .export(id, "v2", ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
            .expect("export");
        // The child is a process of its own: its device's free memory moves
        // only with its own allocations.
        let mut peer = Peer::spawn(CHILD_VAR);
        let before: usize = peer.ask("meminfo")[0].parse().expect("bytes");
        let answer = peer.ask(&format!("import {text}"));
        assert_eq!(answer[0], "0");
        assert_eq!(peer.ask("meminfo")[0].parse::<usize>().expect("bytes"), before);
        let own = peer.ask("alloc 1")[0].clone();
        assert_eq!(
            peer.ask("meminfo")[0].parse::<usize>().expect("bytes"),
            before - granularity()
        );
        assert_eq!(peer.code(&format!("free {own}")), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("free {}", answer[1])), ACL_SUCCESS);
        peer.quit();
        assert_eq!(side.free(id), ACL_SUCCESS);
    });
}

#[test]
fn imported_handles_cannot_be_exported_again() {
    on_device(|| {
        let mut peer = Peer::spawn(CHILD_VAR);
        let child_id = peer.ask("alloc 3")[0].clone();
        let answer = peer.ask(&format!("export {child_id} v1 1"));
        let handle = import(&answer[1]).expect("import");
        assert_eq!(export(handle, "v1", 0).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("imported"), "{}", recent());
        // SAFETY: a live imported handle.
        assert_eq!(unsafe { aclrtFreePhysical(handle) }, ACL_SUCCESS);
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
    // Memory is shared through memfds: anonymous files that exist in no
    // directory. An importer reaches one only through the exporter's open
    // descriptor (/proc/<pid>/fd/<fd>), which disappears when the exporter
    // closes it or exits, and the memory goes when the last process holding
    // it closes it. So a crash can leave nothing behind in /dev/shm or /tmp.
    let before_shm = our_entries("/dev/shm");
    let before_tmp = our_entries("/tmp");
    on_device(|| {
        let mut side = Side::default();
        let id = side.alloc(5);
        let text = side
            .export(id, "v1", ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
            .expect("export");
        // The handle names an anonymous file of this process.
        let raw = u64_of(&parse_handle(&text).1);
        let fd = (raw >> 22) & 0xF_FFFF;
        assert_eq!((raw >> 42) as i32, own_pid());
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).expect("the export's descriptor");
        let target = target.to_string_lossy();
        assert!(
            target.starts_with("/memfd:") && target.ends_with("(deleted)"),
            "{target}"
        );
        let mut peer = Peer::spawn(CHILD_VAR);
        let answer = peer.ask(&format!("import {text}"));
        assert_eq!(answer[0], "0");
        assert_eq!(peer.ask(&format!("read {}", answer[1])), ["0", "5"]);
        assert_eq!(peer.code(&format!("free {}", answer[1])), ACL_SUCCESS);
        peer.quit();
        assert_eq!(side.free(id), ACL_SUCCESS);
    });
    assert_eq!(our_entries("/dev/shm"), before_shm);
    assert_eq!(our_entries("/tmp"), before_tmp);
}

#[test]
fn import_in_the_exporting_process_is_refused() {
    on_device(|| {
        for kind in ["v1", "v2", "fabric"] {
            let handle = physical(granularity());
            let text = export(handle, kind, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION).expect("export");
            assert_eq!(import(&text).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID, "{kind}");
            assert!(recent().contains("exported by this process"), "{}", recent());
            // SAFETY: a live handle.
            assert_eq!(unsafe { aclrtFreePhysical(handle) }, ACL_SUCCESS);
        }
    });
}

#[test]
fn a_handle_is_exported_once_per_process() {
    on_device(|| {
        let handle = physical(granularity());
        let text = export(handle, "v1", 0).expect("export");
        for kind in ["v1", "v2", "fabric"] {
            assert_eq!(export(handle, kind, 0).unwrap_err(), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("already exported"), "{}", recent());
        }
        let leaks = soft::leak_report();
        let raw = u64_of(&parse_handle(&text).1);
        assert!(leaks.contains(&format!("shareable handle {raw:#x}")), "{leaks}");
        // SAFETY: a live handle.
        assert_eq!(unsafe { aclrtFreePhysical(handle) }, ACL_SUCCESS);
        assert!(!soft::leak_report().contains(&format!("shareable handle {raw:#x}")));
        // A freed handle is not a handle any more.
        assert_eq!(export(handle, "v1", 0).unwrap_err(), ACL_ERROR_RT_INVALID_HANDLE);
    });
}

#[test]
fn export_checks_its_arguments() {
    without_device(|| {
        let handle = physical(granularity());
        let mut out = 0u64;
        let mut fabric = aclrtMemFabricHandle { data: [0; 128] };
        // SAFETY: NULL and bad arguments are refused before any write.
        unsafe {
            assert_eq!(
                aclrtMemExportToShareableHandle(null_mut(), ACL_MEM_HANDLE_TYPE_NONE, 0, &mut out),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemExportToShareableHandle(handle, 1, 0, &mut out),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 0, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 2, &mut out),
                ACL_ERROR_RT_PARAM_INVALID
            );
            let bogus = 0xA5C0_0000_DEAD_0000usize as aclrtDrvMemHandle;
            assert_eq!(
                aclrtMemExportToShareableHandle(bogus, ACL_MEM_HANDLE_TYPE_NONE, 0, &mut out),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            let out_v2 = (&mut out as *mut u64).cast::<c_void>();
            assert_eq!(
                aclrtMemExportToShareableHandleV2(null_mut(), 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, out_v2),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemExportToShareableHandleV2(handle, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            for bad in [0, 3] {
                assert_eq!(
                    aclrtMemExportToShareableHandleV2(handle, 0, bad, out_v2),
                    ACL_ERROR_RT_PARAM_INVALID
                );
            }
            assert_eq!(
                aclrtMemExportToShareableHandleV2(handle, 2, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, out_v2),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // FABRIC needs a current context; DEFAULT (and V1) do not.
            let fabric_out = (&mut fabric as *mut aclrtMemFabricHandle).cast::<c_void>();
            assert_eq!(
                aclrtMemExportToShareableHandleV2(handle, 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, fabric_out),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(
                aclrtMemExportToShareableHandleV2(handle, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, out_v2),
                ACL_SUCCESS
            );
            assert_ne!(out, 0);
            assert_eq!(aclrtFreePhysical(handle), ACL_SUCCESS);
        }
    });
}

#[test]
fn set_pid_checks_its_arguments() {
    without_device(|| {
        let handle = physical(granularity());
        let text = export(handle, "v1", 0).expect("export without a context");
        let mut raw = u64_of(&parse_handle(&text).1);
        let mut pids = [12345i32];
        // SAFETY: NULL and bad arguments are refused before any read.
        unsafe {
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, null_mut(), 1),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, pids.as_mut_ptr(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            // pidNum is handed on as 32 bits: 2^32 becomes 0.
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, pids.as_mut_ptr(), 1 << 32),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw ^ 1, pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("not a live export of this process"), "{}", recent());
            let mut bad = [0i32];
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, bad.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            let raw_ptr = (&mut raw as *mut u64).cast::<c_void>();
            assert_eq!(
                aclrtMemSetPidToShareableHandleV2(null_mut(), ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, pids.as_mut_ptr(), 1),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemSetPidToShareableHandleV2(raw_ptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, null_mut(), 1),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemSetPidToShareableHandleV2(raw_ptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, pids.as_mut_ptr(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemSetPidToShareableHandleV2(raw_ptr, 7, pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // A DEFAULT handle read as FABRIC is not a FABRIC handle.
            let mut zero = aclrtMemFabricHandle { data: [0; 128] };
            let zero_ptr = (&mut zero as *mut aclrtMemFabricHandle).cast::<c_void>();
            assert_eq!(
                aclrtMemSetPidToShareableHandleV2(zero_ptr, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // Valid, without a context; repeating a pid is harmless.
            assert_eq!(
                aclrtMemSetPidToShareableHandleV2(raw_ptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, pids.as_mut_ptr(), 1),
                ACL_SUCCESS
            );
            assert_eq!(aclrtMemSetPidToShareableHandle(raw, pids.as_mut_ptr(), 1), ACL_SUCCESS);
            // The whitelist holds at most 65535 pids.
            let mut many: Vec<i32> = (1..=65_534).map(|pid| pid + 20_000).collect();
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, many.as_mut_ptr(), many.len()),
                ACL_SUCCESS
            );
            let mut one_more = [7i32];
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, one_more.as_mut_ptr(), 1),
                ACL_ERROR_RT_OVER_LIMIT
            );
            assert_eq!(aclrtFreePhysical(handle), ACL_SUCCESS);
            // After the free, the shareable handle is gone.
            assert_eq!(
                aclrtMemSetPidToShareableHandle(raw, pids.as_mut_ptr(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
    });
}

#[test]
fn import_checks_its_arguments() {
    // A handle naming a process that does not exist (the largest pid).
    let absent = (((1u64 << 22) - 1) << 42) | (3 << 22) | 5;
    without_device(|| {
        let mut handle = null_mut();
        let mut raw = absent;
        let raw_ptr = (&mut raw as *mut u64).cast::<c_void>();
        // SAFETY: NULL and bad arguments are refused before any access.
        unsafe {
            assert_eq!(
                aclrtMemImportFromShareableHandle(absent, 0, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemImportFromShareableHandle(absent, -1, &mut handle),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(
                aclrtMemImportFromShareableHandle(absent, 64, &mut handle),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(
                aclrtMemImportFromShareableHandle(absent, 0, &mut handle),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(
                aclrtMemImportFromShareableHandleV2(null_mut(), ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &mut handle),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemImportFromShareableHandleV2(raw_ptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemImportFromShareableHandleV2(raw_ptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 1, &mut handle),
                ACL_ERROR_INVALID_PARAM
            );
            // The current device is asked for before the type is checked.
            assert_eq!(
                aclrtMemImportFromShareableHandleV2(raw_ptr, 9, 0, &mut handle),
                ACL_ERROR_RT_CONTEXT_NULL
            );
        }
    });
    on_device(|| {
        let mut handle = null_mut();
        let mut raw = absent;
        let raw_ptr = (&mut raw as *mut u64).cast::<c_void>();
        // SAFETY: as above.
        unsafe {
            assert_eq!(
                aclrtMemImportFromShareableHandleV2(raw_ptr, 9, 0, &mut handle),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemImportFromShareableHandle(absent, 0, &mut handle),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("does not name a live export"), "{}", recent());
            assert_eq!(
                aclrtMemImportFromShareableHandle(0, 0, &mut handle),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(handle.is_null());
        }
    });
}
