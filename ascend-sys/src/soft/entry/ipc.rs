//! Entry points of 3.8 Key-based IPC memory.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

not_emulated! {
    fn aclrtIpcMemGetExportKey(devPtr: *mut c_void, size: usize, key: *mut c_char, len: usize, flags: u64) -> aclError;
    fn aclrtIpcMemImportByKey(devPtr: *mut *mut c_void, key: *const c_char, flags: u64) -> aclError;
    fn aclrtIpcMemClose(key: *const c_char) -> aclError;
    fn aclrtIpcMemSetImportPid(key: *const c_char, pid: *mut i32, num: usize) -> aclError;
    fn aclrtIpcMemImportPidInterServer(key: *const c_char, serverPids: *mut aclrtServerPid, num: usize) -> aclError;
    fn aclrtIpcMemSetAttr(key: *const c_char, type: aclrtIpcMemAttrType, attr: u64) -> aclError;
}
