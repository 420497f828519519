/*
 * fake_acl.c - a stand-in for libascendcl.so, used by tests/hardware_path.rs
 * to exercise the crate's hardware path (dlopen, lazy symbol lookup, argument
 * passing, return values) on a machine with no NPU and no CANN toolkit.
 *
 * It exports a handful of AscendCL functions with the exact C signatures of
 * include/acl_memory.h (included below, so the compiler checks them) and
 * deliberately does NOT export the others, in particular
 * `aclrtMemMapNoAccess` and `aclrtReserveMemAddress`, so that the crate's
 * "missing symbol" path can be tested.
 *
 * Every exported function appends one line to the file named by the
 * environment variable FAKE_ACL_LOG (when set): the function's name, then
 * `name=value` for every argument in order; pointers are printed as
 * lower-case hex with a 0x prefix (NULL is 0x0), integers in decimal.
 * Return values are distinctive so the test can tell them apart from the
 * software device's.
 *
 * Built by the test itself: cc -shared -fPIC -O0 -I ascend-sys/include
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl_memory.h"

/* Device count reported by aclrtGetDeviceCount; aclrtSetDevice refuses ids >= this. */
#define FAKE_DEVICE_COUNT 7
/* Base of the fake device pointers handed out by aclrtMalloc (base + size). */
#define FAKE_DEVICE_BASE ((uintptr_t)0xdead0000u)
/* What aclrtSetDevice returns for an id it does not have (the library's own code). */
#define FAKE_INVALID_DEVICE 107001

#ifdef FAKE_ACL_SOFTWARE_MARKER
/* Built with -DFAKE_ACL_SOFTWARE_MARKER, this library carries the marker symbol of
 * ascend-rs's own software-device library (ascend_sys::SOFTWARE_LIBRARY_MARKER), which
 * the loader must refuse to use as the hardware backend. */
const int ascend_rs_software_device = 1;
#endif

/* Appends one formatted line to $FAKE_ACL_LOG (nothing when it is unset). */
static void fake_log(const char *format, ...) {
    const char *path = getenv("FAKE_ACL_LOG");
    if (path == NULL || path[0] == '\0') {
        return;
    }
    FILE *file = fopen(path, "a");
    if (file == NULL) {
        return;
    }
    va_list args;
    va_start(args, format);
    vfprintf(file, format, args);
    va_end(args);
    fputc('\n', file);
    fclose(file);
}

/* A pointer as the log prints it. */
#define P(pointer) ((uintptr_t)(const void *)(pointer))
#define PTR "0x%" PRIxPTR

aclError aclInit(const char *configPath) {
    fake_log("aclInit configPath=" PTR, P(configPath));
    return ACL_SUCCESS;
}

aclError aclFinalize(void) {
    fake_log("aclFinalize");
    return ACL_SUCCESS;
}

const char *aclGetRecentErrMsg(void) {
    fake_log("aclGetRecentErrMsg");
    return "fake library message";
}

const char *aclrtGetSocName(void) {
    fake_log("aclrtGetSocName");
    return "FakeAscend910";
}

aclError aclrtSetDevice(int32_t deviceId) {
    fake_log("aclrtSetDevice deviceId=%" PRId32, deviceId);
    if (deviceId < 0 || deviceId >= FAKE_DEVICE_COUNT) {
        return FAKE_INVALID_DEVICE;
    }
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count) {
    fake_log("aclrtGetDeviceCount count=" PTR, P(count));
    if (count != NULL) {
        *count = FAKE_DEVICE_COUNT;
    }
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    fake_log("aclrtMalloc devPtr=" PTR " size=%zu policy=%d", P(devPtr), size, (int)policy);
    if (devPtr != NULL) {
        *devPtr = (void *)(FAKE_DEVICE_BASE + (uintptr_t)size);
    }
    return ACL_SUCCESS;
}

/* Records its arguments only: it never reads `src` nor writes `dst`. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
    fake_log("aclrtMemcpy dst=" PTR " destMax=%zu src=" PTR " count=%zu kind=%d", P(dst), destMax, P(src), count,
             (int)kind);
    return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr) {
    fake_log("aclrtFree devPtr=" PTR, P(devPtr));
    return ACL_SUCCESS;
}

/* Records its arguments only: nothing is mapped. */
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
    fake_log("aclrtMapMem virPtr=" PTR " size=%zu offset=%zu handle=" PTR " flags=%" PRIu64, P(virPtr), size, offset,
             P(handle), flags);
    return ACL_SUCCESS;
}
