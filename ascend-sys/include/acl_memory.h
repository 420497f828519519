/**
 * acl_memory.h - the subset of the AscendCL (CANN) runtime C API that ascend-rs binds:
 * initialisation, devices and peers, streams and events, device memory and copies,
 * host memory, virtual memory management (VMM), shareable handles, key-based IPC memory
 * and the custom allocator, with every type, flag and error code those calls use.
 *
 * Written for this project from the fact tables in the project's reference/acl-abi.md
 * (names, values, signatures and layouts of hicann/runtime master 681ef761), plus three
 * functions that table lacks (aclrtDestroyStreamForce, aclrtValueWrite, aclrtValueWait) and the
 * ACL_STREAM_WAIT_VALUE_* values, restated from that commit's acl_rt.h and API reference
 * (docs/zh/api_ref/06, 11-09); it is not a copy of the Huawei headers. It corresponds to ACL interface version 1.17.0 (CANN 9.x).
 *
 * Constants are typed `static const` objects rather than macros so that generated
 * bindings carry the C type of each value. Only <stddef.h> and <stdint.h> are needed.
 * src/bindings.rs is generated from this file by scripts/regen-bindings.sh.
 */
#ifndef ASCEND_RS_ACL_MEMORY_H
#define ASCEND_RS_ACL_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* Scalar and handle types                                                  */
/* ======================================================================== */

/** Status code returned by AscendCL calls; 0 (`ACL_SUCCESS`) means success. */
typedef int aclError;

/** Opaque handle of a stream (an in-order queue of device work); NULL means the default stream. */
typedef void *aclrtStream;

/** Opaque handle of an event recorded on a stream. */
typedef void *aclrtEvent;

/** Opaque handle of a device context. */
typedef void *aclrtContext;

/** Opaque handle of a physical memory allocation (virtual memory management). */
typedef void *aclrtDrvMemHandle;

/** Opaque custom-allocator descriptor, created by `aclrtAllocatorCreateDesc`. */
typedef void *aclrtAllocatorDesc;

/** Opaque user allocator object handed back to the allocator callbacks. */
typedef void *aclrtAllocator;

/** Opaque handle of a memory block produced by a user allocator. */
typedef void *aclrtAllocatorBlock;

/** Address hint passed to a user allocator's advise callback. */
typedef void *aclrtAllocatorAddr;

/** A message buffer (mbuf): a header with a data area, a user-data area and a chain link. */
typedef void *aclrtMbuf;

/** Opaque runtime exception record, only ever used through a pointer. */
struct rtExceptionInfo;

/** Runtime exception information (incomplete type, used by pointer only). */
typedef struct rtExceptionInfo aclrtExceptionInfo;

/* ======================================================================== */
/* Function-pointer types                                                   */
/* ======================================================================== */

/** User allocator callback: allocate a block of `size` bytes; returns the block handle or NULL. */
typedef void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);

/** User allocator callback: release a block previously returned by the allocator. */
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);

/** User allocator callback: allocate `size` bytes, preferably at address hint `addr`; returns a block or NULL. */
typedef void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size, aclrtAllocatorAddr addr);

/** User allocator callback: return the device address of a block. */
typedef void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

/** Stream callback receiving the user data pointer it was registered with. */
typedef void (*aclrtCallback)(void *userData);

/** Host function launched on a stream, receiving its argument pointer. */
typedef void (*aclrtHostFunc)(void *args);

/** Callback invoked with runtime exception information. */
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo *exceptionInfo);

/* ======================================================================== */
/* Enumerations                                                             */
/* ======================================================================== */

/** Direction of a memory copy. */
typedef enum {
    /** Host to host. */
    ACL_MEMCPY_HOST_TO_HOST = 0,
    /** Host to device. */
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    /** Device to host. */
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    /** Device to device, within one device or between devices. */
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    /** Direction inferred by the runtime from the two addresses. */
    ACL_MEMCPY_DEFAULT = 4,
    /** Host to device, with the host data staged in a runtime buffer first. */
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
    /** Device to device within one device. */
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    /** Device to device between two devices. */
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7
} aclrtMemcpyKind;

