//! The list of every AscendCL function this crate binds, in the order and
//! groups of the reference (`acl-abi.md` §3), with each function's C name,
//! C parameter names and the Rust types bindgen generated for them.
//!
//! The single source of truth of the Rust-side signatures, kept in the
//! exported macro [`for_each_acl_function!`](crate::for_each_acl_function):
//! `acl_functions!` turns each entry into a `pub unsafe fn` at the crate
//! root, routed to the active backend, checked at compile time against the
//! declaration generated from `include/acl_memory.h`;
//! [`FUNCTION_NAMES`](crate::FUNCTION_NAMES), `soft::direct` and the drop-in
//! C library `ascend-soft-acl` are generated from the same list.
//!
//! Groups (`docs/acl-to-rust.md` maps each function to its safe item): 3.1
//! init and errors; 3.2 devices and contexts; 3.3 streams and events; 3.4
//! device memory and copies; 3.5 host memory; 3.6 VMM; 3.7 shareable
//! handles; 3.8 IPC memory; 3.9 allocators; 3.10 memory pools; 3.11 managed
//! memory; 3.12 cache maintenance; 3.13 mbufs; 3.14 callbacks and host
//! functions; 3.15 notifies; 3.16 device queries, event flags, abort/stop.
//! 209 functions; the reference table lists 103 of them, the others'
//! signatures (3.10 to 3.16 among them) are `hicann/runtime`'s
//! `include/external/acl/acl_rt.h` and `acl_rt_memory_soma.h` at 681ef7610.

use crate::dispatch::acl_functions;
use crate::types::*;

