//! Compile-time checks of the C struct and union layouts.
//!
//! Every number below is taken from the layout table of the project's ABI
//! reference (`acl-abi.md` §7), which records `sizeof`, `_Alignof` and
//! `offsetof` of the upstream AscendCL headers (hicann/runtime master,
//! ACL 1.17.0) compiled with gcc on x86_64. They are written here by hand, not
//! copied from bindgen's output, so a header or binding that drifts from the
//! real ABI fails to compile. The numbers are for LP64 targets (x86_64 and
//! aarch64, the only ones CANN ships for); the module is compiled only where
//! pointers are 64 bits wide.
#![cfg(target_pointer_width = "64")]

use crate::types::*;
use core::mem::{align_of, offset_of, size_of};

// aclrtMemLocation: { uint32_t id; aclrtMemLocationType type; } = 8 / 4.
const _: () = assert!(size_of::<aclrtMemLocation>() == 8);
const _: () = assert!(align_of::<aclrtMemLocation>() == 4);
const _: () = assert!(offset_of!(aclrtMemLocation, id) == 0);
const _: () = assert!(offset_of!(aclrtMemLocation, type_) == 4);

// aclrtPhysicalMemProp: 4 bytes of padding after `location` (20..24) = 32 / 8.
const _: () = assert!(size_of::<aclrtPhysicalMemProp>() == 32);
const _: () = assert!(align_of::<aclrtPhysicalMemProp>() == 8);
const _: () = assert!(offset_of!(aclrtPhysicalMemProp, handleType) == 0);
const _: () = assert!(offset_of!(aclrtPhysicalMemProp, allocationType) == 4);
const _: () = assert!(offset_of!(aclrtPhysicalMemProp, memAttr) == 8);
const _: () = assert!(offset_of!(aclrtPhysicalMemProp, location) == 12);
const _: () = assert!(offset_of!(aclrtPhysicalMemProp, reserve) == 24);

// aclrtMemAccessDesc = 24 / 4.
const _: () = assert!(size_of::<aclrtMemAccessDesc>() == 24);
const _: () = assert!(align_of::<aclrtMemAccessDesc>() == 4);
const _: () = assert!(offset_of!(aclrtMemAccessDesc, flags) == 0);
const _: () = assert!(offset_of!(aclrtMemAccessDesc, location) == 4);
const _: () = assert!(offset_of!(aclrtMemAccessDesc, rsv) == 12);

// aclrtMemFabricHandle: 128 opaque bytes = 128 / 1.
const _: () = assert!(size_of::<aclrtMemFabricHandle>() == 128);
const _: () = assert!(align_of::<aclrtMemFabricHandle>() == 1);
const _: () = assert!(offset_of!(aclrtMemFabricHandle, data) == 0);

// aclrtMallocAttrValue (union): every member at offset 0 = 8 / 4.
const _: () = assert!(size_of::<aclrtMallocAttrValue>() == 8);
const _: () = assert!(align_of::<aclrtMallocAttrValue>() == 4);
const _: () = assert!(offset_of!(aclrtMallocAttrValue, moduleId) == 0);
const _: () = assert!(offset_of!(aclrtMallocAttrValue, deviceId) == 0);
const _: () = assert!(offset_of!(aclrtMallocAttrValue, vaFlag) == 0);
const _: () = assert!(offset_of!(aclrtMallocAttrValue, rsv) == 0);

// aclrtMallocAttribute = 12 / 4.
const _: () = assert!(size_of::<aclrtMallocAttribute>() == 12);
const _: () = assert!(align_of::<aclrtMallocAttribute>() == 4);
const _: () = assert!(offset_of!(aclrtMallocAttribute, attr) == 0);
const _: () = assert!(offset_of!(aclrtMallocAttribute, value) == 4);

// aclrtMallocConfig = 16 / 8.
const _: () = assert!(size_of::<aclrtMallocConfig>() == 16);
const _: () = assert!(align_of::<aclrtMallocConfig>() == 8);
const _: () = assert!(offset_of!(aclrtMallocConfig, attrs) == 0);
const _: () = assert!(offset_of!(aclrtMallocConfig, numAttrs) == 8);