/** Page policy (plus optional hint bits) of a device allocation. */
typedef enum {
    /** Prefer huge pages, fall back to normal pages. */
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    /** Huge pages only. */
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    /** Normal pages only. */
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    /** Prefer huge pages, fall back to normal pages; memory usable for peer-to-peer access. */
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    /** Huge pages only; memory usable for peer-to-peer access. */
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    /** Normal pages only; memory usable for peer-to-peer access. */
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    /** 1 GiB pages only. */
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    /** 1 GiB pages only; memory usable for peer-to-peer access. */
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    /** Low-bandwidth memory hint bit (documented to have no effect). */
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x100,
    /** High-bandwidth memory hint bit (documented to have no effect). */
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    /** Memory is read-only from user space. */
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

/** Memory kind and page type, used by memory queries and physical allocations. */
typedef enum {
    /** DDR memory, all page sizes. */
    ACL_DDR_MEM = 0,
    /** HBM memory, all page sizes. */
    ACL_HBM_MEM = 1,
    /** DDR memory, huge pages. */
    ACL_DDR_MEM_HUGE = 2,
    /** DDR memory, normal pages. */
    ACL_DDR_MEM_NORMAL = 3,
    /** HBM memory, huge pages. */
    ACL_HBM_MEM_HUGE = 4,
    /** HBM memory, normal pages. */
    ACL_HBM_MEM_NORMAL = 5,
    /** Peer-to-peer DDR memory, huge pages. */
    ACL_DDR_MEM_P2P_HUGE = 6,
    /** Peer-to-peer DDR memory, normal pages. */
    ACL_DDR_MEM_P2P_NORMAL = 7,
    /** Peer-to-peer HBM memory, huge pages. */
    ACL_HBM_MEM_P2P_HUGE = 8,
    /** Peer-to-peer HBM memory, normal pages. */
    ACL_HBM_MEM_P2P_NORMAL = 9,
    /** HBM memory, 1 GiB pages. */
    ACL_HBM_MEM_HUGE1G = 10,
    /** Peer-to-peer HBM memory, 1 GiB pages. */
    ACL_HBM_MEM_P2P_HUGE1G = 11,
    /** Normal pages; the runtime picks DDR or HBM from the location. */
    ACL_MEM_NORMAL = 12,
    /** Huge pages; the runtime picks DDR or HBM from the location. */
    ACL_MEM_HUGE = 13,
    /** 1 GiB pages; the runtime picks DDR or HBM from the location. */
    ACL_MEM_HUGE1G = 14,
    /** Peer-to-peer memory, normal pages; the runtime picks DDR or HBM. */
    ACL_MEM_P2P_NORMAL = 15,
    /** Peer-to-peer memory, huge pages; the runtime picks DDR or HBM. */
    ACL_MEM_P2P_HUGE = 16,
    /** Peer-to-peer memory, 1 GiB pages; the runtime picks DDR or HBM. */
    ACL_MEM_P2P_HUGE1G = 17
} aclrtMemAttr;

/** Kind of place a memory location refers to. */
typedef enum {
    /** Host memory. */
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    /** Device memory; the location id is a device id. */
    ACL_MEM_LOCATION_TYPE_DEVICE = 1,
    /** Memory not allocated through AscendCL. */
    ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2,
    /** Unified (managed) memory. */
    ACL_MEM_LOCATION_TYPE_MANAGED = 3,
    /** Host memory on a given NUMA node; the location id is the NUMA id. */
    ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4
} aclrtMemLocationType;

/** Advice for a range of managed memory (`aclrtMemManagedAdvise`). */
typedef enum {
    /** The range is mostly read: devices may keep read-only copies. */
    ACL_MEM_ADVISE_SET_READ_MOSTLY = 0,
    /** Undoes `ACL_MEM_ADVISE_SET_READ_MOSTLY`. */
    ACL_MEM_ADVISE_UNSET_READ_MOSTLY = 1,
    /** Sets the location the range's pages should preferably live in. */
    ACL_MEM_ADVISE_SET_PREFERRED_LOCATION = 2,
    /** Clears the preferred location. */
    ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 3,
    /** The location will access the range: keep it mapped there. */
    ACL_MEM_ADVISE_SET_ACCESSED_BY = 4,
    /** Undoes `ACL_MEM_ADVISE_SET_ACCESSED_BY` for the location. */
    ACL_MEM_ADVISE_UNSET_ACCESSED_BY = 5
} aclrtMemManagedAdviseType;

/** Attribute of a range of managed memory (`aclrtMemManagedGetAttr(s)`). */
typedef enum {
    /** Whether the whole range is read-mostly (int32_t, 1 or 0). */
    ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
    /** The preferred location as a device id, -1 for the host, -2 for none (int32_t). */
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
    /** The devices set accessed-by (int32_t array, -1 the host, -2 padding). */
    ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
    /** The preferred location's type (int32_t `aclrtMemManagedLocationType`). */
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 4,
    /** The preferred location's id (int32_t). */
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 5,
    /** The last prefetch location as a device id, -1 for the host, -2 for none (int32_t). */
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 6,
    /** The last prefetch location's type (int32_t `aclrtMemManagedLocationType`). */
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
    /** The last prefetch location's id (int32_t). */
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8
} aclrtMemManagedRangeAttribute;

/** Allocation type of physical memory. */
typedef enum {
    /** Pinned (non-migratable) memory; the only value. */
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0
} aclrtMemAllocationType;

/** Handle type requested for a physical allocation. */
typedef enum {
    /** No OS handle; the value required by `aclrtMallocPhysical` and `aclrtMemExportToShareableHandle`. */
    ACL_MEM_HANDLE_TYPE_NONE = 0,
    /** POSIX file-descriptor handle. */
    ACL_MEM_HANDLE_TYPE_POSIX = 2
} aclrtMemHandleType;

/** Kind of shareable handle produced by the V2 export functions. */
typedef enum {
    /** Sharing within one server; the handle is one `uint64_t`. */
    ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 1,
    /** Sharing across servers; the handle is an `aclrtMemFabricHandle`. */
    ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 2
} aclrtMemSharedHandleType;

/** Which allocation granularity to query. */
typedef enum {
    /** Minimum granularity. */
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    /** Recommended granularity. */
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
    /** Undefined option. */
    ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF
} aclrtMemGranularityOptions;

/** Access protection of a mapped virtual range for one location. */
typedef enum {
    /** No access. */
    ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
    /** Read access. */
    ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
    /** Read and write access. */
    ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3
} aclrtMemAccessFlags;

/** Registration type for `aclrtHostRegister` (not the `ACL_HOST_REG_*` flags of the V2 call). */
typedef enum {
    /** Map the host memory into the device address space. */
    ACL_HOST_REGISTER_MAPPED = 0,
    /** Register as I/O memory (reserved). */
    ACL_HOST_REGISTER_IOMEMORY = 0x04,
    /** Register as read-only memory (reserved). */
    ACL_HOST_REGISTER_READONLY = 0x08
} aclrtHostRegisterType;

/** Hardware accelerator kind asked about by `aclrtHostMemMapCapabilities`. */
typedef enum {
    /** STARS task scheduler. */
    ACL_RT_HAC_TYPE_STARS = 0,
    /** AI CPU. */
    ACL_RT_HAC_TYPE_AICPU = 1,
    /** AI Core (cube). */
    ACL_RT_HAC_TYPE_AIC = 2,
    /** AI Vector core. */
    ACL_RT_HAC_TYPE_AIV = 3,
    /** PCIe DMA engine. */
    ACL_RT_HAC_TYPE_PCIEDMA = 4,
    /** RDMA engine. */
    ACL_RT_HAC_TYPE_RDMA = 5,
    /** System DMA engine. */
    ACL_RT_HAC_TYPE_SDMA = 6,
    /** Digital vision pre-processing unit. */
    ACL_RT_HAC_TYPE_DVPP = 7,
    /** UB DMA engine. */
    ACL_RT_HAC_TYPE_UDMA = 8,
    /** Collective communication unit. */
    ACL_RT_HAC_TYPE_CCU = 9
} aclrtHacType;

/** Whether an accelerator can access mapped host memory. */
typedef enum {
    /** Host memory mapping not supported. */
    ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,
    /** Host memory mapping supported. */
    ACL_RT_HOST_MEM_MAP_SUPPORTED = 1
} aclrtHostMemMapCapability;

/** Link to use for an imported physical allocation (`aclrtMemMapSetLink`). */
typedef enum {
    /** SIO link (Atlas A3). */
    ACL_RT_MEM_ACCESS_LINK_SIO = 0,
    /** HCCS link (Atlas A3). */
    ACL_RT_MEM_ACCESS_LINK_HCCS = 1,
    /** UB single-port path (Ascend 950). */
    ACL_RT_MEM_ACCESS_UB_ONE_PORT_PATH = 2,
    /** UB multi-port path (Ascend 950). */
    ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH = 3
} aclrtMemLinkType;

/** Kind of an attribute inside an `aclrtMallocConfig`. */
typedef enum {
    /** Reserved; uses the `rsv` member. */
    ACL_RT_MEM_ATTR_RSV = 0,
    /** Module id; uses the `moduleId` member. */
    ACL_RT_MEM_ATTR_MODULE_ID = 1,
    /** Device id (must be the current device); uses the `deviceId` member. */
    ACL_RT_MEM_ATTR_DEVICE_ID = 2,
    /** Same virtual address on host and device (host allocations only); uses the `vaFlag` member. */
    ACL_RT_MEM_ATTR_VA_FLAG = 3
} aclrtMallocAttrType;

/** Attribute kind set by `aclrtIpcMemSetAttr`. */
typedef enum {
    /** Access link; the value is one of `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_*`. */
    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK = 0
} aclrtIpcMemAttrType;

/** Where the calling program runs relative to the device. */
typedef enum {
    /** On the device. */
    ACL_DEVICE = 0,
    /** On the host. */
    ACL_HOST = 1
} aclrtRunMode;

/** Scope of the error reported by the last-error functions. */
typedef enum {
    /** The calling thread. */
    ACL_RT_THREAD_LEVEL = 0
} aclrtLastErrLevel;

/** Whether the work before an event's record point has completed. */
typedef enum {
    /** Not completed yet. */
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    /** Completed. */
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/** Status of an event. */
typedef enum {
    /** The event has completed. */
    ACL_EVENT_STATUS_COMPLETE = 0,
    /** The event has not completed. */
    ACL_EVENT_STATUS_NOT_READY = 1,
    /** Reserved value. */
    ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;

/** Whether every stream wait queued on an event has passed (hicann/runtime acl_rt.h). */
typedef enum {
    /** No stream wait for the event is outstanding. */
    ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
    /** A stream wait for the event has not passed yet. */
    ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
    /** Reserved value. */
    ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF
} aclrtEventWaitStatus;

/** A kind of device resource whose limit a thread can read (hicann/runtime acl_rt.h). */
typedef enum {
    /** Cube (AI) cores. */
    ACL_RT_DEV_RES_CUBE_CORE = 0,
    /** Vector cores. */
    ACL_RT_DEV_RES_VECTOR_CORE
} aclrtDevResLimitType;

/** Status of a stream. */
typedef enum {
    /** All work on the stream has completed. */
    ACL_STREAM_STATUS_COMPLETE = 0,
    /** Work on the stream is pending. */
    ACL_STREAM_STATUS_NOT_READY = 1,
    /** Reserved value. */
    ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

/** Location kind for unified (managed) memory. */
typedef enum {
    /** Invalid location. */
    ACL_MEM_LOCATIONTYPE_INVALID = 0,
    /** A device. */
    ACL_MEM_LOCATIONTYPE_DEVICE = 1,
    /** The host. */
    ACL_MEM_LOCATIONTYPE_HOST = 2,
    /** A host NUMA node. */
    ACL_MEM_LOCATIONTYPE_HOST_NUMA = 3,
    /** The host NUMA node of the calling thread. */
    ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT = 4
} aclrtMemManagedLocationType;

/** Page type of memory (a plain, untypedef'd enum in the original headers). */
typedef enum {
    /** Normal pages. */
    NORMAL_PAGE_TYPE = 0,
    /** Huge (2 MiB) pages. */
    HUGE_PAGE_TYPE = 1,
    /** 1 GiB pages. */
    HUGE1G_PAGE_TYPE = 2
} aclrtMemPgType;

/** Physical memory kind (a plain, untypedef'd enum in the original headers). */
typedef enum {
    /** HBM. */
    HBM_TYPE = 0,
    /** DDR. */
    DDR_TYPE = 1,
    /** Peer-to-peer HBM. */
    P2P_HBM_TYPE = 2,
    /** Peer-to-peer DDR. */
    P2P_DDR_TYPE = 3
} aclrtMemType;

/* ======================================================================== */
/* Structures and unions                                                    */
/* ======================================================================== */

/** A memory location: a device, the host or a host NUMA node. */
typedef struct {
    /** Device id or NUMA node id, depending on `type`. */
    uint32_t id;
    /** Kind of location. */
    aclrtMemLocationType type;
} aclrtMemLocation;

/** A managed-memory location: a device, the host or a host NUMA node. */
typedef struct {
    /** Kind of location. */
    aclrtMemManagedLocationType type;
    /** Device id or NUMA node id, depending on `type`. */
    int32_t id;
} aclrtMemManagedLocation;
/**
 * Where the destination and the source of a batch copy live
 * (`aclrtMemcpyBatch*`); `rsv` must be all 0.
 */
typedef struct {
    /** Location of the destinations this attribute applies to. */
    aclrtMemLocation dstLoc;
    /** Location of the sources this attribute applies to. */
    aclrtMemLocation srcLoc;
    /** Reserved: all 0. */
    uint8_t rsv[16];
} aclrtMemcpyBatchAttr;

/** Properties of a physical allocation (`aclrtMallocPhysical`, granularity queries). */
typedef struct {
    /** Handle type; must be `ACL_MEM_HANDLE_TYPE_NONE` for `aclrtMallocPhysical`. */
    aclrtMemHandleType handleType;
    /** Allocation type; must be `ACL_MEM_ALLOCATION_TYPE_PINNED`. */
    aclrtMemAllocationType allocationType;
    /** Memory kind and page type. */
    aclrtMemAttr memAttr;
    /** Where the memory lives. */
    aclrtMemLocation location;
    /** Reserved; set to 0. */
    uint64_t reserve;
} aclrtPhysicalMemProp;

/** Access rights of one location to a mapped virtual range (`aclrtMemSetAccess`). */
typedef struct {
    /** Access protection. */
    aclrtMemAccessFlags flags;
    /** Location the rights apply to. */
    aclrtMemLocation location;
    /** Reserved; must be zero. */
    uint8_t rsv[12];
} aclrtMemAccessDesc;

/** Cross-server shareable handle (`ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`). */
typedef struct {
    /** Opaque handle bytes. */
    uint8_t data[128];
} aclrtMemFabricHandle;

/** Value of one allocation attribute; the member used depends on the attribute kind. */
typedef union {
    /** Module id (`ACL_RT_MEM_ATTR_MODULE_ID`). */
    uint16_t moduleId;
    /** Device id (`ACL_RT_MEM_ATTR_DEVICE_ID`). */
    uint32_t deviceId;
    /** Same-address flag, 0 or 1 (`ACL_RT_MEM_ATTR_VA_FLAG`). */
    uint32_t vaFlag;
    /** Reserved bytes (`ACL_RT_MEM_ATTR_RSV`). */
    uint8_t rsv[8];
} aclrtMallocAttrValue;

/** One allocation attribute: a kind and its value. */
typedef struct {
    /** Attribute kind. */
    aclrtMallocAttrType attr;
    /** Attribute value. */
    aclrtMallocAttrValue value;
} aclrtMallocAttribute;

/** Optional configuration of an allocation: an array of attributes. */
typedef struct {
    /** Array of `numAttrs` attributes; must be non-NULL when `numAttrs` is not 0. */
    aclrtMallocAttribute *attrs;
    /** Number of entries in `attrs`. */
    size_t numAttrs;
} aclrtMallocConfig;

/** Processes of one server allowed to import an IPC key (`aclrtIpcMemImportPidInterServer`). */
typedef struct {
    /** Super-device id of the server. */
    uint32_t sdid;
    /** Array of `num` process ids. */
    int32_t *pid;
    /** Number of entries in `pid`. */
    size_t num;
} aclrtServerPid;

/** Attributes of a pointer, filled by `aclrtPointerGetAttributes`. */
typedef struct {
    /** Where the memory lives. */
    aclrtMemLocation location;
    /** Page size backing the memory. */
    uint32_t pageSize;
    /** Reserved. */
    uint32_t rsv[4];
} aclrtPtrAttributes;

/** Memory usage of one component, filled by `aclrtGetMemUsageInfo`. */
typedef struct {
    /** NUL-terminated component name. */
    char name[32];
    /** Current memory size in bytes. */
    uint64_t curMemSize;
    /** Peak memory size in bytes. */
    uint64_t memPeakSize;
    /** Reserved. */
    size_t reserved[8];
} aclrtMemUsageInfo;

/** A 16-byte universally unique identifier. */
typedef struct {
    /** Identifier bytes. */
    char bytes[16];
} aclrtUuid;

/** Kind of a device fault (`aclrtErrorInfo::errorType`) (hicann/runtime acl_rt.h). */
typedef enum {
    /** No fault. */
    ACL_RT_NO_ERROR = 0,
    /** A memory fault (uncorrectable ECC error). */
    ACL_RT_ERROR_MEMORY = 1,
    /** An L2 cache fault. */
    ACL_RT_ERROR_L2 = 2,
    /** An AI core fault. */
    ACL_RT_ERROR_AICORE = 3,
    /** A link fault. */
    ACL_RT_ERROR_LINK = 4,
    /** An L3 port fault. */
    ACL_RT_ERROR_L3_PORT = 5,
    /** Another fault. */
    ACL_RT_ERROR_OTHERS = 0xFFFF
} aclrtErrorType;

/** Kind of an AI core fault (hicann/runtime acl_rt.h). */
typedef enum aclrtAicoreErrorType {
    /** Unknown. */
    ACL_RT_AICORE_ERROR_UNKNOWN,
    /** A software fault. */
    ACL_RT_AICORE_ERROR_SW,
    /** A local hardware fault. */
    ACL_RT_AICORE_ERROR_HW_LOCAL
} aclrtAicoreErrorType;

/** One memory range with an uncorrectable error (hicann/runtime acl_rt.h). */
typedef struct aclrtMemUceInfo {
    /** Start of the range. */
    void *addr;
    /** Length in bytes. */
    size_t len;
    /** Reserved (`UCE_INFO_RESERVED_SIZE` of them). */
    size_t reserved[14];
} aclrtMemUceInfo;

/** The memory ranges of a memory fault (hicann/runtime acl_rt.h). */
typedef struct {
    /** How many entries of `memUceInfoArray` are used. */
    size_t arraySize;
    /** The ranges (`ACL_RT_MEM_UCE_INFO_MAX_NUM` of them). */
    aclrtMemUceInfo memUceInfoArray[20];
} aclrtMemUceInfoArray;

/** Details of a device fault, by `aclrtErrorInfo::errorType` (hicann/runtime acl_rt.h). */
typedef union aclrtErrorInfoDetail {
    /** `ACL_RT_ERROR_MEMORY`: the ranges. */
    aclrtMemUceInfoArray uceInfo;
    /** `ACL_RT_ERROR_AICORE`: the kind. */
    aclrtAicoreErrorType aicoreErrType;
} aclrtErrorInfoDetail;

/** A device's fault, as `aclrtGetErrorVerbose` reports it (hicann/runtime acl_rt.h). */
typedef struct aclrtErrorInfo {
    /** 1 when `aclrtRepairError` may repair the fault. */
    uint8_t tryRepair;
    /** 1 when `detail` is filled in. */
    uint8_t hasDetail;
    /** Reserved. */
    uint8_t reserved[2];
    /** The kind of fault. */
    aclrtErrorType errorType;
    /** Details, by `errorType`. */
    aclrtErrorInfoDetail detail;
} aclrtErrorInfo;

/** Handle of an event shared between processes. */
typedef struct {
    /** Opaque handle bytes (`ACL_IPC_EVENT_HANDLE_SIZE` of them). */
    char reserved[64];
} aclrtIpcEventHandle;

/** Cache maintenance operation of `aclrtCmoAsync` and related calls. */
typedef enum aclrtCmoType {
    /** Prefetch the range into the cache. */
    ACL_RT_CMO_TYPE_PREFETCH = 0,
    /** Write dirty lines of the range back to memory (they stay cached). */
    ACL_RT_CMO_TYPE_WRITEBACK,
    /** Drop the range's lines from the cache without writing them back. */
    ACL_RT_CMO_TYPE_INVALID,
    /** Write dirty lines back and drop them. */
    ACL_RT_CMO_TYPE_FLUSH,
} aclrtCmoType;

/** One barrier of `aclrtCmoWaitBarrier`: an operation type and its logical barrier id. */
typedef struct {
    /** The operation the barrier waits for (the runtime accepts `ACL_RT_CMO_TYPE_INVALID` only). */
    aclrtCmoType cmoType;
    /** The logical barrier id given to `aclrtCmoAsyncWithBarrier` (not 0). */
    uint32_t barrierId;
} aclrtBarrierCmoInfo;

/** The barriers one `aclrtCmoWaitBarrier` waits for. */
typedef struct {
    /** How many entries of `cmoInfo` are used: 1 to `ACL_RT_CMO_MAX_BARRIER_NUM` (6). */
    size_t barrierNum;
    /** The barriers (`ACL_RT_CMO_MAX_BARRIER_NUM` entries). */
    aclrtBarrierCmoInfo cmoInfo[6];
} aclrtBarrierTaskInfo;

/* ======================================================================== */
/* Flags and other constants                                                */
/* ======================================================================== */

/** The only `flag` of `aclrtMemAllocManaged`: memory reachable from every device and the host. */
static const uint32_t ACL_RT_MEM_ATTACH_GLOBAL = 0x01U;
/** Major number of the ACL interface version these declarations describe. */
static const int32_t ACL_MAJOR_VERSION = 1;
/** Minor number of the ACL interface version these declarations describe. */
static const int32_t ACL_MINOR_VERSION = 17;
/** Patch number of the ACL interface version these declarations describe. */
static const int32_t ACL_PATCH_VERSION = 0;

/** Most barriers one `aclrtCmoWaitBarrier` waits for. */
static const uint32_t ACL_RT_CMO_MAX_BARRIER_NUM = 6u;
/** Most entries `aclrtMemUceRepair` accepts (`arraySize`). */
static const uint32_t MAX_MEM_UCE_INFO_ARRAY_SIZE = 128u;
/** Number of reserved words in `aclrtMemUceInfo`. */
static const uint32_t UCE_INFO_RESERVED_SIZE = 14u;

/** Event creation flag: synchronisation event. */
static const uint32_t ACL_EVENT_SYNC = 0x1u;
/** Event creation flag: captures stream progress. */
static const uint32_t ACL_EVENT_CAPTURE_STREAM_PROGRESS = 0x2u;
/** Event creation flag: timeline event. */
static const uint32_t ACL_EVENT_TIME_LINE = 0x8u;
/** Event creation flag: the event is used on the device only. */
static const uint32_t ACL_EVENT_DEVICE_USE_ONLY = 0x10u;
/** Event creation flag: external event. */
static const uint32_t ACL_EVENT_EXTERNAL = 0x20u;
/** Event creation flag: inter-process (IPC) event. */
static const uint32_t ACL_EVENT_IPC = 0x40u;

/** `aclrtSetStreamFailureMode`: later tasks of the stream still run after one fails (the default). */
static const uint32_t ACL_CONTINUE_ON_FAILURE = 0x0u;
/** `aclrtSetStreamFailureMode`: once a task of the stream fails, its later tasks do not run. */
static const uint32_t ACL_STOP_ON_FAILURE = 0x1u;

/** Stream flag: fast task launch. */
static const uint32_t ACL_STREAM_FAST_LAUNCH = 0x1u;
/** Stream flag: fast synchronisation. */
static const uint32_t ACL_STREAM_FAST_SYNC = 0x2u;
/** Stream flag: persistent stream. */
static const uint32_t ACL_STREAM_PERSISTENT = 0x4u;
/** Stream flag: huge stream. */
static const uint32_t ACL_STREAM_HUGE = 0x8u;
/** Stream flag: CPU-scheduled stream. */
static const uint32_t ACL_STREAM_CPU_SCHEDULE = 0x10u;
/** Stream flag: the stream is used on the device only. */
static const uint32_t ACL_STREAM_DEVICE_USE_ONLY = 0x20u;

/*
 * `aclrtValueWait` comparisons (values of hicann/runtime include/external/acl/acl_rt.h,
 * identical in every tag v8.5.0 ... master 681ef761). The wait ends when, with `*devAddr`
 * the 64-bit word at the address:
 */
/** `aclrtValueWait`: `(int64_t)(*devAddr - value) >= 0`. */
static const uint32_t ACL_STREAM_WAIT_VALUE_GEQ = 0x0u;
/** `aclrtValueWait`: `*devAddr == value`. */
static const uint32_t ACL_STREAM_WAIT_VALUE_EQ = 0x1u;
/** `aclrtValueWait`: `(*devAddr & value) != 0`. */
static const uint32_t ACL_STREAM_WAIT_VALUE_AND = 0x2u;
/** `aclrtValueWait`: `~(*devAddr | value) != 0`. */
static const uint32_t ACL_STREAM_WAIT_VALUE_NOR = 0x3u;

/** `aclrtMemUceInfoArray::memUceInfoArray` entries. */
static const int32_t ACL_RT_MEM_UCE_INFO_MAX_NUM = 20;

/** Size in bytes of an `aclrtIpcEventHandle`. */
static const int32_t ACL_IPC_EVENT_HANDLE_SIZE = 64;

/** `aclrtHostRegisterV2` flag: map the host memory into the device address space. */
static const uint32_t ACL_HOST_REG_MAPPED = 0x2u;
/** `aclrtHostRegisterV2` flag: register as I/O memory (reserved). */
static const uint32_t ACL_HOST_REG_IOMEMORY = 0x4u;
/** `aclrtHostRegisterV2` flag: register as read-only memory (reserved). */
static const uint32_t ACL_HOST_REG_READONLY = 0x8u;
/** `aclrtHostRegisterV2` flag: pin pageable memory; combinable with `ACL_HOST_REG_MAPPED`. */
static const uint32_t ACL_HOST_REG_PINNED = 0x10000000u;

/** Shareable-handle export flag: default, the pid whitelist is enforced. */
static const uint64_t ACL_RT_VMM_EXPORT_FLAG_DEFAULT = 0x0u;
/** Shareable-handle export flag: any process may import (no pid whitelist). */
static const uint64_t ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION = 0x1u;

/** IPC key export flag: default, the pid whitelist is enforced. */
static const uint64_t ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT = 0x0u;
/** IPC key export flag: any process may import (no pid whitelist). */
static const uint64_t ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION = 0x1u;
/** IPC key import flag: default. */
static const uint64_t ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT = 0x0u;
/** IPC key import flag: enable peer access to the exporting device first. */
static const uint64_t ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS = 0x1u;

/** `aclrtIpcMemSetAttr` access-link value: SIO (the default). */
static const uint64_t ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO = 0;
/** `aclrtIpcMemSetAttr` access-link value: HCCS. */
static const uint64_t ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS = 1;
/** `aclrtIpcMemSetAttr` access-link value: UB single-port path (Ascend 950). */
static const uint64_t ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH = 2;
/** `aclrtIpcMemSetAttr` access-link value: UB multi-port path (Ascend 950). */
static const uint64_t ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH = 3;

/** `aclrtMemMapSelectedLink` link index 0 (SIO). */
static const uint32_t ACL_RT_MEM_LINK_IDX_0 = 0u;
/** `aclrtMemMapSelectedLink` link index 1 (HCCS). */
static const uint32_t ACL_RT_MEM_LINK_IDX_1 = 1u;

/** Memory-type check flag: device memory. */
static const uint32_t ACL_RT_MEM_TYPE_DEV = 0x2u;
/** Memory-type check flag: DVPP memory. */
static const uint32_t ACL_RT_MEM_TYPE_DVPP = 0x8u;
/** Memory-type check flag: reserved memory. */
static const uint32_t ACL_RT_MEM_TYPE_RSVD = 0x10u;

/* ======================================================================== */
/* Error codes: ACL level                                                   */
/* ======================================================================== */

/** Success. */
static const aclError ACL_SUCCESS = 0;
/** Success (older name of `ACL_SUCCESS`). */
static const aclError ACL_ERROR_NONE = 0;

/** Invalid argument (argument checks of the ACL layer). */
static const aclError ACL_ERROR_INVALID_PARAM = 100000;
/** AscendCL not initialised (`aclInit` missing). */
static const aclError ACL_ERROR_UNINITIALIZE = 100001;
/** `aclInit` called again while initialised. */
static const aclError ACL_ERROR_REPEAT_INITIALIZE = 100002;
/** Invalid file (for example an unreadable configuration path). */
static const aclError ACL_ERROR_INVALID_FILE = 100003;
/** Writing a file failed. */
static const aclError ACL_ERROR_WRITE_FILE = 100004;
/** Invalid file size. */
static const aclError ACL_ERROR_INVALID_FILE_SIZE = 100005;
/** Parsing a file failed. */
static const aclError ACL_ERROR_PARSE_FILE = 100006;
/** A file lacks a required attribute. */
static const aclError ACL_ERROR_FILE_MISSING_ATTR = 100007;
/** A file attribute is invalid. */
static const aclError ACL_ERROR_FILE_ATTR_INVALID = 100008;
/** Invalid dump configuration. */
static const aclError ACL_ERROR_INVALID_DUMP_CONFIG = 100009;
/** Invalid profiling configuration. */
static const aclError ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
/** Invalid model id. */
static const aclError ACL_ERROR_INVALID_MODEL_ID = 100011;
/** Model deserialisation failed. */
static const aclError ACL_ERROR_DESERIALIZE_MODEL = 100012;
/** Model parsing failed. */
static const aclError ACL_ERROR_PARSE_MODEL = 100013;
/** Reading a model failed. */
static const aclError ACL_ERROR_READ_MODEL_FAILURE = 100014;
/** Invalid model size. */
static const aclError ACL_ERROR_MODEL_SIZE_INVALID = 100015;
/** A model lacks a required attribute. */
static const aclError ACL_ERROR_MODEL_MISSING_ATTR = 100016;
/** Model input does not match. */
static const aclError ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017;
/** Model output does not match. */
static const aclError ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018;
/** The model is not dynamic. */
static const aclError ACL_ERROR_MODEL_NOT_DYNAMIC = 100019;
/** Operator type does not match. */
static const aclError ACL_ERROR_OP_TYPE_NOT_MATCH = 100020;
/** Operator input does not match. */
static const aclError ACL_ERROR_OP_INPUT_NOT_MATCH = 100021;
/** Operator output does not match. */
static const aclError ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022;
/** Operator attribute does not match. */
static const aclError ACL_ERROR_OP_ATTR_NOT_MATCH = 100023;
/** Operator not found. */
static const aclError ACL_ERROR_OP_NOT_FOUND = 100024;
/** Loading an operator failed. */
static const aclError ACL_ERROR_OP_LOAD_FAILED = 100025;
/** Unsupported data type. */
static const aclError ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
/** Format does not match. */
static const aclError ACL_ERROR_FORMAT_NOT_MATCH = 100027;
/** Binary selector not registered. */
static const aclError ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028;
/** Kernel not found. */
static const aclError ACL_ERROR_KERNEL_NOT_FOUND = 100029;
/** Binary selector already registered. */
static const aclError ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030;
/** Kernel already registered. */
static const aclError ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031;
/** Invalid queue id. */
static const aclError ACL_ERROR_INVALID_QUEUE_ID = 100032;
/** Repeated subscription. */
static const aclError ACL_ERROR_REPEAT_SUBSCRIBE = 100033;
/** Stream not subscribed. */
static const aclError ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034;
/** Thread not subscribed. */
static const aclError ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035;
/** Waiting for a callback timed out. */
static const aclError ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036;
/** `aclFinalize` called again after finalisation. */
static const aclError ACL_ERROR_REPEAT_FINALIZE = 100037;
/** Not a static AIPP configuration. */
static const aclError ACL_ERROR_NOT_STATIC_AIPP = 100038;
/** Operation unavailable in compiling stub mode. */
static const aclError ACL_ERROR_COMPILING_STUB_MODE = 100039;
/** Group not set. */
static const aclError ACL_ERROR_GROUP_NOT_SET = 100040;
/** Group not created. */
static const aclError ACL_ERROR_GROUP_NOT_CREATE = 100041;
/** Profiling already running. */
static const aclError ACL_ERROR_PROF_ALREADY_RUN = 100042;
/** Profiling not running. */
static const aclError ACL_ERROR_PROF_NOT_RUN = 100043;
/** Dump already running. */
static const aclError ACL_ERROR_DUMP_ALREADY_RUN = 100044;
/** Dump not running. */
static const aclError ACL_ERROR_DUMP_NOT_RUN = 100045;
/** Repeated profiling subscription. */
static const aclError ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046;
/** Conflicting profiling APIs used. */
static const aclError ACL_ERROR_PROF_API_CONFLICT = 148047;
/** Invalid maximum operator-queue-number configuration. */
static const aclError ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048;
/** Invalid OPP path. */
static const aclError ACL_ERROR_INVALID_OPP_PATH = 148049;
/** Operator does not support dynamic shapes. */
static const aclError ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050;
/** A related resource has not been cleared. */
static const aclError ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051;
/** Unsupported JPEG. */
static const aclError ACL_ERROR_UNSUPPORTED_JPEG = 148052;
/** Invalid bundle model id. */
static const aclError ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053;

/** Memory allocation failed (ACL level). */
static const aclError ACL_ERROR_BAD_ALLOC = 200000;
/** API not supported. */
static const aclError ACL_ERROR_API_NOT_SUPPORT = 200001;
/** Invalid device. */
static const aclError ACL_ERROR_INVALID_DEVICE = 200002;
/** Memory address not aligned. */
static const aclError ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
/** Resources do not match. */
static const aclError ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
/** Invalid resource handle. */
static const aclError ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
/** Feature unsupported (ACL level). */
static const aclError ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
/** Profiling modules unsupported. */
static const aclError ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007;

/** Storage over limit. */
static const aclError ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

/** Internal error. */
static const aclError ACL_ERROR_INTERNAL_ERROR = 500000;
/** Generic failure. */
static const aclError ACL_ERROR_FAILURE = 500001;
/** Graph engine (GE) failure. */
static const aclError ACL_ERROR_GE_FAILURE = 500002;
/** Runtime failure. */
static const aclError ACL_ERROR_RT_FAILURE = 500003;
/** Driver failure. */
static const aclError ACL_ERROR_DRV_FAILURE = 500004;
/** Profiling failure. */
static const aclError ACL_ERROR_PROFILING_FAILURE = 500005;

/* ======================================================================== */
/* Error codes: runtime level                                               */
/* ======================================================================== */

/** Success (runtime level). */
static const aclError ACL_RT_SUCCESS = 0;

/** Invalid parameter (runtime parameter checks). */
static const aclError ACL_ERROR_RT_PARAM_INVALID = 107000;
/** Invalid device id. */
static const aclError ACL_ERROR_RT_INVALID_DEVICEID = 107001;
/** No current context (for example no `aclrtSetDevice` on this thread). */
static const aclError ACL_ERROR_RT_CONTEXT_NULL = 107002;
/** The stream does not belong to the current context. */
static const aclError ACL_ERROR_RT_STREAM_CONTEXT = 107003;
/** The model does not belong to the current context. */
static const aclError ACL_ERROR_RT_MODEL_CONTEXT = 107004;
/** The stream does not belong to the model. */
static const aclError ACL_ERROR_RT_STREAM_MODEL = 107005;
/** Invalid event timestamp. */
static const aclError ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006;
/** Event timestamps are in reverse order. */
static const aclError ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007;
/** Memory address not aligned. */
static const aclError ACL_ERROR_RT_ADDR_UNALIGNED = 107008;
/** Opening a file failed. */
static const aclError ACL_ERROR_RT_FILE_OPEN = 107009;
/** Writing a file failed. */
static const aclError ACL_ERROR_RT_FILE_WRITE = 107010;
/** Stream subscription error. */
static const aclError ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011;
/** Thread subscription error. */
static const aclError ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012;
/** Group not set. */
static const aclError ACL_ERROR_RT_GROUP_NOT_SET = 107013;
/** Group not created. */
static const aclError ACL_ERROR_RT_GROUP_NOT_CREATE = 107014;
/** No callback registered to the stream. */
static const aclError ACL_ERROR_RT_STREAM_NO_CB_REG = 107015;
/** Invalid memory type. */
static const aclError ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
/** Invalid handle. */
static const aclError ACL_ERROR_RT_INVALID_HANDLE = 107017;
/** Invalid malloc type. */
static const aclError ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018;
/** Wait timed out. */
static const aclError ACL_ERROR_RT_WAIT_TIMEOUT = 107019;
/** Task timed out. */
static const aclError ACL_ERROR_RT_TASK_TIMEOUT = 107020;
/** System parameter option not set. */
static const aclError ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021;
/** Device tasks are being aborted. */
static const aclError ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022;
/** The stream is being aborted. */
static const aclError ACL_ERROR_RT_STREAM_ABORT = 107023;
/** Stream capture dependency failure. */
static const aclError ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024;
/** A stream was not joined back into the capture. */
static const aclError ACL_ERROR_RT_STREAM_UNJOINED = 107025;
/** The model is captured. */
static const aclError ACL_ERROR_RT_MODEL_CAPTURED = 107026;
/** The stream is captured. */
static const aclError ACL_ERROR_RT_STREAM_CAPTURED = 107027;
/** The event is captured. */
static const aclError ACL_ERROR_RT_EVENT_CAPTURED = 107028;
/** The stream is not capturing. */
static const aclError ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029;
/** Operation not allowed in the current capture mode. */
static const aclError ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030;
/** Disallowed implicit dependency on the default stream during capture. */
static const aclError ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031;
/** Interdependent streams cannot begin capture together. */
static const aclError ACL_ERROR_STREAM_CAPTURE_CONFLICT = 107032;
/** Task group status error. */
static const aclError ACL_ERROR_STREAM_TASK_GROUP_STATUS = 107033;
/** Task group interrupted. */
static const aclError ACL_ERROR_STREAM_TASK_GROUP_INTR = 107034;
/** Task abort stopped before post-processing. */
static const aclError ACL_ERROR_RT_TASK_ABORT_STOP = 107035;
/** The capture was not begun on this stream. */
static const aclError ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036;
/** The model is still running. */
static const aclError ACL_ERROR_RT_MODEL_RUNNING = 107037;
/** Capture ended on a different thread than it began on. */
static const aclError ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038;
/** Input array capacity insufficient. */
static const aclError ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY = 107039;
/** Model update failed. */
static const aclError ACL_ERROR_RT_MODEL_UPDATE_FAILED = 107040;
/** An asynchronous operation would become synchronous, which the capture mode blocks. */
static const aclError ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC = 107041;
/** Symbol not found. */
static const aclError ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042;
/** Invalid device symbol. */
static const aclError ACL_ERROR_RT_INVALID_SYMBOL = 107043;
/** Invalid device function. */
static const aclError ACL_ERROR_RT_INVALID_DEVICE_FUNCTION = 107044;
/** A sub graph is capturing. */
static const aclError ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING = 107045;

/** Feature not supported (by the driver or chip). */
static const aclError ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
/** Memory allocation error (out of memory only). */
static const aclError ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
/** Memory free error. */
static const aclError ACL_ERROR_RT_MEMORY_FREE = 207002;
/** AI Core overflow. */
static const aclError ACL_ERROR_RT_AICORE_OVER_FLOW = 207003;
/** No device. */
static const aclError ACL_ERROR_RT_NO_DEVICE = 207004;
/** Resource allocation failed. */
static const aclError ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005;
/** No permission. */
static const aclError ACL_ERROR_RT_NO_PERMISSION = 207006;
/** No event resource left. */
static const aclError ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007;
/** No stream resource left. */
static const aclError ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008;
/** No notify resource left. */
static const aclError ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009;
/** No model resource left. */
static const aclError ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010;
/** No CDQ resource left. */
static const aclError ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011;
/** Over limit. */
static const aclError ACL_ERROR_RT_OVER_LIMIT = 207012;
/** Queue empty. */
static const aclError ACL_ERROR_RT_QUEUE_EMPTY = 207013;
/** Queue full. */
static const aclError ACL_ERROR_RT_QUEUE_FULL = 207014;
/** Repeated initialisation. */
static const aclError ACL_ERROR_RT_REPEATED_INIT = 207015;
/** AI Vector overflow. */
static const aclError ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016;
/** Overflow. */
static const aclError ACL_ERROR_RT_OVER_FLOW = 207017;
/** Device out of memory. */
static const aclError ACL_ERROR_RT_DEVICE_OOM = 207018;
/** Updating this operator is not supported. */
static const aclError ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019;
/** Driver timeout. */
static const aclError ACL_ERROR_RT_TIMEOUT = 207020;
/** Link type not supported (`aclrtMemMapSetLink`, `aclrtIpcMemSetAttr`). */
static const aclError ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED = 207021;

/** Runtime internal error. */
static const aclError ACL_ERROR_RT_INTERNAL_ERROR = 507000;
/** Task scheduler internal error. */
static const aclError ACL_ERROR_RT_TS_ERROR = 507001;
/** Stream task queue full. */
static const aclError ACL_ERROR_RT_STREAM_TASK_FULL = 507002;
/** Stream task queue empty. */
static const aclError ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003;
/** Stream not complete. */
static const aclError ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004;
/** End of sequence. */
static const aclError ACL_ERROR_RT_END_OF_SEQUENCE = 507005;
/** Event not complete. */
static const aclError ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006;
/** Context release error (for example a device reset that was never set). */
static const aclError ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007;
/** SoC version error. */
static const aclError ACL_ERROR_RT_SOC_VERSION = 507008;
/** Task type not supported. */
static const aclError ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009;
/** Task scheduler heartbeat lost. */
static const aclError ACL_ERROR_RT_LOST_HEARTBEAT = 507010;
/** Model execution failed. */
static const aclError ACL_ERROR_RT_MODEL_EXECUTE = 507011;
/** Report timeout. */
static const aclError ACL_ERROR_RT_REPORT_TIMEOUT = 507012;
/** System DMA error. */
static const aclError ACL_ERROR_RT_SYS_DMA = 507013;
/** AI Core timeout. */
static const aclError ACL_ERROR_RT_AICORE_TIMEOUT = 507014;
/** AI Core exception. */
static const aclError ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
/** AI Core trap exception. */
static const aclError ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016;
/** AI CPU timeout. */
static const aclError ACL_ERROR_RT_AICPU_TIMEOUT = 507017;
/** AI CPU exception. */
static const aclError ACL_ERROR_RT_AICPU_EXCEPTION = 507018;
/** AI CPU data-dump response error. */
static const aclError ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR = 507019;
/** AI CPU model-operation response error. */
static const aclError ACL_ERROR_RT_AICPU_MODEL_RSP_ERR = 507020;
/** Profiling error. */
static const aclError ACL_ERROR_RT_PROFILING_ERROR = 507021;
/** IPC error. */
static const aclError ACL_ERROR_RT_IPC_ERROR = 507022;
/** Model aborted normally. */
static const aclError ACL_ERROR_RT_MODEL_ABORT_NORMAL = 507023;
/** Kernel is being unregistered. */
static const aclError ACL_ERROR_RT_KERNEL_UNREGISTERING = 507024;
/** Ring buffer not initialised. */
static const aclError ACL_ERROR_RT_RINGBUFFER_NOT_INIT = 507025;
/** Ring buffer has no data. */
static const aclError ACL_ERROR_RT_RINGBUFFER_NO_DATA = 507026;
/** Kernel lookup error. */
static const aclError ACL_ERROR_RT_KERNEL_LOOKUP = 507027;
/** Kernel registered twice. */
static const aclError ACL_ERROR_RT_KERNEL_DUPLICATE = 507028;
/** Debug registration failed. */
static const aclError ACL_ERROR_RT_DEBUG_REGISTER_FAIL = 507029;
/** Debug unregistration failed. */
static const aclError ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL = 507030;
/** The label does not belong to the current context. */
static const aclError ACL_ERROR_RT_LABEL_CONTEXT = 507031;
/** Program registrations used up. */
static const aclError ACL_ERROR_RT_PROGRAM_USE_OUT = 507032;
/** Device setup error. */
static const aclError ACL_ERROR_RT_DEV_SETUP_ERROR = 507033;
/** Vector core timeout. */
static const aclError ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034;
/** Vector core exception. */
static const aclError ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035;
/** Vector core trap exception. */
static const aclError ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036;
/** CDQ batch allocation abnormal. */
static const aclError ACL_ERROR_RT_CDQ_BATCH_ABNORMAL = 507037;
/** Die mode cannot be changed. */
static const aclError ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR = 507038;
/** A die cannot be set in single-die mode. */
static const aclError ACL_ERROR_RT_DIE_SET_ERROR = 507039;
/** Invalid die id. */
static const aclError ACL_ERROR_RT_INVALID_DIEID = 507040;
/** Die mode not set. */
static const aclError ACL_ERROR_RT_DIE_MODE_NOT_SET = 507041;
/** AI Core trap read overflow. */
static const aclError ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042;
/** AI Core trap write overflow. */
static const aclError ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043;
/** Vector core trap read overflow. */
static const aclError ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW = 507044;
/** Vector core trap write overflow. */
static const aclError ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW = 507045;
/** Stream synchronisation timed out. */
static const aclError ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046;
/** Event synchronisation timed out. */
static const aclError ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047;
/** FFTS+ timeout. */
static const aclError ACL_ERROR_RT_FFTS_PLUS_TIMEOUT = 507048;
/** FFTS+ exception. */
static const aclError ACL_ERROR_RT_FFTS_PLUS_EXCEPTION = 507049;
/** FFTS+ trap exception. */
static const aclError ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION = 507050;
/** Sending a message (HDC) failed. */
static const aclError ACL_ERROR_RT_SEND_MSG = 507051;
/** Copying data failed. */
static const aclError ACL_ERROR_RT_COPY_DATA = 507052;
/** Device memory error. */
static const aclError ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053;
/** HBM multi-bit ECC error. */
static const aclError ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054;
/** Suspected device memory error. */
static const aclError ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR = 507055;
/** Link error. */
static const aclError ACL_ERROR_RT_LINK_ERROR = 507056;
/** Suspected remote error. */
static const aclError ACL_ERROR_RT_SUSPECT_REMOTE_ERROR = 507057;

/** Driver internal error (also any driver code without a specific mapping). */
static const aclError ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899;
/** AI CPU internal error. */
static const aclError ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900;
/** Host-device channel (HDC) disconnected. */
static const aclError ACL_ERROR_RT_SOCKET_CLOSE = 507901;
/** AI CPU info-load response error. */
static const aclError ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR = 507902;
/** Stream capture invalidated. */
static const aclError ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903;
/** Retrying a communication operation failed. */
static const aclError ACL_ERROR_RT_COMM_OP_RETRY_FAIL = 507904;
/** Snapshot lock timed out. */
static const aclError ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT = 507905;
/** Snapshot lock failed. */
static const aclError ACL_ERROR_SNAPSHOT_LOCK_FAILED = 507906;
/** Snapshot unlock failed. */
static const aclError ACL_ERROR_SNAPSHOT_UNLOCK_FAILED = 507907;
/** Snapshot backup failed. */
static const aclError ACL_ERROR_SNAPSHOT_BACKUP_FAILED = 507908;
/** Snapshot restore failed. */
static const aclError ACL_ERROR_SNAPSHOT_RESTORE_FAILED = 507909;
/** The host memory range is already registered. */
static const aclError ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 507910;
/** The host memory is not registered. */
static const aclError ACL_ERROR_HOST_MEMORY_NOT_REGISTERED = 507911;
/** A snapshot callback failed. */
static const aclError ACL_ERROR_SNAPSHOT_CALLBACK_FAILED = 507912;
/** Registering a snapshot callback failed. */
static const aclError ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED = 507913;
/** L3 (UB memory) port error. */
static const aclError ACL_ERROR_RT_L3_PORT_ERROR = 507914;
/** Collective communication unit (CCU) timeout. */
static const aclError ACL_ERROR_RT_CCU_TIMEOUT = 507915;
/** Collective communication unit (CCU) exception. */
static const aclError ACL_ERROR_RT_CCU_EXCEPTION = 507916;

/* ======================================================================== */
/* Error codes: graph engine (GE) codes that can surface                    */
/* ======================================================================== */

/** Invalid parameter (graph engine). */
static const aclError ACL_ERROR_GE_PARAM_INVALID = 145000;
/** Graph engine executor not initialised. */
static const aclError ACL_ERROR_GE_EXEC_NOT_INIT = 145001;
/** Memory allocation failed (graph engine). */
static const aclError ACL_ERROR_GE_MEMORY_ALLOCATION = 245000;
/** Memory operation failed (graph engine). */
static const aclError ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001;
/** Device memory operation failed (graph engine). */
static const aclError ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002;

/* ======================================================================== */
/* 3.1 Initialisation, version, errors                                      */
/* ======================================================================== */

/** Initialises AscendCL for the process; `configPath` may be NULL (default configuration). */
aclError aclInit(const char *configPath);

/** Finalises AscendCL, whatever the number of `aclInit` calls. */
aclError aclFinalize(void);

/** Drops one `aclInit` reference and finalises at zero; reports the remaining count. */
aclError aclFinalizeReference(uint64_t *refCount);

/** Reports the ACL interface version (deprecated). */
aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);

/** Writes the version string of the named package (for example "runtime"). */
aclError aclsysGetVersionStr(char *pkgName, char *versionStr);

/** Writes the numeric version of the named package. */
aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum);

/** Returns the message of the most recent error on this thread, or NULL. */
const char *aclGetRecentErrMsg(void);

/** Returns the SoC name, or NULL on failure. */
const char *aclrtGetSocName(void);

/** Returns the last error at the given level and clears it. */
aclError aclrtGetLastError(aclrtLastErrLevel level);

/** Returns the last error at the given level without clearing it. */
aclError aclrtPeekAtLastError(aclrtLastErrLevel level);

/** Writes the fault of device `deviceId` (ACL_RT_NO_ERROR when it has none) (hicann/runtime acl_rt.h). */
aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo);

/* ======================================================================== */
/* 3.2 Devices, contexts, peer access                                       */
/* ======================================================================== */

/** Makes `deviceId` current on this thread, retaining its primary context. */
aclError aclrtSetDevice(int32_t deviceId);

/** Releases one retain of the device's primary context. */
aclError aclrtResetDevice(int32_t deviceId);

/** Releases the device's primary context completely. */
aclError aclrtResetDeviceForce(int32_t deviceId);

/** Reports the current device of this thread. */
aclError aclrtGetDevice(int32_t *deviceId);

/** Reports the number of visible devices. */
aclError aclrtGetDeviceCount(uint32_t *count);

/** Reports whether the program runs on the host or on the device. */
aclError aclrtGetRunMode(aclrtRunMode *runMode);

/** Creates a context on a device and makes it current. */
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);

