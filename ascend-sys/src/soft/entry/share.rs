//! Entry points of 3.7 Physical-memory sharing (shareable handles).
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

not_emulated! {
    fn aclrtMemExportToShareableHandle(handle: aclrtDrvMemHandle, handleType: aclrtMemHandleType, flags: u64, shareableHandle: *mut u64) -> aclError;
    fn aclrtMemSetPidToShareableHandle(shareableHandle: u64, pid: *mut i32, pidNum: usize) -> aclError;
    fn aclrtMemImportFromShareableHandle(shareableHandle: u64, deviceId: i32, handle: *mut aclrtDrvMemHandle) -> aclError;
    fn aclrtMemExportToShareableHandleV2(handle: aclrtDrvMemHandle, flags: u64, shareType: aclrtMemSharedHandleType, shareableHandle: *mut c_void) -> aclError;
    fn aclrtMemSetPidToShareableHandleV2(shareableHandle: *mut c_void, shareType: aclrtMemSharedHandleType, pid: *mut i32, pidNum: usize) -> aclError;
    fn aclrtMemImportFromShareableHandleV2(shareableHandle: *mut c_void, shareType: aclrtMemSharedHandleType, flags: u64, handle: *mut aclrtDrvMemHandle) -> aclError;
}