// aclrtServerPid: 4 bytes of padding after `sdid` = 24 / 8.
const _: () = assert!(size_of::<aclrtServerPid>() == 24);
const _: () = assert!(align_of::<aclrtServerPid>() == 8);
const _: () = assert!(offset_of!(aclrtServerPid, sdid) == 0);
const _: () = assert!(offset_of!(aclrtServerPid, pid) == 8);
const _: () = assert!(offset_of!(aclrtServerPid, num) == 16);

// aclrtPtrAttributes = 28 / 4.
const _: () = assert!(size_of::<aclrtPtrAttributes>() == 28);
const _: () = assert!(align_of::<aclrtPtrAttributes>() == 4);
const _: () = assert!(offset_of!(aclrtPtrAttributes, location) == 0);
const _: () = assert!(offset_of!(aclrtPtrAttributes, pageSize) == 8);
const _: () = assert!(offset_of!(aclrtPtrAttributes, rsv) == 12);

// aclrtMemUsageInfo = 112 / 8.
const _: () = assert!(size_of::<aclrtMemUsageInfo>() == 112);
const _: () = assert!(align_of::<aclrtMemUsageInfo>() == 8);
const _: () = assert!(offset_of!(aclrtMemUsageInfo, name) == 0);
const _: () = assert!(offset_of!(aclrtMemUsageInfo, curMemSize) == 32);
const _: () = assert!(offset_of!(aclrtMemUsageInfo, memPeakSize) == 40);
const _: () = assert!(offset_of!(aclrtMemUsageInfo, reserved) == 48);

// aclrtUuid = 16 / 1.
const _: () = assert!(size_of::<aclrtUuid>() == 16);
const _: () = assert!(align_of::<aclrtUuid>() == 1);
const _: () = assert!(offset_of!(aclrtUuid, bytes) == 0);

// aclrtIpcEventHandle: ACL_IPC_EVENT_HANDLE_SIZE bytes = 64 / 1.
const _: () = assert!(size_of::<aclrtIpcEventHandle>() == 64);
const _: () = assert!(align_of::<aclrtIpcEventHandle>() == 1);
const _: () = assert!(offset_of!(aclrtIpcEventHandle, reserved) == 0);
const _: () = assert!(ACL_IPC_EVENT_HANDLE_SIZE == 64);

// Every C enum is 4 bytes, and `aclError` is a 32-bit int (§2).
const _: () = assert!(size_of::<aclError>() == 4);
const _: () = assert!(size_of::<aclrtMemLocationType>() == 4);
const _: () = assert!(size_of::<aclrtMemAttr>() == 4);
// Handles are pointer-sized.
const _: () = assert!(size_of::<aclrtDrvMemHandle>() == 8);
const _: () = assert!(size_of::<aclrtStream>() == 8);

// aclrtCntNotifyRecordInfo: two 32-bit fields = 8 / 4.
const _: () = assert!(size_of::<aclrtCntNotifyRecordInfo>() == 8);
const _: () = assert!(align_of::<aclrtCntNotifyRecordInfo>() == 4);
const _: () = assert!(offset_of!(aclrtCntNotifyRecordInfo, value) == 4);

// aclrtCntNotifyWaitInfo: three 32-bit fields, a bool and 3 reserved bytes = 16 / 4.
const _: () = assert!(size_of::<aclrtCntNotifyWaitInfo>() == 16);
const _: () = assert!(align_of::<aclrtCntNotifyWaitInfo>() == 4);
const _: () = assert!(offset_of!(aclrtCntNotifyWaitInfo, timeout) == 8);
const _: () = assert!(offset_of!(aclrtCntNotifyWaitInfo, isClear) == 12);
const _: () = assert!(offset_of!(aclrtCntNotifyWaitInfo, rsv) == 13);
// aclrtUtilizationInfo (issue 41; not in the reference table, from
// hicann/runtime acl_rt.h): { int32_t cube, vector, aicpu, memory;
// aclrtUtilizationExtendInfo *utilizationExtend; } = 24 / 8.
const _: () = assert!(size_of::<aclrtUtilizationInfo>() == 24);
const _: () = assert!(align_of::<aclrtUtilizationInfo>() == 8);
const _: () = assert!(offset_of!(aclrtUtilizationInfo, memoryUtilization) == 12);
const _: () = assert!(offset_of!(aclrtUtilizationInfo, utilizationExtend) == 16);
const _: () = assert!(size_of::<aclrtDevAttr>() == 4);
const _: () = assert!(size_of::<aclrtDeviceStatus>() == 4);