/** Destroys a context. */
aclError aclrtDestroyContext(aclrtContext context);

/** Makes a context current on this thread. */
aclError aclrtSetCurrentContext(aclrtContext context);

/** Reports the current context of this thread. */
aclError aclrtGetCurrentContext(aclrtContext *context);

/** Waits until all work on the current device has completed. */
aclError aclrtSynchronizeDevice(void);

/** Waits until all work on the current device has completed, giving up after `timeout`. */
aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);

/** Reports the host-side process id used to whitelist importers. */
aclError aclrtDeviceGetBareTgid(int32_t *pid);

/** Reports whether `deviceId` can access memory of `peerDeviceId`. */
aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId);

/** Enables access from the current device to `peerDeviceId`; `flags` must be 0. */
aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);

/** Disables access from the current device to `peerDeviceId`. */
aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);

/** Writes a handle of the current context's default stream, usable wherever a stream is (hicann/runtime acl_rt.h). */
aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream);

/** Writes how many cores of a kind the current thread may use on the current device (hicann/runtime acl_rt.h). */
aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value);

/* ======================================================================== */
/* 3.3 Streams and events                                                   */
/* ======================================================================== */

/** Creates a stream on the current context. */
aclError aclrtCreateStream(aclrtStream *stream);

/** Creates a stream with a priority (0 to 7) and `ACL_STREAM_*` flags. */
aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);