/// Invokes a macro once with the list of every bound AscendCL function, in
/// the order of the reference: for each its doc comments, then
/// `fn aclInit(configPath: *const c_char) -> aclError;` (C name, parameters
/// with their C names and Rust types, return type).
///
/// This is the crate's single list of signatures: the crate-root functions
/// and [`soft::direct`](crate::soft::direct) are generated from it, and so
/// is the drop-in C library `ascend-soft-acl`. The types are written as this
/// crate exports them (`aclError`, `*mut c_void`, ...), unqualified, so the
/// invoking module needs `use ascend_sys::*;` in scope. `callback` is a
/// macro name or path (`my_macro` or `some::path::my_macro`).
///
/// ```
/// use ascend_sys::*;
///
/// macro_rules! count {
///     ($($(#[$meta:meta])* fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty;)*) => {
///         [$(stringify!($name)),*].len()
///     };
/// }
/// assert_eq!(ascend_sys::for_each_acl_function!(count), ascend_sys::FUNCTION_NAMES.len());
/// ```
#[macro_export]
macro_rules! for_each_acl_function {
    ($($callback:ident)::+) => {
        $($callback)::+! {
            // 3.1 Init / version / errors
            /// Initializes AscendCL for this process. `configPath` may be NULL (default
            /// configuration); a second call returns `ACL_ERROR_REPEAT_INITIALIZE`.
            fn aclInit(configPath: *const c_char) -> aclError;
            /// Finalizes AscendCL in one call, however many times `aclInit` succeeded;
            /// a repeated call returns `ACL_ERROR_REPEAT_FINALIZE`.
            fn aclFinalize() -> aclError;
            /// Drops one `aclInit` reference, finalizing when it reaches zero; writes the
            /// remaining count to `refCount`.
            fn aclFinalizeReference(refCount: *mut u64) -> aclError;
            /// Writes the ACL *interface* version (1.17.0 for CANN 9.x headers), not the
            /// CANN version. Deprecated upstream in favour of `aclsysGetVersionStr`/`Num`.
            fn aclrtGetVersion(
                majorVersion: *mut i32,
                minorVersion: *mut i32,
                patchVersion: *mut i32,
            ) -> aclError;
            /// Writes the version string of the package named by `pkgName` (for example
            /// `"runtime"`) into `versionStr`.
            fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) -> aclError;
            /// Writes the numeric version of the package named by `pkgName`.
            fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) -> aclError;
            /// Returns the message describing the most recent error on this thread, or NULL.
            fn aclGetRecentErrMsg() -> *const c_char;
            /// Returns the SoC name as a C string, or NULL on failure.
            fn aclrtGetSocName() -> *const c_char;
            /// Returns the last error recorded at `level` and clears it.
            fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError;
            /// Returns the last error recorded at `level` without clearing it.
            fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError;
            /// Writes the fault of device `deviceId` (`ACL_RT_NO_ERROR` when it has none).
            fn aclrtGetErrorVerbose(deviceId: i32, errorInfo: *mut aclrtErrorInfo) -> aclError;

            // 3.2 Device / context / peer access
            /// Makes `deviceId` the calling thread's current device, retaining its primary
            /// context; an out-of-range id returns `ACL_ERROR_RT_INVALID_DEVICEID`.
            fn aclrtSetDevice(deviceId: i32) -> aclError;
            /// Releases one retain of the device's primary context (torn down at zero);
            /// a device never set returns `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR`.
            fn aclrtResetDevice(deviceId: i32) -> aclError;
            /// Releases every retain of the device's primary context in one call.
            fn aclrtResetDeviceForce(deviceId: i32) -> aclError;
            /// Writes the calling thread's current device id.
            fn aclrtGetDevice(deviceId: *mut i32) -> aclError;
            /// Writes the number of visible devices.
            fn aclrtGetDeviceCount(count: *mut u32) -> aclError;
            /// Writes whether the program runs on the host or on the device.
            fn aclrtGetRunMode(runMode: *mut aclrtRunMode) -> aclError;
            /// Creates a context on `deviceId` and makes it current on this thread.
            fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) -> aclError;
            /// Destroys a context created by `aclrtCreateContext`.
            fn aclrtDestroyContext(context: aclrtContext) -> aclError;
            /// Makes `context` the calling thread's current context.
            fn aclrtSetCurrentContext(context: aclrtContext) -> aclError;
            /// Writes the calling thread's current context.
            fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError;
            /// Blocks until all work queued on the current device has completed.
            fn aclrtSynchronizeDevice() -> aclError;
            /// Like `aclrtSynchronizeDevice`, but gives up after `timeout`.
            fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError;
            /// Writes this process's host-side process id, the value importers must be
            /// whitelisted under. Needs no current device.
            fn aclrtDeviceGetBareTgid(pid: *mut i32) -> aclError;
            /// Writes 1 to `canAccessPeer` if `deviceId` can access `peerDeviceId`'s memory,
            /// else 0; equal ids return `ACL_ERROR_INVALID_PARAM`.
            fn aclrtDeviceCanAccessPeer(
                canAccessPeer: *mut i32,
                deviceId: i32,
                peerDeviceId: i32,
            ) -> aclError;
            /// Enables access from the current device to `peerDeviceId` (one direction).
            /// `flags` must be 0, otherwise `ACL_ERROR_FEATURE_UNSUPPORTED`.
            fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> aclError;
            /// Disables access from the current device to `peerDeviceId`.
            fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) -> aclError;
            /// Writes a handle of the current context's default stream, usable wherever a
            /// stream is (NULL still names that stream too).
            fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) -> aclError;
            /// Writes how many cores of a kind (`ACL_RT_DEV_RES_*`) the current thread may
            /// use on the current device.
            fn aclrtGetResInCurrentThread(type_: aclrtDevResLimitType, value: *mut u32) -> aclError;

            // 3.3 Stream / event
            /// Creates a stream on the current context.
            fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError;
            /// Creates a stream with a `priority` (0-7) and `ACL_STREAM_*` flag bits.
            fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32) -> aclError;
            /// Destroys a stream.
            fn aclrtDestroyStream(stream: aclrtStream) -> aclError;
            /// Destroys a stream created by `aclrtCreateStream*` without waiting: work
            /// still queued on it is dropped.
            fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError;
            /// Blocks until all work queued on `stream` has completed.
            fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError;
            /// Like `aclrtSynchronizeStream`, but gives up after `timeout`.
            fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError;
            /// Writes whether every task queued on `stream` (NULL: the default stream) has
            /// finished.
            fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) -> aclError;
            /// Writes the ID of `stream` (NULL: the default stream).
            fn aclrtStreamGetId(stream: aclrtStream, streamId: *mut i32) -> aclError;
            /// Writes the priority of `stream` (NULL: the default stream), 0 the highest.
            fn aclrtStreamGetPriority(stream: aclrtStream, priority: *mut u32) -> aclError;
            /// Writes the `ACL_STREAM_*` flags of `stream` (NULL: the default stream).
            fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) -> aclError;
            /// Creates an event.
            fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError;
            /// Creates an event with `ACL_EVENT_*` flag bits.
            fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError;
            /// Creates an event with `ACL_EVENT_*` flag bits (extended variant).
            fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError;
            /// Destroys an event.
            fn aclrtDestroyEvent(event: aclrtEvent) -> aclError;
            /// Records `event` at the current end of `stream`.
            fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError;
            /// Enqueues a reset of `event` on `stream`: once the stream reaches it, the
            /// event counts as never recorded.
            fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) -> aclError;
            /// Blocks until `event` has completed.
            fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError;
            /// Like `aclrtSynchronizeEvent`, but gives up after `timeout` milliseconds
            /// (-1: no limit).
            fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) -> aclError;
            /// Writes whether the work before `event`'s record point has completed.
            fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) -> aclError;
            /// Writes whether `event` has completed (deprecated by the runtime in favour of
            /// `aclrtQueryEventStatus`; complete before the first record).
            fn aclrtQueryEvent(event: aclrtEvent, status: *mut aclrtEventStatus) -> aclError;
            /// Writes whether every stream wait queued on `event` has passed.
            fn aclrtQueryEventWaitStatus(event: aclrtEvent, status: *mut aclrtEventWaitStatus) -> aclError;
            /// Sets whether `stream` (NULL: the default stream) still runs its later tasks
            /// after one fails (`ACL_CONTINUE_ON_FAILURE`) or not (`ACL_STOP_ON_FAILURE`).
            fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError;
            /// Writes a handle other processes open an `ACL_EVENT_IPC` event by.
            fn aclrtIpcGetEventHandle(event: aclrtEvent, handle: *mut aclrtIpcEventHandle) -> aclError;
            /// Opens an IPC event another process (or this one) shared.
            fn aclrtIpcOpenEventHandle(handle: aclrtIpcEventHandle, event: *mut aclrtEvent) -> aclError;
            /// Makes work queued later on `stream` wait until `event` completes.
            fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError;
            /// Like `aclrtStreamWaitEvent`, but the wait fails on the stream after `timeout`
            /// seconds (0: no limit).
            fn aclrtStreamWaitEventWithTimeout(stream: aclrtStream, event: aclrtEvent, timeout: i32) -> aclError;
            /// Writes the time in milliseconds between two completed events.
            fn aclrtEventElapsedTime(
                ms: *mut f32,
                startEvent: aclrtEvent,
                endEvent: aclrtEvent,
            ) -> aclError;
            /// Writes the time of `event`'s latest record, in microseconds of the device's
            /// system counter.
            fn aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64) -> aclError;

            // 3.4 Device memory, copy, set
            /// Allocates device memory on the current device: size rounded up to 32 bytes
            /// plus 32 bytes of padding. Size 0 or NULL `devPtr`: `ACL_ERROR_INVALID_PARAM`.
            fn aclrtMalloc(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) -> aclError;
            /// Like `aclrtMalloc` but without the padding: size rounded up to 32 bytes.
            fn aclrtMallocAlign32(
                devPtr: *mut *mut c_void,
                size: usize,
                policy: aclrtMemMallocPolicy,
            ) -> aclError;
            /// Like `aclrtMalloc`, for cached device memory (same checks and padding).
            fn aclrtMallocCached(
                devPtr: *mut *mut c_void,
                size: usize,
                policy: aclrtMemMallocPolicy,
            ) -> aclError;
            /// Like `aclrtMalloc` with an optional attribute list (`cfg` may be NULL; its
            /// `attrs` must not be NULL). Size rounded up to 32 bytes, no padding.
            fn aclrtMallocWithCfg(
                devPtr: *mut *mut c_void,
                size: usize,
                policy: aclrtMemMallocPolicy,
                cfg: *mut aclrtMallocConfig,
            ) -> aclError;
            /// Allocates device memory for the task scheduler, with an optional attribute
            /// list (`cfg` may be NULL).
            fn aclrtMallocForTaskScheduler(
                devPtr: *mut *mut c_void,
                size: usize,
                policy: aclrtMemMallocPolicy,
                cfg: *mut aclrtMallocConfig,
            ) -> aclError;
            /// Frees memory from `aclrtMalloc*` at once; does not wait for queued work and
            /// needs no current device.
            fn aclrtFree(devPtr: *mut c_void) -> aclError;
            /// Synchronizes the current device, then frees like `aclrtFree`.
            fn aclrtFreeWithDevSync(devPtr: *mut c_void) -> aclError;
            /// Writes free and total bytes of the current device for memory kind `attr`
            /// (0-17, else `ACL_ERROR_RT_INVALID_MEMORY_TYPE`).
            fn aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError;
            /// Fills up to `inputNum` per-component usage records for `deviceId` and writes
            /// how many were filled to `outputNum`.
            fn aclrtGetMemUsageInfo(
                deviceId: i32,
                memUsageInfo: *mut aclrtMemUsageInfo,
                inputNum: usize,
                outputNum: *mut usize,
            ) -> aclError;
            /// Writes the location and page size of the memory `ptr` refers to.
            fn aclrtPointerGetAttributes(
                ptr: *const c_void,
                attributes: *mut aclrtPtrAttributes,
            ) -> aclError;
            /// Copies `count` bytes synchronously into `dst` of capacity `destMax`; `count`
            /// 0 succeeds at once, `count > destMax` returns `ACL_ERROR_RT_PARAM_INVALID`.
            fn aclrtMemcpy(
                dst: *mut c_void,
                destMax: usize,
                src: *const c_void,
                count: usize,
                kind: aclrtMemcpyKind,
            ) -> aclError;
            /// Queues a copy of `count` bytes on `stream` (NULL: default stream); with
            /// pageable host memory it synchronizes the stream and copies before returning.
            fn aclrtMemcpyAsync(
                dst: *mut c_void,
                destMax: usize,
                src: *const c_void,
                count: usize,
                kind: aclrtMemcpyKind,
                stream: aclrtStream,
            ) -> aclError;
            /// Copies `height` rows of `width` bytes between pitched buffers, synchronously;
            /// width or height 0 succeeds at once.
            fn aclrtMemcpy2d(
                dst: *mut c_void,
                dpitch: usize,
                src: *const c_void,
                spitch: usize,
                width: usize,
                height: usize,
                kind: aclrtMemcpyKind,
            ) -> aclError;
            /// Queues a pitched 2-D copy of `height` rows of `width` bytes on `stream`.
            fn aclrtMemcpy2dAsync(
                dst: *mut c_void,
                dpitch: usize,
                src: *const c_void,
                spitch: usize,
                width: usize,
                height: usize,
                kind: aclrtMemcpyKind,
                stream: aclrtStream,
            ) -> aclError;
            /// Sets `count` bytes at `devPtr` (capacity `maxCount`) to the low 8 bits of
            /// `value`, synchronously; `count` 0 succeeds at once.
            fn aclrtMemset(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize) -> aclError;
            /// Queues a memory set on `stream`; `count > maxCount` returns
            /// `ACL_ERROR_RT_PARAM_INVALID`.
            fn aclrtMemsetAsync(
                devPtr: *mut c_void,
                maxCount: usize,
                value: i32,
                count: usize,
                stream: aclrtStream,
            ) -> aclError;
            /// Sets `N` 32-bit elements at `ptr` (4-byte aligned; `memSize` bytes of
            /// capacity, at least `N * 4`) to `value`, synchronously. Only device memory
            /// and `aclrtMallocHost` memory are accepted; `N` 0, NULL, misalignment, a
            /// short `memSize` or other memory return `ACL_ERROR_INVALID_PARAM`.
            fn aclrtMemsetD32(ptr: *mut c_void, memSize: usize, value: u32, N: usize) -> aclError;
            /// Queues on `stream` a set of `N` 32-bit elements at `ptr` to `value`, with the
            /// checks of `aclrtMemsetD32`; on pinned host memory the set happens during
            /// the call.
            fn aclrtMemsetD32Async(
                ptr: *mut c_void,
                memSize: usize,
                value: u32,
                N: usize,
                stream: aclrtStream,
            ) -> aclError;
            /// Copies `numBatches` ranges synchronously, host to device or device to
            /// host only. `attrs[n]` (the expected locations; `rsv` all 0) applies from
            /// entry `attrsIndexes[n]` up to the next index. Every entry is checked before
            /// a byte moves; on a failure about one entry `*failIndex` is its index,
            /// otherwise `SIZE_MAX`.
            fn aclrtMemcpyBatch(
                dsts: *mut *mut c_void,
                destMaxs: *mut usize,
                srcs: *mut *mut c_void,
                sizes: *mut usize,
                numBatches: usize,
                attrs: *mut aclrtMemcpyBatchAttr,
                attrsIndexes: *mut usize,
                numAttrs: usize,
                failIndex: *mut usize,
            ) -> aclError;
            /// `aclrtMemcpyBatch` without the failing index.
            fn aclrtMemcpyBatchV2(
                dsts: *mut *mut c_void,
                destMaxs: *mut usize,
                srcs: *mut *mut c_void,
                sizes: *mut usize,
                numBatches: usize,
                attrs: *mut aclrtMemcpyBatchAttr,
                attrsIndexes: *mut usize,
                numAttrs: usize,
            ) -> aclError;
            /// Queues the copies of `aclrtMemcpyBatch` on `stream` as one task, after
            /// checking every entry (each size also not 0); with pageable host memory the
            /// stream is synchronised and the copies happen during the call.
            fn aclrtMemcpyBatchAsync(
                dsts: *mut *mut c_void,
                destMaxs: *mut usize,
                srcs: *mut *mut c_void,
                sizes: *mut usize,
                numBatches: usize,
                attrs: *mut aclrtMemcpyBatchAttr,
                attrsIndexes: *mut usize,
                numAttrs: usize,
                failIndex: *mut usize,
                stream: aclrtStream,
            ) -> aclError;
            /// `aclrtMemcpyBatchAsync` without the failing index.
            fn aclrtMemcpyBatchAsyncV2(
                dsts: *mut *mut c_void,
                destMaxs: *mut usize,
                srcs: *mut *mut c_void,
                sizes: *mut usize,
                numBatches: usize,
                attrs: *mut aclrtMemcpyBatchAttr,
                attrsIndexes: *mut usize,
                numAttrs: usize,
                stream: aclrtStream,
            ) -> aclError;
            /// Queues a device-to-device copy through two pointers held in device
            /// memory: `count` bytes from `*src + srcDataOffset` to `*dst + dstDataOffset`,
            /// the pointers read when the copy runs. `kind` must be
            /// `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`; `dstDataOffset + count` at most `destMax`.
            fn aclrtMemcpyAsyncWithOffset(
                dst: *mut *mut c_void,
                destMax: usize,
                dstDataOffset: usize,
                src: *mut *const c_void,
                count: usize,
                srcDataOffset: usize,
                kind: aclrtMemcpyKind,
                stream: aclrtStream,
            ) -> aclError;
            /// The size of a memory-copy descriptor (`ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`
            /// only; other kinds return `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`).
            fn aclrtGetMemcpyDescSize(kind: aclrtMemcpyKind, descSize: *mut usize) -> aclError;
            /// Writes into `desc` (device memory, 64-byte aligned) a device-to-device copy
            /// of `count` bytes from `srcAddr` to `dstAddr`, both on one device. `config` is
            /// reserved: NULL.
            fn aclrtSetMemcpyDesc(
                desc: *mut c_void,
                kind: aclrtMemcpyKind,
                srcAddr: *mut c_void,
                dstAddr: *mut c_void,
                count: usize,
                config: *mut c_void,
            ) -> aclError;
            /// Queues on `stream` (not NULL) the copy the descriptor `desc` holds when the
            /// copy runs.
            fn aclrtMemcpyAsyncWithDesc(desc: *mut c_void, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
            /// `aclrtMemcpyAsync` asking the runtime to check that host memory is
            /// page-locked, which it can always tell here: the same behaviour as
            /// `aclrtMemcpyAsync` (deprecated for it).
            fn aclrtMemcpyAsyncWithCondition(
                dst: *mut c_void,
                destMax: usize,
                src: *const c_void,
                count: usize,
                kind: aclrtMemcpyKind,
                stream: aclrtStream,
            ) -> aclError;
            /// Queues on `stream` a write of `value` to the 64-bit word of device
            /// memory at `devAddr` (8-byte aligned). `flag` is reserved: 0.
            fn aclrtValueWrite(devAddr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError;
            /// Queues on `stream` a wait until the 64-bit word of device memory at
            /// `devAddr` compares with `value` as `flag` (`ACL_STREAM_WAIT_VALUE_*`)
            /// says; later work on `stream` runs after it.
            fn aclrtValueWait(devAddr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError;

            // 3.5 Host memory
            /// Allocates page-locked host memory (at least 64-byte aligned); size must not
            /// be 0. Needs a current device.
            fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) -> aclError;
            /// Like `aclrtMallocHost` with an optional attribute list (`cfg` may be NULL).
            /// Note that `size` is a `u64` here.
            fn aclrtMallocHostWithCfg(
                ptr: *mut *mut c_void,
                size: u64,
                cfg: *mut aclrtMallocConfig,
            ) -> aclError;
            /// Frees memory from `aclrtMallocHost*` without any synchronization; a device
            /// pointer returns `ACL_ERROR_RT_PARAM_INVALID`.
            fn aclrtFreeHost(hostPtr: *mut c_void) -> aclError;
            /// Synchronizes the current device, then frees like `aclrtFreeHost`.
            fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) -> aclError;
            /// Registers `size` bytes of host memory at `ptr` (4 KiB aligned) with the device
            /// and writes its device address; a registered range returns
            /// `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
            fn aclrtHostRegister(
                ptr: *mut c_void,
                size: u64,
                type_: aclrtHostRegisterType,
                devPtr: *mut *mut c_void,
            ) -> aclError;
            /// Registers host memory with `ACL_HOST_REG_*` flag bits (not the
            /// `aclrtHostRegisterType` values); flag 0 or unknown bits return `ACL_ERROR_RT_PARAM_INVALID`.
            fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError;
            /// Writes the device address of registered host memory (exact base only);
            /// `flag` must be 0.
            fn aclrtHostGetDevicePointer(
                pHost: *mut c_void,
                pDevice: *mut *mut c_void,
                flag: u32,
            ) -> aclError;
            /// Writes whether accelerator `hacType` of device `deviceId` can access mapped
            /// host memory.
            fn aclrtHostMemMapCapabilities(
                deviceId: u32,
                hacType: aclrtHacType,
                capabilities: *mut aclrtHostMemMapCapability,
            ) -> aclError;
            /// Unregisters host memory registered by either register call; an unregistered
            /// pointer returns `ACL_ERROR_HOST_MEMORY_NOT_REGISTERED`.
            fn aclrtHostUnregister(ptr: *mut c_void) -> aclError;

            // 3.6 Virtual memory management (VMM)
            /// Allocates `size` bytes of physical memory described by `prop` (handle type
            /// NONE, allocation type PINNED); `flags` must be 0.
            fn aclrtMallocPhysical(
                handle: *mut aclrtDrvMemHandle,
                size: usize,
                prop: *const aclrtPhysicalMemProp,
                flags: u64,
            ) -> aclError;
            /// Releases a physical allocation handle; pages still mapped are freed only when
            /// the last mapping goes. Balance every import and retain with one call.
            fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> aclError;
            /// Reserves `size` bytes of virtual address space; `alignment` must be 0,
            /// `expectPtr` may be NULL, `flags` 0 (or 1, kept for compatibility).
            fn aclrtReserveMemAddress(
                virPtr: *mut *mut c_void,
                size: usize,
                alignment: usize,
                expectPtr: *mut c_void,
                flags: u64,
            ) -> aclError;
            /// Like `aclrtReserveMemAddress` without uncached memory; `expectPtr` must be
            /// given and `size` a multiple of 1 GiB (Atlas A3 only).
            fn aclrtReserveMemAddressNoUCMemory(
                virPtr: *mut *mut c_void,
                size: usize,
                alignment: usize,
                expectPtr: *mut c_void,
                flags: u64,
            ) -> aclError;
            /// Releases a reserved virtual range; unmap every mapping in it first.
            fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> aclError;
            /// Maps the whole physical allocation `handle` at `virPtr`; `size` equals the
            /// physical size, `offset` and `flags` must be 0.
            fn aclrtMapMem(
                virPtr: *mut c_void,
                size: usize,
                offset: usize,
                handle: aclrtDrvMemHandle,
                flags: u64,
            ) -> aclError;
            /// Like `aclrtMapMem` but without access rights; call `aclrtMemSetAccess`
            /// before use.
            fn aclrtMemMapNoAccess(
                virPtr: *mut c_void,
                size: usize,
                offset: usize,
                handle: aclrtDrvMemHandle,
                flags: u64,
            ) -> aclError;
            /// Removes the mapping that starts at `virPtr`.
            fn aclrtUnmapMem(virPtr: *mut c_void) -> aclError;
            /// Writes the allocation granularity (`option`: minimum or recommended) for
            /// physical memory described by `prop`.
            fn aclrtMemGetAllocationGranularity(
                prop: *mut aclrtPhysicalMemProp,
                option: aclrtMemGranularityOptions,
                granularity: *mut usize,
            ) -> aclError;
            /// Sets access rights of `count` locations to a mapped range; `virPtr` and
            /// `size` must equal those given to the map call. Only READWRITE is supported.
            fn aclrtMemSetAccess(
                virPtr: *mut c_void,
                size: usize,
                desc: *mut aclrtMemAccessDesc,
                count: usize,
            ) -> aclError;
            /// Writes the `aclrtMemAccessFlags` value `location` has for the mapping at
            /// `virPtr`.
            fn aclrtMemGetAccess(
                virPtr: *mut c_void,
                location: *mut aclrtMemLocation,
                flag: *mut u64,
            ) -> aclError;
            /// Writes the physical allocation handle mapped at `virPtr` (any address in the
            /// mapping); balance each call with `aclrtFreePhysical`.
            fn aclrtMemRetainAllocationHandle(
                virPtr: *mut c_void,
                handle: *mut aclrtDrvMemHandle,
            ) -> aclError;
            /// Writes the properties of a physical allocation (rebuilt by the runtime, so
            /// `memAttr` may differ from the value allocated with).
            fn aclrtMemGetAllocationPropertiesFromHandle(
                handle: aclrtDrvMemHandle,
                prop: *mut aclrtPhysicalMemProp,
            ) -> aclError;
            /// Writes the base and size of the allocation containing `ptr` (either
            /// out-pointer may be NULL, not both).
            fn aclrtMemGetAddressRange(
                ptr: *mut c_void,
                pbase: *mut *mut c_void,
                psize: *mut usize,
            ) -> aclError;
            /// Maps `virPtrDst` onto `virPtrSrc` over link `linkIdx`
            /// (`ACL_RT_MEM_LINK_IDX_0` or `_1` only; Atlas A3 only).
            fn aclrtMemMapSelectedLink(
                virPtrDst: *mut c_void,
                size: usize,
                virPtrSrc: *mut c_void,
                linkIdx: u32,
            ) -> aclError;
            /// Chooses the link for an imported physical allocation, before it is mapped;
            /// an unsuitable link returns `ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED`.
            fn aclrtMemMapSetLink(handle: aclrtDrvMemHandle, adviceLink: aclrtMemLinkType) -> aclError;

            // 3.7 Physical-memory sharing (shareable handles)
            /// Exports a physical allocation as a `u64` shareable handle (`handleType` must
            /// be NONE; `flags` are `ACL_RT_VMM_EXPORT_FLAG_*`). One export per handle per process.
            fn aclrtMemExportToShareableHandle(
                handle: aclrtDrvMemHandle,
                handleType: aclrtMemHandleType,
                flags: u64,
                shareableHandle: *mut u64,
            ) -> aclError;
            /// Whitelists `pidNum` processes (ids from `aclrtDeviceGetBareTgid`) to import
            /// `shareableHandle`.
            fn aclrtMemSetPidToShareableHandle(
                shareableHandle: u64,
                pid: *mut i32,
                pidNum: usize,
            ) -> aclError;
            /// Imports a shareable handle exported by another process onto `deviceId`.
            fn aclrtMemImportFromShareableHandle(
                shareableHandle: u64,
                deviceId: i32,
                handle: *mut aclrtDrvMemHandle,
            ) -> aclError;
            /// Exports into a caller-owned buffer: one `u64` for DEFAULT, one
            /// `aclrtMemFabricHandle` for FABRIC. Note `flags` comes before `shareType`.
            fn aclrtMemExportToShareableHandleV2(
                handle: aclrtDrvMemHandle,
                flags: u64,
                shareType: aclrtMemSharedHandleType,
                shareableHandle: *mut c_void,
            ) -> aclError;
            /// Whitelists `pidNum` processes to import a V2 shareable handle.
            fn aclrtMemSetPidToShareableHandleV2(
                shareableHandle: *mut c_void,
                shareType: aclrtMemSharedHandleType,
                pid: *mut i32,
                pidNum: usize,
            ) -> aclError;
            /// Imports a V2 shareable handle onto the current device; `flags` must be 0.
            fn aclrtMemImportFromShareableHandleV2(
                shareableHandle: *mut c_void,
                shareType: aclrtMemSharedHandleType,
                flags: u64,
                handle: *mut aclrtDrvMemHandle,
            ) -> aclError;

            // 3.8 IPC memory (key based)
            /// Exports the device allocation starting at `devPtr` under a key written to
            /// `key` (buffer of 65 bytes, `len` 65); `flags` are `ACL_RT_IPC_MEM_EXPORT_FLAG_*`.
            fn aclrtIpcMemGetExportKey(
                devPtr: *mut c_void,
                size: usize,
                key: *mut c_char,
                len: usize,
                flags: u64,
            ) -> aclError;
            /// Imports memory exported under `key` into this process and writes its address;
            /// `flags` are `ACL_RT_IPC_MEM_IMPORT_FLAG_*`.
            fn aclrtIpcMemImportByKey(devPtr: *mut *mut c_void, key: *const c_char, flags: u64) -> aclError;
            /// Closes this process's import of `key`, or destroys the key in the exporter;
            /// importers must close before the exporter.
            fn aclrtIpcMemClose(key: *const c_char) -> aclError;
            /// Whitelists `num` processes to import `key`.
            fn aclrtIpcMemSetImportPid(key: *const c_char, pid: *mut i32, num: usize) -> aclError;
            /// Whitelists processes of other servers to import `key` (Atlas A3 only).
            fn aclrtIpcMemImportPidInterServer(
                key: *const c_char,
                serverPids: *mut aclrtServerPid,
                num: usize,
            ) -> aclError;
            /// Sets attribute `type` of `key` (the access link: an
            /// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_*` value).
            fn aclrtIpcMemSetAttr(key: *const c_char, type_: aclrtIpcMemAttrType, attr: u64) -> aclError;

            // 3.9 Custom allocator
            /// Creates an empty allocator descriptor, or returns NULL.
            fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc;
            /// Destroys an allocator descriptor.
            fn aclrtAllocatorDestroyDesc(allocatorDesc: aclrtAllocatorDesc) -> aclError;
            /// Stores the user allocator object in a descriptor (NULL is rejected).
            fn aclrtAllocatorSetObjToDesc(
                allocatorDesc: aclrtAllocatorDesc,
                allocator: aclrtAllocator,
            ) -> aclError;
            /// Stores the allocation callback in a descriptor (NULL is rejected).
            fn aclrtAllocatorSetAllocFuncToDesc(
                allocatorDesc: aclrtAllocatorDesc,
                func: aclrtAllocatorAllocFunc,
            ) -> aclError;
            /// Stores the free callback in a descriptor (NULL is rejected).
            fn aclrtAllocatorSetFreeFuncToDesc(
                allocatorDesc: aclrtAllocatorDesc,
                func: aclrtAllocatorFreeFunc,
            ) -> aclError;
            /// Stores the advised-allocation callback in a descriptor (NULL is rejected).
            fn aclrtAllocatorSetAllocAdviseFuncToDesc(
                allocatorDesc: aclrtAllocatorDesc,
                func: aclrtAllocatorAllocAdviseFunc,
            ) -> aclError;
            /// Stores the block-to-address callback in a descriptor (NULL is rejected).
            fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
                allocatorDesc: aclrtAllocatorDesc,
                func: aclrtAllocatorGetAddrFromBlockFunc,
            ) -> aclError;
            /// Registers a copy of `allocatorDesc` as `stream`'s allocator (object, alloc,
            /// free and get-address callbacks required); re-registering overwrites.
            fn aclrtAllocatorRegister(stream: aclrtStream, allocatorDesc: aclrtAllocatorDesc) -> aclError;
            /// Writes the allocator registered for `stream`; out-pointers other than
            /// `allocatorDesc` may be NULL. An unregistered stream returns `ACL_ERROR_INVALID_PARAM`.
            fn aclrtAllocatorGetByStream(
                stream: aclrtStream,
                allocatorDesc: *mut aclrtAllocatorDesc,
                allocator: *mut aclrtAllocator,
                allocFunc: *mut aclrtAllocatorAllocFunc,
                freeFunc: *mut aclrtAllocatorFreeFunc,
                allocAdviseFunc: *mut aclrtAllocatorAllocAdviseFunc,
                getAddrFromBlockFunc: *mut aclrtAllocatorGetAddrFromBlockFunc,
            ) -> aclError;
            /// Removes `stream`'s allocator; unknown streams succeed.
            fn aclrtAllocatorUnregister(stream: aclrtStream) -> aclError;

            // 3.12 Cache maintenance and memory checks
            /// Queues on `stream` the cache maintenance operation `cmoType` on `size`
            /// bytes of device memory at `src` (the software device validates, orders
            /// and moves nothing).
            fn aclrtCmoAsync(src: *mut c_void, size: usize, cmoType: aclrtCmoType, stream: aclrtStream) -> aclError;
            /// As `aclrtCmoAsync` with a logical barrier id: > 0 for
            /// `ACL_RT_CMO_TYPE_INVALID`, 0 for the other operations.
            fn aclrtCmoAsyncWithBarrier(
                src: *mut c_void,
                size: usize,
                cmoType: aclrtCmoType,
                barrierId: u32,
                stream: aclrtStream,
            ) -> aclError;
            /// Queues on `stream` a wait for the invalidations carrying the barrier
            /// ids in `taskInfo` (1 to 6 of them); `flag` is reserved.
            fn aclrtCmoWaitBarrier(taskInfo: *mut aclrtBarrierTaskInfo, stream: aclrtStream, flag: u32) -> aclError;
            /// Writes the size in bytes of a cache maintenance descriptor.
            fn aclrtCmoGetDescSize(size: *mut usize) -> aclError;
            /// Writes the range `src`, `size` into the descriptor at `cmoDesc` (device
            /// memory of at least `aclrtCmoGetDescSize` bytes), synchronously.
            fn aclrtCmoSetDesc(cmoDesc: *mut c_void, src: *mut c_void, size: usize) -> aclError;
            /// Queues on `stream` the operation `cmoType` on the range held by the
            /// descriptor at `cmoDesc`; `reserve` must be NULL.
            fn aclrtCmoAsyncWithDesc(
                cmoDesc: *mut c_void,
                cmoType: aclrtCmoType,
                stream: aclrtStream,
                reserve: *const c_void,
            ) -> aclError;
            /// Flushes the cached data of `size` bytes at `devPtr` to memory
            /// (synchronous; a validated no-op on the software device).
            fn aclrtMemFlush(devPtr: *mut c_void, size: usize) -> aclError;
            /// Invalidates the cached data of `size` bytes at `devPtr` (synchronous;
            /// a validated no-op on the software device).
            fn aclrtMemInvalidate(devPtr: *mut c_void, size: usize) -> aclError;
            /// Flushes the current device's L2 cache; `rsv` must be NULL.
            fn aclrtDeviceL2CacheFlush(rsv: *mut c_void) -> aclError;
            /// Writes to `checkResult` 1 when every one of the `size` addresses in
            /// `addrList` is memory of a type in `memType` (`ACL_RT_MEM_TYPE_*` bits),
            /// else 0; `reserve` must be 0.
            fn aclrtCheckMemType(
                addrList: *mut *mut c_void,
                size: u32,
                memType: u32,
                checkResult: *mut u32,
                reserve: u32,
            ) -> aclError;
            /// Maps `size` bytes of device memory at `devPtr` into the page table of
            /// device `dstDevId`; `flags` must be 0.
            fn aclrtMemP2PMap(devPtr: *mut c_void, size: usize, dstDevId: i32, flags: u64) -> aclError;
            /// Writes the ranges of device `deviceId` with uncorrectable errors (at most
            /// `arraySize`) and their number to `retSize`.
            fn aclrtGetMemUceInfo(
                deviceId: i32,
                memUceInfoArray: *mut aclrtMemUceInfo,
                arraySize: usize,
                retSize: *mut usize,
            ) -> aclError;
            /// Repairs the `arraySize` (at most 128) ranges in `memUceInfoArray`,
            /// whose reserved fields must be 0.
            fn aclrtMemUceRepair(deviceId: i32, memUceInfoArray: *mut aclrtMemUceInfo, arraySize: usize) -> aclError;
            // 3.11 Managed memory
            /// Allocates `size` bytes of managed memory (rounded up to 2 MiB), reachable
            /// from the host and every device; `flag` must be `ACL_RT_MEM_ATTACH_GLOBAL`.
            /// Freed with `aclrtFree`.
            fn aclrtMemAllocManaged(ptr: *mut *mut c_void, size: u64, flag: u32) -> aclError;
            /// Sets or clears `advise` for the managed range `[ptr, ptr + size)` at `location`.
            fn aclrtMemManagedAdvise(
                ptr: *const c_void,
                size: u64,
                advise: aclrtMemManagedAdviseType,
                location: aclrtMemManagedLocation,
            ) -> aclError;
            /// Writes one attribute of the managed range `[ptr, ptr + size)` into `data`
            /// (`dataSize` bytes).
            fn aclrtMemManagedGetAttr(
                attribute: aclrtMemManagedRangeAttribute,
                ptr: *const c_void,
                size: usize,
                data: *mut c_void,
                dataSize: usize,
            ) -> aclError;
            /// Writes `numAttributes` attributes of the managed range, each into `data[i]`
            /// (`dataSizes[i]` bytes).
            fn aclrtMemManagedGetAttrs(
                attributes: *mut aclrtMemManagedRangeAttribute,
                numAttributes: usize,
                ptr: *const c_void,
                size: usize,
                data: *mut *mut c_void,
                dataSizes: *mut usize,
            ) -> aclError;
            /// Queues on `stream` a prefetch of the managed range to `location`; `flags`
            /// must be 0.
            fn aclrtMemManagedPrefetchAsync(
                ptr: *const c_void,
                size: usize,
                location: aclrtMemManagedLocation,
                flags: u32,
                stream: aclrtStream,
            ) -> aclError;
            /// Queues on `stream` the prefetch of `count` managed ranges, `prefetchLocs[k]`
            /// applying from range `prefetchLocIdxs[k]` on; `flags` must be 0.
            fn aclrtMemManagedPrefetchBatchAsync(
                ptrs: *mut *const c_void,
                sizes: *mut usize,
                count: usize,
                prefetchLocs: *mut aclrtMemManagedLocation,
                prefetchLocIdxs: *mut usize,
                numPrefetchLocs: usize,
                flags: u64,
                stream: aclrtStream,
            ) -> aclError;
            // 3.10 Stream-ordered memory pools
            /// Creates a stream-ordered memory pool of pinned device memory
            /// (`poolProps->maxSize` rounded up to 2 MiB; 0: the device's memory).
            fn aclrtMemPoolCreate(memPool: *mut aclrtMemPool, poolProps: *const aclrtMemPoolProps) -> aclError;
            /// Destroys a memory pool and releases its memory.
            fn aclrtMemPoolDestroy(memPool: aclrtMemPool) -> aclError;
            /// Sets an attribute of a pool; `value` points to a `u32` (reuse flags) or a
            /// `u64` (release threshold; the high-water marks accept only 0, a reset).
            fn aclrtMemPoolSetAttr(memPool: aclrtMemPool, attr: aclrtMemPoolAttr, value: *mut c_void) -> aclError;
            /// Reads an attribute of a pool into a `u32` (reuse flags) or a `u64`.
            fn aclrtMemPoolGetAttr(memPool: aclrtMemPool, attr: aclrtMemPoolAttr, value: *mut c_void) -> aclError;
            /// Allocates `size` bytes from `memPool`, ordered on `stream`: memory freed
            /// earlier on the same stream may be reused at once, memory freed on another
            /// stream only once that free is known complete. `size` 0 succeeds and writes
            /// nothing.
            fn aclrtMemPoolMallocAsync(
                ptr: *mut *mut c_void,
                size: usize,
                memPool: aclrtMemPool,
                stream: aclrtStream,
            ) -> aclError;
            /// Gives a pool allocation back to its pool at `stream`'s position.
            fn aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> aclError;
            /// Releases idle cached memory of `memPool` until it reserves at most
            /// `minBytesToKeep` bytes.
            fn aclrtMemPoolTrimTo(memPool: aclrtMemPool, minBytesToKeep: usize) -> aclError;
            // 3.13 Mbuf (message buffers)
            /// Allocates an mbuf whose data area has `size` bytes (0 is rejected); its data
            /// length starts at 0, its 96-byte user-data area zeroed.
            fn aclrtAllocBuf(buf: *mut aclrtMbuf, size: usize) -> aclError;
            /// Frees an mbuf header (and the chain it heads), dropping its reference to the
            /// data area; the data area goes with its last reference.
            fn aclrtFreeBuf(buf: aclrtMbuf) -> aclError;
            /// Writes the address and capacity (the size given to `aclrtAllocBuf`) of the data area.
            fn aclrtGetBufData(buf: aclrtMbuf, dataPtr: *mut *mut c_void, size: *mut usize) -> aclError;
            /// Writes the data length set by `aclrtSetBufDataLen`.
            fn aclrtGetBufDataLen(buf: aclrtMbuf, len: *mut usize) -> aclError;
            /// Sets the data length (at most the capacity).
            fn aclrtSetBufDataLen(buf: aclrtMbuf, len: usize) -> aclError;
            /// Copies `size` bytes at `offset` of the user-data area into `dataPtr`
            /// (`size + offset` at most 96).
            fn aclrtGetBufUserData(buf: aclrtMbuf, dataPtr: *mut c_void, size: usize, offset: usize) -> aclError;
            /// Copies `size` bytes from `dataPtr` into the user-data area at `offset`
            /// (`size + offset` at most 96).
            fn aclrtSetBufUserData(buf: aclrtMbuf, dataPtr: *const c_void, size: usize, offset: usize) -> aclError;
            /// Creates a new mbuf header sharing `buf`'s data area (one more reference).
            fn aclrtCopyBufRef(buf: aclrtMbuf, newBuf: *mut aclrtMbuf) -> aclError;
            /// Appends `buf` (with its own chain) at the end of the chain `headBuf` heads.
            fn aclrtAppendBufChain(headBuf: aclrtMbuf, buf: aclrtMbuf) -> aclError;
            /// Writes the number of mbufs in the chain `headBuf` heads (the head included).
            fn aclrtGetBufChainNum(headBuf: aclrtMbuf, num: *mut u32) -> aclError;
            /// Writes the mbuf at `index` of the chain `headBuf` heads (0 is the head).
            fn aclrtGetBufFromChain(headBuf: aclrtMbuf, index: u32, buf: *mut aclrtMbuf) -> aclError;

            // 3.14 Stream callbacks and host functions (issue 41, part 1)
            /// Makes thread `threadId` (its `pthread_t`) run the callbacks of `stream`; a
            /// stream already subscribed returns `ACL_ERROR_RT_STREAM_SUBSCRIBE`.
            fn aclrtSubscribeReport(threadId: u64, stream: aclrtStream) -> aclError;
            /// Queues `fn_(userData)` on `stream` for its subscribed thread; `ACL_CALLBACK_BLOCK`
            /// holds back the work queued after it until it returns.
            fn aclrtLaunchCallback(
                fn_: aclrtCallback,
                userData: *mut c_void,
                blockType: aclrtCallbackBlockType,
                stream: aclrtStream,
            ) -> aclError;
            /// Waits up to `timeout` ms (-1: no limit) for callbacks for the calling thread
            /// and runs them on it.
            fn aclrtProcessReport(timeout: i32) -> aclError;
            /// Ends the subscription of `threadId` to the callbacks of `stream`.
            fn aclrtUnSubscribeReport(threadId: u64, stream: aclrtStream) -> aclError;
            /// Queues the host function `fn_(args)` on `stream`; the work after it waits for it.
            fn aclrtLaunchHostFunc(stream: aclrtStream, fn_: aclrtHostFunc, args: *mut c_void) -> aclError;
            /// Makes thread `hostFuncThreadId` run the host functions of `exeStream`.
            fn aclrtSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) -> aclError;
            /// Waits up to `timeout` ms (-1: no limit) for host functions for the calling
            /// thread and runs them on it.
            fn aclrtProcessHostFunc(timeout: i32) -> aclError;
            /// Ends the subscription of `hostFuncThreadId` to the host functions of `exeStream`.
            fn aclrtUnSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) -> aclError;
            /// Registers the stream state callback `regName` (a NULL `callback` removes it).
            fn aclrtRegStreamStateCallback(
                regName: *const c_char,
                callback: aclrtStreamStateCallback,
                args: *mut c_void,
            ) -> aclError;
            /// Registers the device state callback `regName` (a NULL `callback` removes it).
            fn aclrtRegDeviceStateCallback(
                regName: *const c_char,
                callback: aclrtDeviceStateCallback,
                args: *mut c_void,
            ) -> aclError;
            // end of 3.14
            // ---- 3.15 Notifies (kept in one block) ----
            /// Creates a notify on the current device (`flag`: `ACL_NOTIFY_DEFAULT` or
            /// `ACL_NOTIFY_DEVICE_USE_ONLY`).
            fn aclrtCreateNotify(notify: *mut aclrtNotify, flag: u64) -> aclError;
            /// Destroys a notify (created or imported).
            fn aclrtDestroyNotify(notify: aclrtNotify) -> aclError;
            /// Queues on `stream` (NULL: the default stream) a task that sets the notify.
            fn aclrtRecordNotify(notify: aclrtNotify, stream: aclrtStream) -> aclError;
            /// Queues on `stream` a wait until the notify is set, which then resets it
            /// (`timeout` in seconds; 0 no limit).
            fn aclrtWaitAndResetNotify(notify: aclrtNotify, stream: aclrtStream, timeout: u32) -> aclError;
            /// Writes the notify's id.
            fn aclrtGetNotifyId(notify: aclrtNotify, notifyId: *mut u32) -> aclError;
            /// Resets `num` notifies from the host, in order, stopping at the first failure.
            fn aclrtNotifyBatchReset(notifies: *mut aclrtNotify, num: usize) -> aclError;
            /// Makes the notify an IPC notify and writes its key (`len` at least 65).
            fn aclrtNotifyGetExportKey(notify: aclrtNotify, key: *mut c_char, len: usize, flags: u64) -> aclError;
            /// Adds `num` process ids to the whitelist of an exported notify.
            fn aclrtNotifySetImportPid(notify: aclrtNotify, pid: *mut i32, num: usize) -> aclError;
            /// Adds processes of other servers to the whitelist of an exported notify.
            fn aclrtNotifySetImportPidInterServer(
                notify: aclrtNotify,
                serverPids: *mut aclrtServerPid,
                num: usize,
            ) -> aclError;
            /// Opens a notify another process exported, by its key.
            fn aclrtNotifyImportByKey(notify: *mut aclrtNotify, key: *const c_char, flags: u64) -> aclError;
            /// Creates a count notify on the current device (`flag` reserved, 0).
            fn aclrtCntNotifyCreate(cntNotify: *mut aclrtCntNotify, flag: u64) -> aclError;
            /// Destroys a count notify.
            fn aclrtCntNotifyDestroy(cntNotify: aclrtCntNotify) -> aclError;
            /// Queues on `stream` a task that changes the counter as `info` says.
            fn aclrtCntNotifyRecord(
                cntNotify: aclrtCntNotify,
                stream: aclrtStream,
                info: *mut aclrtCntNotifyRecordInfo,
            ) -> aclError;
            /// Queues on `stream` a wait until the counter meets the condition of `info`.
            fn aclrtCntNotifyWaitWithTimeout(
                cntNotify: aclrtCntNotify,
                stream: aclrtStream,
                info: *mut aclrtCntNotifyWaitInfo,
            ) -> aclError;
            /// Queues on `stream` a task that clears the counter to 0.
            fn aclrtCntNotifyReset(cntNotify: aclrtCntNotify, stream: aclrtStream) -> aclError;
            /// Writes the count notify's id.
            fn aclrtCntNotifyGetId(cntNotify: aclrtCntNotify, notifyId: *mut u32) -> aclError;
            // ---- end of notifies ----
            // 3.16 Device queries, event flags, stream abort and stop (issue 41 part 3)
            /// Writes attribute `attr` (`ACL_DEV_ATTR_*`) of device `deviceId`.
            fn aclrtGetDeviceInfo(deviceId: u32, attr: aclrtDevAttr, value: *mut i64) -> aclError;
            /// Writes the lowest (numerically largest) and the highest stream priority.
            fn aclrtDeviceGetStreamPriorityRange(leastPriority: *mut i32, greatestPriority: *mut i32) -> aclError;
            /// Writes the process's limit of cores of a kind (`ACL_RT_DEV_RES_*`) on `deviceId`.
            fn aclrtGetDeviceResLimit(deviceId: i32, type_: aclrtDevResLimitType, value: *mut u32) -> aclError;
            /// Limits the cores of a kind the process's later work may use on `deviceId`.
            fn aclrtSetDeviceResLimit(deviceId: i32, type_: aclrtDevResLimitType, value: u32) -> aclError;
            /// Removes the process's core limits on `deviceId`.
            fn aclrtResetDeviceResLimit(deviceId: i32) -> aclError;
            /// Writes whether device `deviceId` is usable (`ACL_RT_DEVICE_STATUS_*`).
            fn aclrtQueryDeviceStatus(deviceId: i32, deviceStatus: *mut aclrtDeviceStatus) -> aclError;
            /// Writes the utilization (percent) of device `deviceId`'s units;
            /// `utilizationInfo->utilizationExtend` must be NULL.
            fn aclrtGetDeviceUtilizationRate(deviceId: i32, utilizationInfo: *mut aclrtUtilizationInfo) -> aclError;
            /// Records `event` on `stream`; `flag` is `ACL_EVENT_RECORD_DEFAULT` (as
            /// `aclrtRecordEvent`) or `ACL_EVENT_RECORD_EXTERNAL` (graph capture only).
            fn aclrtRecordEventWithFlag(event: aclrtEvent, stream: aclrtStream, flag: u32) -> aclError;
            /// Makes `stream` wait for `event` (timeout in seconds, 0: none); `flag` is
            /// `ACL_EVENT_WAIT_DEFAULT` or `ACL_EVENT_WAIT_EXTERNAL` (graph capture only).
            fn aclrtStreamWaitEventWithFlag(
                stream: aclrtStream,
                event: aclrtEvent,
                timeout: u32,
                flag: u32,
            ) -> aclError;
            /// Writes the id of `event`.
            fn aclrtGetEventId(event: aclrtEvent, eventId: *mut u32) -> aclError;
            /// Writes how many more events the current device can create.
            fn aclrtGetEventAvailNum(eventCount: *mut u32) -> aclError;
            /// Drops the tasks queued on `stream` (they never run) and stops the one it
            /// runs; `stream` must not be NULL.
            fn aclrtStreamAbort(stream: aclrtStream) -> aclError;
            /// Stops the tasks `stream` is running without dropping its queue (they may
            /// run later); only for `ACL_STREAM_DEVICE_USE_ONLY` streams, not NULL.
            fn aclrtStreamStop(stream: aclrtStream) -> aclError;
        }
    };
}

crate::for_each_acl_function!(acl_functions);