/** Destroys a stream. */
aclError aclrtDestroyStream(aclrtStream stream);

/** Destroys a stream without waiting: work still queued on it is dropped (hicann/runtime acl_rt.h). */
aclError aclrtDestroyStreamForce(aclrtStream stream);

/** Waits until all work queued on a stream has completed. */
aclError aclrtSynchronizeStream(aclrtStream stream);

/** Waits until all work queued on a stream has completed, giving up after `timeout`. */
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);

/** Reports whether every task queued on a stream has finished (NULL: the default stream) (hicann/runtime acl_rt.h). */
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);

/** Writes a stream's ID (NULL: the default stream) (hicann/runtime acl_rt.h). */
aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId);

/** Writes a stream's priority, 0 the highest (NULL: the default stream) (hicann/runtime acl_rt.h). */
aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority);

/** Writes a stream's `ACL_STREAM_*` flags (NULL: the default stream) (hicann/runtime acl_rt.h). */
aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags);

/** Creates an event. */
aclError aclrtCreateEvent(aclrtEvent *event);

/** Creates an event with `ACL_EVENT_*` flags. */
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);

/** Creates an event with `ACL_EVENT_*` flags (extended variant). */
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);

/** Destroys an event. */
aclError aclrtDestroyEvent(aclrtEvent event);

/** Records an event at the current end of a stream. */
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);

/** Resets an event on a stream: once the stream reaches the reset, the event counts as never recorded (hicann/runtime acl_rt.h). */
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);

/** Waits until an event has completed. */
aclError aclrtSynchronizeEvent(aclrtEvent event);

/** Waits until an event has completed, giving up after `timeout` milliseconds (-1: no limit) (hicann/runtime acl_rt.h). */
aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);

/** Reports whether the work before an event's record point has completed. */
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);

/** Reports whether an event has completed: deprecated in favour of aclrtQueryEventStatus; complete before the first record (hicann/runtime acl_rt.h). */
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);

/** Reports whether every stream wait queued on an event has passed (hicann/runtime acl_rt.h). */
aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status);

/** Sets what a stream does after one of its tasks fails: ACL_CONTINUE_ON_FAILURE or ACL_STOP_ON_FAILURE (bit 0 of `mode`; NULL: the default stream) (hicann/runtime acl_rt.h). */
aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);

/** Writes a handle other processes open an ACL_EVENT_IPC event by (hicann/runtime acl_rt.h). */
aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle);

/** Opens an IPC event another process (or this one) shared: the event returned is waited for, synchronised and recorded like the original (hicann/runtime acl_rt.h). */
aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event);

/** Makes later work on a stream wait for an event. */
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);

/** Makes later work on a stream wait for an event, failing the wait after `timeout` seconds (0: no limit) (hicann/runtime acl_rt.h). */
aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout);

/** Reports the time in milliseconds between two completed events. */
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

/** Writes the time of an event's latest record, in microseconds of the device's system counter (hicann/runtime acl_rt.h). */
aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp);

/* ======================================================================== */
/* 3.4 Device memory, copy, set                                             */
/* ======================================================================== */

/** Allocates device memory (size rounded up to 32 bytes plus 32 bytes of padding). */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);

/** Allocates 32-byte-aligned device memory without padding. */
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);

/** Allocates cached device memory. */
aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy);

/** Allocates device memory with an optional attribute configuration (`cfg` may be NULL). */
aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg);

/** Allocates device memory for the task scheduler, with an optional configuration. */
aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg);

/** Frees device memory at once, without waiting for queued work. */
aclError aclrtFree(void *devPtr);

/** Synchronises the device, then frees device memory. */
aclError aclrtFreeWithDevSync(void *devPtr);

/** Reports free and total bytes of the current device for a memory kind. */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/** Reports per-component memory usage of a device. */
aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum, size_t *outputNum);

/** Reports the location and page size of the memory a pointer refers to. */
aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes);

/** Copies `count` bytes synchronously into `dst`, whose capacity is `destMax`. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);

/** Queues a copy of `count` bytes on a stream. */
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream);

/** Copies a 2-D region of `height` rows of `width` bytes synchronously. */
aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind);

/** Queues a copy of a 2-D region on a stream. */
aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind, aclrtStream stream);

/** Sets `count` bytes to the low 8 bits of `value`, synchronously. */
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);

/** Queues a memory set on a stream. */
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);

/**
 * Sets `N` 32-bit elements at `ptr` (4-byte aligned, capacity `memSize` bytes, at least N * 4)
 * to `value`, synchronously; device memory or aclrtMallocHost memory only (hicann/runtime acl_rt.h).
 */
aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N);

/**
 * Queues on `stream` a set of `N` 32-bit elements at `ptr` to `value`; on pinned host memory
 * the set happens during the call (hicann/runtime acl_rt.h).
 */
aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N, aclrtStream stream);

/**
 * Copies `numBatches` ranges synchronously (host to device or device to host
 * only); `attrs[n]` applies from `attrsIndexes[n]` to the next index - 1. On a
 * copy-related failure `*failIndex` is the failing entry, else SIZE_MAX
 * (hicann/runtime acl_rt.h).
 */
aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                          aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex);

/** `aclrtMemcpyBatch` without `failIndex` (hicann/runtime acl_rt.h). */
aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                            aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs);

/**
 * Queues on `stream` the copies of `aclrtMemcpyBatch`; with pageable host
 * memory the stream is synchronised and the copies happen during the call
 * (hicann/runtime acl_rt.h).
 */
aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                               aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs,
                               size_t *failIndex, aclrtStream stream);

/** `aclrtMemcpyBatchAsync` without `failIndex` (hicann/runtime acl_rt.h). */
aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                                 aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs,
                                 aclrtStream stream);

/**
 * Queues on `stream` a device-to-device copy through two pointers held in device memory:
 * `count` bytes from `*src + srcDataOffset` to `*dst + dstDataOffset` (`dstDataOffset + count`
 * at most `destMax`), the addresses read when the copy runs; `kind` must be
 * ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (hicann/runtime acl_rt.h).
 */
aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src, size_t count,
                                    size_t srcDataOffset, aclrtMemcpyKind kind, aclrtStream stream);

/**
 * The size of a memory-copy descriptor for `kind` (ACL_MEMCPY_INNER_DEVICE_TO_DEVICE only)
 * (hicann/runtime acl_rt.h).
 */
aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize);

/**
 * Writes into `desc` (device memory, 64-byte aligned, of aclrtGetMemcpyDescSize bytes) a copy of
 * `count` bytes from `srcAddr` to `dstAddr` (device memory of one device); `config` is reserved:
 * NULL (hicann/runtime acl_rt.h).
 */
aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count,
                            void *config);

/**
 * Queues on `stream` the copy the descriptor `desc` holds when the copy runs
 * (hicann/runtime acl_rt.h).
 */
aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream);

/**
 * aclrtMemcpyAsync asking the runtime to check whether host memory is page-locked; deprecated
 * for aclrtMemcpyAsync (hicann/runtime acl_rt.h).
 */
aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count,
                                       aclrtMemcpyKind kind, aclrtStream stream);

/**
 * Queues on `stream` a write of the 64-bit `value` to device memory at `devAddr` (8-byte
 * aligned); `flag` is reserved and must be 0 (hicann/runtime acl_rt.h).
 */
aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream);

/**
 * Queues on `stream` a wait until the 64-bit word at `devAddr` compares with `value` as the
 * `ACL_STREAM_WAIT_VALUE_*` `flag` says; later work on `stream` runs after it (hicann/runtime
 * acl_rt.h).
 */
aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream);

/* ======================================================================== */
/* 3.5 Host memory                                                          */
/* ======================================================================== */

/** Allocates page-locked host memory (non-zero size). */
aclError aclrtMallocHost(void **hostPtr, size_t size);

/** Allocates page-locked host memory with an optional attribute configuration. */
aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg);

/** Frees page-locked host memory without synchronising. */
aclError aclrtFreeHost(void *hostPtr);

/** Synchronises the device, then frees page-locked host memory. */
aclError aclrtFreeHostWithDevSync(void *hostPtr);

/** Registers host memory with the device and returns its device address. */
aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr);

/** Registers host memory with `ACL_HOST_REG_*` flags. */
aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);

/** Returns the device address of registered host memory; `flag` must be 0. */
aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag);

/** Reports whether an accelerator of a device can access mapped host memory. */
aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType, aclrtHostMemMapCapability *capabilities);

/** Unregisters host memory registered by either register call. */
aclError aclrtHostUnregister(void *ptr);

/* ======================================================================== */
/* 3.6 Virtual memory management                                            */
/* ======================================================================== */

/** Allocates physical memory described by `prop`; `flags` must be 0. */
aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop, uint64_t flags);

/** Releases a physical allocation handle (pages go once the last mapping is removed). */
aclError aclrtFreePhysical(aclrtDrvMemHandle handle);

/** Reserves a virtual address range; `alignment` must be 0, `expectPtr` may be NULL. */
aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags);

/** Reserves a virtual address range without uncached memory at a caller-given address. */
aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags);

/** Releases a reserved virtual address range. */
aclError aclrtReleaseMemAddress(void *virPtr);

/** Maps a whole physical allocation at `virPtr`; `offset` and `flags` must be 0. */
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags);

/** Maps a physical allocation without access rights; set them with `aclrtMemSetAccess`. */
aclError aclrtMemMapNoAccess(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags);

/** Unmaps the mapping that starts at `virPtr`. */
aclError aclrtUnmapMem(void *virPtr);

/** Reports the allocation granularity for the given properties. */
aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions option, size_t *granularity);

/** Sets access rights of locations to a mapped range. */
aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count);

/** Reports the access flags a location has to a mapped address. */
aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag);

/** Returns the physical allocation handle mapped at an address (balance with `aclrtFreePhysical`). */
aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle);

/** Reports the properties of a physical allocation. */
aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle, aclrtPhysicalMemProp *prop);

/** Reports the base and size of the allocation containing `ptr`. */
aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize);

/** Maps a destination range onto a source range over the link `linkIdx`. */
aclError aclrtMemMapSelectedLink(void *virPtrDst, size_t size, void *virPtrSrc, uint32_t linkIdx);

/** Chooses the link for an imported physical allocation before it is mapped. */
aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType adviceLink);

/* ======================================================================== */
/* 3.7 Shareable handles                                                    */
/* ======================================================================== */

/** Exports a physical allocation as a shareable handle; `handleType` must be NONE. */
aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType, uint64_t flags, uint64_t *shareableHandle);

/** Sets the processes allowed to import a shareable handle. */
aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum);

/** Imports a shareable handle exported by another process onto a device. */
aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId, aclrtDrvMemHandle *handle);

/** Exports a physical allocation into a caller-owned handle buffer of the given type. */
aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags, aclrtMemSharedHandleType shareType, void *shareableHandle);

/** Sets the processes allowed to import a V2 shareable handle. */
aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType shareType, int32_t *pid, size_t pidNum);

/** Imports a V2 shareable handle onto the current device; `flags` must be 0. */
aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType shareType, uint64_t flags, aclrtDrvMemHandle *handle);

/* ======================================================================== */
/* 3.8 Key-based IPC memory                                                 */
/* ======================================================================== */

/** Exports device memory under a key written to `key` (`len` of 65 bytes). */
aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags);

/** Imports device memory exported under `key`. */
aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags);

/** Closes an imported key, or destroys an exported one. */
aclError aclrtIpcMemClose(const char *key);

/** Sets the processes allowed to import a key. */
aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num);

/** Sets the processes of other servers allowed to import a key. */
aclError aclrtIpcMemImportPidInterServer(const char *key, aclrtServerPid *serverPids, size_t num);

/** Sets an attribute (such as the access link) of a key. */
aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type, uint64_t attr);

/* ======================================================================== */
/* 3.9 Custom allocator                                                     */
/* ======================================================================== */

/** Creates an empty allocator descriptor, or returns NULL. */
aclrtAllocatorDesc aclrtAllocatorCreateDesc(void);

/** Destroys an allocator descriptor. */
aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc);

/** Stores the user allocator object in a descriptor. */
aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator);

/** Stores the allocation callback in a descriptor. */
aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocFunc func);

/** Stores the free callback in a descriptor. */
aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorFreeFunc func);

/** Stores the advised-allocation callback in a descriptor. */
aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func);

/** Stores the block-to-address callback in a descriptor. */
aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func);

/** Registers a copy of a descriptor as the allocator of a stream. */
aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc);

/** Reports the allocator registered for a stream; out-pointers other than `allocatorDesc` may be NULL. */
aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc, aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc, aclrtAllocatorFreeFunc *freeFunc, aclrtAllocatorAllocAdviseFunc *allocAdviseFunc, aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc);

/** Removes the allocator registered for a stream. */
aclError aclrtAllocatorUnregister(aclrtStream stream);

/* ---- cache maintenance and memory checks (hicann/runtime acl_rt.h) ---- */

/** Queues on `stream` a cache maintenance operation `cmoType` on `size` bytes of device memory at `src`. */
aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream);

/** As `aclrtCmoAsync`, with a logical barrier id (> 0 for `ACL_RT_CMO_TYPE_INVALID`, 0 for the others). */
aclError aclrtCmoAsyncWithBarrier(void *src, size_t size, aclrtCmoType cmoType, uint32_t barrierId, aclrtStream stream);

/** Queues on `stream` a wait for the barriers in `taskInfo`; `flag` is reserved (0). */
aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo *taskInfo, aclrtStream stream, uint32_t flag);

/** Writes the size in bytes of a cache maintenance descriptor. */
aclError aclrtCmoGetDescSize(size_t *size);

/** Writes into the descriptor at `cmoDesc` (device memory) the range `src`, `size`. */
aclError aclrtCmoSetDesc(void *cmoDesc, void *src, size_t size);

/** Queues on `stream` the operation `cmoType` on the range the descriptor `cmoDesc` holds; `reserve` is NULL. */
aclError aclrtCmoAsyncWithDesc(void *cmoDesc, aclrtCmoType cmoType, aclrtStream stream, const void *reserve);

/** Flushes the cached data of `size` bytes at `devPtr` to memory. */
aclError aclrtMemFlush(void *devPtr, size_t size);

/** Invalidates the cached data of `size` bytes at `devPtr`. */
aclError aclrtMemInvalidate(void *devPtr, size_t size);

/** Flushes the L2 cache of the current device; `rsv` is reserved (NULL). */
aclError aclrtDeviceL2CacheFlush(void *rsv);

/** Writes 1 to `checkResult` when every one of the `size` addresses is memory of a type in `memType`, else 0; `reserve` is 0. */
aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult, uint32_t reserve);

/** Maps `size` bytes of device memory at `devPtr` into the page table of device `dstDevId`; `flags` is reserved (0). */
aclError aclrtMemP2PMap(void *devPtr, size_t size, int32_t dstDevId, uint64_t flags);

/** Writes up to `arraySize` ranges of device `deviceId` with uncorrectable errors, and their number to `retSize`. */
aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize, size_t *retSize);

/** Repairs the `arraySize` ranges with uncorrectable errors given in `memUceInfoArray` (reserved fields 0). */
aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize);
/* ======================================================================== */
/* 3.11 Managed memory                                                      */
/* ======================================================================== */

/**
 * Allocates `size` bytes of managed (unified) memory, reachable from the host and every device;
 * `flag` must be `ACL_RT_MEM_ATTACH_GLOBAL`. Freed with `aclrtFree` (hicann/runtime acl_rt.h).
 */
aclError aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag);

/** Sets or clears advice for a range of managed memory (hicann/runtime acl_rt.h). */
aclError aclrtMemManagedAdvise(const void *const ptr, uint64_t size, aclrtMemManagedAdviseType advise, aclrtMemManagedLocation location);

/** Queries one attribute of a range of managed memory into `data` (`dataSize` bytes). */
aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void *ptr, size_t size, void *data, size_t dataSize);

/** Queries `numAttributes` attributes of a range of managed memory, each into `data[i]` (`dataSizes[i]` bytes). */
aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes, size_t numAttributes, const void *ptr, size_t size, void **data, size_t *dataSizes);

/** Queues on `stream` a prefetch of a range of managed memory to `location`; `flags` must be 0. */
aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size, aclrtMemManagedLocation location, uint32_t flags, aclrtStream stream);

/**
 * Queues on `stream` the prefetch of `count` ranges; `prefetchLocs[k]` applies to the ranges from
 * `prefetchLocIdxs[k]` to the next index (the last to `count - 1`); `flags` must be 0.
 */
aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs, size_t *sizes, size_t count, aclrtMemManagedLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, uint64_t flags, aclrtStream stream);
/* ---- 3.10 Stream-ordered memory pools (hicann/runtime include/external/acl/acl_rt_memory_soma.h) ---- */

/** A stream-ordered memory pool. */
typedef void *aclrtMemPool;

/** Attributes of a memory pool (reuse flags: uint32_t values; the others: uint64_t values). */
typedef enum aclrtMemPoolAttr {
    ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1,
    ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2,
    ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3,
    ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8
} aclrtMemPoolAttr;

/** Properties of a new memory pool: pinned device memory; `maxSize` 0 means the device's memory. */
typedef struct {
    aclrtMemAllocationType allocType;
    aclrtMemHandleType handleType;
    aclrtMemLocation location;
    size_t maxSize;
    unsigned char reserved[32];
} aclrtMemPoolProps;

/** Creates a stream-ordered memory pool. */
aclError aclrtMemPoolCreate(aclrtMemPool *memPool, const aclrtMemPoolProps *poolProps);

/** Destroys a memory pool. */
aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);

/** Sets an attribute of a memory pool (`value` points to a uint32_t or uint64_t, by attribute). */
aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value);

/** Reads an attribute of a memory pool (`value` points to a uint32_t or uint64_t, by attribute). */
aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value);

/** Allocates `size` bytes from a pool, ordered on `stream`. */
aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool, aclrtStream stream);

/** Gives memory back to its pool at `stream`'s position. */
aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream);

/** Releases idle cached memory of a pool down to `minBytesToKeep` reserved bytes. */
aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep);
/* ---- Mbuf (message buffers) ---- */

/** Gets the mbuf at `index` of the chain headed by `headBuf` (index 0 is the head). */
aclError aclrtGetBufFromChain(aclrtMbuf headBuf, uint32_t index, aclrtMbuf *buf);

/** Gets the number of mbufs in the chain headed by `headBuf`. */
aclError aclrtGetBufChainNum(aclrtMbuf headBuf, uint32_t *num);

/** Appends `buf` (and its own chain) to the end of the chain headed by `headBuf`. */
aclError aclrtAppendBufChain(aclrtMbuf headBuf, aclrtMbuf buf);

/** Creates a new mbuf header sharing the data area of `buf` (one more reference). */
aclError aclrtCopyBufRef(const aclrtMbuf buf, aclrtMbuf *newBuf);

/** Copies `size` bytes at `offset` of the user-data area (96 bytes) into `dataPtr`. */
aclError aclrtGetBufUserData(const aclrtMbuf buf, void *dataPtr, size_t size, size_t offset);

/** Copies `size` bytes from `dataPtr` into the user-data area (96 bytes) at `offset`. */
aclError aclrtSetBufUserData(aclrtMbuf buf, const void *dataPtr, size_t size, size_t offset);

/** Gets the address and capacity of the data area of `buf`. */
aclError aclrtGetBufData(const aclrtMbuf buf, void **dataPtr, size_t *size);

/** Gets the data length set by aclrtSetBufDataLen. */
aclError aclrtGetBufDataLen(aclrtMbuf buf, size_t *len);

/** Sets the data length (at most the capacity). */
aclError aclrtSetBufDataLen(aclrtMbuf buf, size_t len);

/** Frees an mbuf header (its chain with it) and drops its reference to the data area. */
aclError aclrtFreeBuf(aclrtMbuf buf);

/** Allocates an mbuf whose data area has `size` bytes. */
aclError aclrtAllocBuf(aclrtMbuf *buf, size_t size);

/* ===== Stream callbacks and host functions (issue 41, part 1) =========== */
/* Types and functions of this family, kept together; hicann/runtime       */
/* include/external/acl/acl_rt.h at 681ef7610.                              */

/** Whether a callback launched by aclrtLaunchCallback holds back the work queued after it. */
typedef enum aclrtCallbackBlockType {
    ACL_CALLBACK_NO_BLOCK = 0,
    ACL_CALLBACK_BLOCK = 1,
} aclrtCallbackBlockType;

/** The change of a stream a stream state callback is told about. */
typedef enum {
    ACL_RT_STREAM_STATE_CREATE_POST = 1,
    ACL_RT_STREAM_STATE_DESTROY_PRE = 2,
} aclrtStreamState;

/** Stream state callback: `stm` changed as `state` says; `args` as registered. */
typedef void (*aclrtStreamStateCallback)(aclrtStream stm, aclrtStreamState state, void *args);

/** The change of a device a device state callback is told about. */
typedef enum {
    ACL_RT_DEVICE_STATE_SET_PRE = 0,
    ACL_RT_DEVICE_STATE_SET_POST = 1,
    ACL_RT_DEVICE_STATE_RESET_PRE = 2,
    ACL_RT_DEVICE_STATE_RESET_POST = 3,
} aclrtDeviceState;

/** Device state callback: device `deviceId` changes as `state` says; `args` as registered. */
typedef void (*aclrtDeviceStateCallback)(int32_t deviceId, aclrtDeviceState state, void *args);

/** Makes thread `threadId` (its pthread_t) the one that runs the callbacks of `stream`. */
aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);

/** Queues `fn(userData)` on `stream`, run by its subscribed thread in aclrtProcessReport. */
aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType, aclrtStream stream);

/** Waits up to `timeout` ms (-1: no limit) for callbacks of the calling thread's streams and runs them. */
aclError aclrtProcessReport(int32_t timeout);

/** Ends the subscription of thread `threadId` to the callbacks of `stream`. */
aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);

/** Queues the host function `fn(args)` on `stream`; the work after it waits for it. */
aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args);

/** Makes thread `hostFuncThreadId` the one that runs the host functions of `exeStream`. */
aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream);

/** Waits up to `timeout` ms (-1: no limit) for host functions of the calling thread's streams and runs them. */
aclError aclrtProcessHostFunc(int32_t timeout);

/** Ends the subscription of thread `hostFuncThreadId` to the host functions of `exeStream`. */
aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream);

/** Registers (or, with a NULL callback, removes) the stream state callback named `regName`. */
aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback, void *args);

/** Registers (or, with a NULL callback, removes) the device state callback named `regName`. */
aclError aclrtRegDeviceStateCallback(const char *regName, aclrtDeviceStateCallback callback, void *args);

/* ===== end of stream callbacks and host functions ======================== */
/* ---- Notifies (aclrtCreateNotify ... aclrtCntNotify*; hicann/runtime acl_rt.h) ---- */

/** A notify: a one-bit signal one stream records and another waits for (and resets). */
typedef void *aclrtNotify;
/** A count notify: a 32-bit counter streams record into and wait on. */
typedef void *aclrtCntNotify;

/** `aclrtCreateNotify` flag: a notify the host uses (the default). */
static const uint64_t ACL_NOTIFY_DEFAULT = 0x0u;
/** `aclrtCreateNotify` flag: a notify only device-side code uses. */
static const uint64_t ACL_NOTIFY_DEVICE_USE_ONLY = 0x1u;
/** Notify export flag: default, the pid whitelist is enforced. */
static const uint64_t ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT = 0x0u;
/** Notify export flag: any process may import (no pid whitelist). */
static const uint64_t ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION = 0x2u;
/** Notify import flag: default. */
static const uint64_t ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT = 0x0u;
/** Notify import flag: enable peer access to the exporting device first. */
static const uint64_t ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS = 0x2u;

/** How `aclrtCntNotifyRecord` changes the counter. */
typedef enum {
    /** counter = value. */
    ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE = 0,
    /** counter += value. */
    ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE = 1,
    /** counter |= value. */
    ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE = 2,
    /** counter &= value. */
    ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE = 4,
} aclrtCntNotifyRecordMode;

/** What `aclrtCntNotifyWaitWithTimeout` waits for. */
typedef enum {
    /** counter < value. */
    ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE = 0,
    /** counter == value. */
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE = 1,
    /** counter > value. */
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE = 2,
    /** counter >= value. */
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE = 3,
    /** (counter & value) == value. */
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE = 4,
} aclrtCntNotifyWaitMode;

/** A record of a count notify. */
typedef struct {
    /** How the counter changes. */
    aclrtCntNotifyRecordMode mode;
    /** The operand. */
    uint32_t value;
} aclrtCntNotifyRecordInfo;

/** A wait on a count notify. */
typedef struct {
    /** The condition. */
    aclrtCntNotifyWaitMode mode;
    /** The operand. */
    uint32_t value;
    /** Seconds the stream waits at most (0: no limit). */
    uint32_t timeout;
    /** Whether the counter is cleared to 0 once the wait ends. */
    bool isClear;
    /** Reserved. */
    uint8_t rsv[3];
} aclrtCntNotifyWaitInfo;

/** Creates a notify on the current device (`flag`: ACL_NOTIFY_DEFAULT or ACL_NOTIFY_DEVICE_USE_ONLY). */
aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag);

/** Destroys a notify (created or imported). */
aclError aclrtDestroyNotify(aclrtNotify notify);

/** Queues on `stream` a task that sets the notify. */
aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream);

/** Queues on `stream` a wait until the notify is set, which then resets it (`timeout` in seconds, 0: no limit). */
aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout);

/** Gets the notify's id. */
aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId);

/** Resets `num` notifies at once (from the host). */
aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num);

/** Makes the notify an IPC notify and writes its key (at least 65 bytes of `key`). */
aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t flags);

/** Adds `num` process ids to the whitelist of an exported notify. */
aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num);

/** Adds processes of other servers to the whitelist of an exported notify. */
aclError aclrtNotifySetImportPidInterServer(aclrtNotify notify, aclrtServerPid *serverPids, size_t num);

/** Opens a notify another process exported, by its key. */
aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags);

/** Creates a count notify (`flag` reserved, 0). */
aclError aclrtCntNotifyCreate(aclrtCntNotify *cntNotify, uint64_t flag);

/** Destroys a count notify. */
aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify);

/** Queues on `stream` a task that changes the counter as `info` says. */
aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream, aclrtCntNotifyRecordInfo *info);

/** Queues on `stream` a wait until the counter meets the condition of `info`. */
aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify, aclrtStream stream, aclrtCntNotifyWaitInfo *info);

/** Queues on `stream` a task that clears the counter to 0. */
aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream);

/** Gets the count notify's id. */
aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t *notifyId);

/* ---- end of notifies ---- */
/* ======================================================================== */
/* Issue 41 part 3: device queries, event flags, stream abort and stop      */
/* (hicann/runtime include/external/acl/acl_rt.h). Kept in one block.       */
/* ======================================================================== */

/** A device attribute `aclrtGetDeviceInfo` reports (hicann/runtime acl_rt.h). */
typedef enum {
    /** Number of AI CPUs. */
    ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
    /** Number of AI cores. */
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
    /** Number of cube cores. */
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
    /** Number of vector cores. */
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
    /** Threads in a warp. */
    ACL_DEV_ATTR_WARP_SIZE = 202,
    /** Most threads running at once on one vector core. */
    ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
    /** Local (unified buffer) memory of one vector core, in bytes. */
    ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
    /** Largest grid size along x. */
    ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
    /** Largest grid size along y. */
    ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
    /** Largest grid size along z. */
    ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
    /** Most blocks in a grid. */
    ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
    /** Most threads in a block. */
    ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
    /** Largest block size along x. */
    ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
    /** Largest block size along y. */
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
    /** Largest block size along z. */
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
    /** Global memory of the device, in bytes. */
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
    /** L2 cache size, in bytes. */
    ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
    /** Identifies the OS the device runs under (devices sharing one report the same). */
    ACL_DEV_ATTR_SMP_ID = 401,
    /** Physical chip id. */
    ACL_DEV_ATTR_PHY_CHIP_ID = 402,
    /** Device id within its super pod. */
    ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403,
    /** Server id within its super pod. */
    ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404,
    /** Super pod id. */
    ACL_DEV_ATTR_SUPER_POD_ID = 405,
    /** 1 when custom operators run privileged. */
    ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406,
    /** Mainboard id. */
    ACL_DEV_ATTR_MAINBOARD_ID = 407,
    /** How the host reaches the device (`ACL_HOST_DEVICE_CONNECT_TYPE_*`). */
    ACL_DEV_ATTR_HD_CONNECT_TYPE = 408,
    /** Form factor of the device (`ACL_DEVICE_FORM_FACTOR_*`). */
    ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409,
    /** Chassis id within its super pod. */
    ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID = 410,
    /** 1 when the device is a compute-power split (virtual) device. */
    ACL_DEV_ATTR_IS_VIRTUAL = 501,
    /** NPU architecture number. */
    ACL_DEV_ATTR_NPU_ARCH = 601
} aclrtDevAttr;

/** Whether a device is usable (hicann/runtime acl_rt.h). */
typedef enum {
    /** The device works. */
    ACL_RT_DEVICE_STATUS_NORMAL = 0,
    /** The device is faulty. */
    ACL_RT_DEVICE_STATUS_ABNORMAL = 1,
    /** Reserved value. */
    ACL_RT_DEVICE_STATUS_END = 0xFFFF
} aclrtDeviceStatus;

/** Reserved extension of `aclrtUtilizationInfo` (must be NULL). */
typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;

/** Utilization of a device's units, in percent (hicann/runtime acl_rt.h). */
typedef struct aclrtUtilizationInfo {
    /** Cube cores. */
    int32_t cubeUtilization;
    /** Vector cores. */
    int32_t vectorUtilization;
    /** AI CPUs. */
    int32_t aicpuUtilization;
    /** Device memory. */
    int32_t memoryUtilization;
    /** Reserved: must be NULL. */
    aclrtUtilizationExtendInfo *utilizationExtend;
} aclrtUtilizationInfo;

/** `aclrtRecordEventWithFlag`: an ordinary record, as `aclrtRecordEvent`. */
static const uint32_t ACL_EVENT_RECORD_DEFAULT = 0x0u;
/** `aclrtRecordEventWithFlag`: a record visible outside a stream being captured into a graph. */
static const uint32_t ACL_EVENT_RECORD_EXTERNAL = 0x1u;
/** `aclrtStreamWaitEventWithFlag`: an ordinary wait, as `aclrtStreamWaitEventWithTimeout`. */
static const uint32_t ACL_EVENT_WAIT_DEFAULT = 0x0u;
/** `aclrtStreamWaitEventWithFlag`: a captured graph waits for an event outside it. */
static const uint32_t ACL_EVENT_WAIT_EXTERNAL = 0x1u;

/** Writes an attribute of device `deviceId` (hicann/runtime acl_rt.h). */
aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value);

/** Writes the lowest (numerically largest) and highest stream priorities (hicann/runtime acl_rt.h). */
aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority);

/** Writes the process's limit of a kind of core on device `deviceId` (hicann/runtime acl_rt.h). */
aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value);

/** Limits the cores of a kind the process's later work may use on device `deviceId` (hicann/runtime acl_rt.h). */
aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value);

/** Removes the process's core limits on device `deviceId` (hicann/runtime acl_rt.h). */
aclError aclrtResetDeviceResLimit(int32_t deviceId);

/** Writes whether device `deviceId` is usable (hicann/runtime acl_rt.h). */
aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus);

/** Writes the utilization of device `deviceId`'s units (hicann/runtime acl_rt.h). */
aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo);

/** Records `event` on `stream`, with `ACL_EVENT_RECORD_*` behaviour (hicann/runtime acl_rt.h). */
aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag);

/** Makes `stream` wait for `event` (timeout in seconds, 0: none), with `ACL_EVENT_WAIT_*` behaviour (hicann/runtime acl_rt.h). */
aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t timeout, uint32_t flag);

/** Writes the id of `event` (hicann/runtime acl_rt.h). */
aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId);

/** Writes how many more events the current device can create (hicann/runtime acl_rt.h). */
aclError aclrtGetEventAvailNum(uint32_t *eventCount);

/** Drops the tasks queued on `stream` and stops the one it runs (hicann/runtime acl_rt.h). */
aclError aclrtStreamAbort(aclrtStream stream);

/** Stops the tasks `stream` is running, without dropping them (hicann/runtime acl_rt.h). */
aclError aclrtStreamStop(aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_RS_ACL_MEMORY_H */
