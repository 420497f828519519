/* sanitize.c - planted stream hazards for the sanitizer (ASCEND_SOFT_SANITIZE), each
 * with a correctly synchronised twin.
 *
 * Usage: sanitize CASE
 *   CASE       runs the planted hazard: a race, a read of unwritten device memory, or
 *              synchronisation that orders nothing. Every call still succeeds; only the
 *              sanitizer can tell (run-c-tests.sh runs it with ASCEND_SOFT_SANITIZE=all
 *              ASCEND_SOFT_SANITIZE_EXITCODE=86 and expects exit code 86 and the report).
 *   CASE_ok    runs the twin: the same work, ordered as it must be; no report, exit 0.
 *   --list     prints the case names, one a line.
 *
 * Streams A and B are two created streams of device 0; the default stream is NULL. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define BYTES 4096u

static aclrtStream a, b;

/* ---- helpers ------------------------------------------------------------------- */

/* aclrtMalloc memory, freed by finish() after every stream is synchronised. */
#define MAX_OWNED 16
static void *owned[MAX_OWNED];
static int owned_count;

static void *device(size_t bytes) {
    void *pointer = NULL;
    CHECK(aclrtMalloc(&pointer, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(owned_count < MAX_OWNED);
    owned[owned_count++] = pointer;
    return pointer;
}

/* Device memory the host wrote with `value` (aclrtMemset). */
static void *device_filled(size_t bytes, int value) {
    void *pointer = device(bytes);
    CHECK(aclrtMemset(pointer, bytes, value, bytes));
    return pointer;
}

static aclrtEvent event(void) {
    aclrtEvent created = NULL;
    CHECK(aclrtCreateEvent(&created));
    return created;
}

/* Orders `to`'s later work after `from`'s work so far: an event recorded on `from`
 * that `to` waits for. */
static void order(aclrtStream from, aclrtStream to) {
    aclrtEvent between = event();
    CHECK(aclrtRecordEvent(between, from));
    CHECK(aclrtStreamWaitEvent(to, between));
    CHECK(aclrtDestroyEvent(between));
}

/* The first `bytes` bytes of device memory all equal `value` (a synchronous read of
 * the host: call it only once the writes are ordered before it). */
static void expect_bytes(const void *pointer, size_t bytes, uint8_t value) {
    static uint8_t host[BYTES];
    EXPECT(bytes <= sizeof host);
    memset(host, ~value, bytes);
    CHECK(aclrtMemcpy(host, sizeof host, pointer, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < bytes; i++) {
        EXPECT(host[i] == value);
    }
}

static size_t granularity(void) {
    aclrtPhysicalMemProp prop = device_prop();
    size_t value = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &value));
    EXPECT(value >= BYTES);
    return value;
}

static aclrtDrvMemHandle physical(size_t bytes) {
    aclrtPhysicalMemProp prop = device_prop();
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMallocPhysical(&handle, bytes, &prop, 0));
    return handle;
}

static void map(void *va, size_t bytes, aclrtDrvMemHandle handle) {
    CHECK(aclrtMapMem(va, bytes, 0, handle, 0));
    aclrtMemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    CHECK(aclrtMemSetAccess(va, bytes, &access, 1));
}

/* ---- races between two streams ------------------------------------------------- */

/* A and B memset the same bytes. */
static void ww_streams(int ok) {
    void *buf = device(BYTES);
    CHECK(aclrtMemsetAsync(buf, BYTES, 1, BYTES, a));
    if (ok) {
        order(a, b);
    }
    CHECK(aclrtMemsetAsync(buf, BYTES, 2, BYTES, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(buf, BYTES, 2);
    }
}

/* A and B memset the same bytes; A records a notify, which B waits for only in the twin. */
static void notify_streams(int ok) {
    void *buf = device(BYTES);
    aclrtNotify notify = NULL;
    CHECK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    CHECK(aclrtMemsetAsync(buf, BYTES, 1, BYTES, a));
    CHECK(aclrtRecordNotify(notify, a));
    if (ok) {
        CHECK(aclrtWaitAndResetNotify(notify, b, 0));
    }
    CHECK(aclrtMemsetAsync(buf, BYTES, 2, BYTES, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(buf, BYTES, 2);
    }
    CHECK(aclrtSynchronizeStream(a));
    CHECK(aclrtDestroyNotify(notify));
}

/* A writes, B copies from it. */
static void raw_streams(int ok) {
    void *src = device(BYTES), *dst = device(BYTES);
    CHECK(aclrtMemsetAsync(src, BYTES, 3, BYTES, a));
    if (ok) {
        order(a, b);
    }
    CHECK(aclrtMemcpyAsync(dst, BYTES, src, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(dst, BYTES, 3);
    }
}

/* A copies from buf, B overwrites buf. */
static void war_streams(int ok) {
    void *buf = device_filled(BYTES, 4), *out = device(BYTES);
    CHECK(aclrtMemcpyAsync(out, BYTES, buf, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, a));
    if (ok) {
        order(a, b);
    }
    CHECK(aclrtMemsetAsync(buf, BYTES, 5, BYTES, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(a));
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(out, BYTES, 4);
        expect_bytes(buf, BYTES, 5);
    }
}

/* A writes the whole buffer, B copies a 16 x 64 window of it (2-D). */
static void copy2d_streams(int ok) {
    void *buf = device(BYTES), *out = device(BYTES);
    CHECK(aclrtMemsetAsync(buf, BYTES, 0xAB, BYTES, a));
    if (ok) {
        order(a, b);
    }
    CHECK(aclrtMemcpy2dAsync(out, 64, buf, 128, 64, 16, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(out, 64 * 16, 0xAB);
    }
}

/* The default stream (NULL) and stream A write the same bytes. */
static void default_stream(int ok) {
    void *buf = device(BYTES);
    CHECK(aclrtMemsetAsync(buf, BYTES, 0x88, BYTES, NULL));
    if (ok) {
        order(NULL, a);
    }
    CHECK(aclrtMemsetAsync(buf, BYTES, 0x99, BYTES, a));
    if (ok) {
        CHECK(aclrtSynchronizeStream(a));
        expect_bytes(buf, BYTES, 0x99);
    }
}

/* A writes x and records e; B waits for e; A writes x again; B reads x. The wait
 * orders B after the first write only. The twin's second write goes elsewhere. */
static void event_reused(int ok) {
    void *x = device(BYTES), *y = device(BYTES), *out = device(BYTES);
    aclrtEvent e = event();
    CHECK(aclrtMemsetAsync(x, BYTES, 0x66, BYTES, a));
    CHECK(aclrtRecordEvent(e, a));
    CHECK(aclrtStreamWaitEvent(b, e));
    CHECK(aclrtMemsetAsync(ok ? y : x, BYTES, 0x77, BYTES, a));
    CHECK(aclrtMemcpyAsync(out, BYTES, x, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(out, BYTES, 0x66);
    }
    CHECK(aclrtSynchronizeStream(a));
    CHECK(aclrtSynchronizeStream(b));
    CHECK(aclrtDestroyEvent(e));
}

/* Double buffering: A fills buffer i % 2 and records ready[i % 2]; B waits for it,
 * copies the buffer out and records done[i % 2]. Before refilling a buffer, A must wait
 * for done of that buffer (the hazard does not: A's refill races with B's copy two
 * iterations earlier). Then the host reads the result after synchronising B. */
static void double_buffer(int ok) {
    enum { ITERATIONS = 6 };
    void *buf[2] = {device(BYTES), device(BYTES)}, *out = device(BYTES);
    aclrtEvent ready[2] = {event(), event()}, done[2] = {event(), event()};
    for (int i = 0; i < ITERATIONS; i++) {
        int k = i % 2;
        if (ok && i >= 2) {
            CHECK(aclrtStreamWaitEvent(a, done[k]));
        }
        CHECK(aclrtMemsetAsync(buf[k], BYTES, i + 1, BYTES, a));
        CHECK(aclrtRecordEvent(ready[k], a));
        CHECK(aclrtStreamWaitEvent(b, ready[k]));
        CHECK(aclrtMemcpyAsync(out, BYTES, buf[k], BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
        CHECK(aclrtRecordEvent(done[k], b));
    }
    CHECK(aclrtSynchronizeStream(b));
    expect_bytes(out, BYTES, ITERATIONS);
    CHECK(aclrtSynchronizeStream(a));
    for (int k = 0; k < 2; k++) {
        CHECK(aclrtDestroyEvent(ready[k]));
        CHECK(aclrtDestroyEvent(done[k]));
    }
}

/* ---- races between a stream and the host --------------------------------------- */

/* A memsets, the host copies the bytes out at once. The twin synchronises A first
 * (a host read after aclrtSynchronizeStream). */
static void host_read_queued_write(int ok) {
    void *buf = device(BYTES);
    static uint8_t host[BYTES];
    CHECK(aclrtMemsetAsync(buf, BYTES, 6, BYTES, a));
    if (ok) {
        CHECK(aclrtSynchronizeStream(a));
    }
    CHECK(aclrtMemcpy(host, sizeof host, buf, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    if (ok) {
        for (size_t i = 0; i < BYTES; i++) {
            EXPECT(host[i] == 6);
        }
    }
}

/* A copies from buf, the host memsets buf at once. */
static void host_write_queued_read(int ok) {
    void *buf = device_filled(BYTES, 7), *out = device(BYTES);
    CHECK(aclrtMemcpyAsync(out, BYTES, buf, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, a));
    if (ok) {
        CHECK(aclrtSynchronizeStream(a));
    }
    CHECK(aclrtMemset(buf, BYTES, 8, BYTES));
    if (ok) {
        expect_bytes(out, BYTES, 7);
        expect_bytes(buf, BYTES, 8);
    }
}

/* A copies device memory into pinned host memory; the host copies that pinned buffer
 * to the device at once. The twin waits for an event recorded after the copy. */
static void pinned_d2h_then_h2d(int ok) {
    void *src = device_filled(BYTES, 9), *dst = device(BYTES);
    uint8_t *pinned = NULL;
    CHECK(aclrtMallocHost((void **)&pinned, BYTES));
    CHECK(aclrtMemcpyAsync(pinned, BYTES, src, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, a));
    if (ok) {
        aclrtEvent copied = event();
        CHECK(aclrtRecordEvent(copied, a));
        CHECK(aclrtSynchronizeEvent(copied));
        CHECK(aclrtDestroyEvent(copied));
        EXPECT(pinned[0] == 9 && pinned[BYTES - 1] == 9);
    }
    CHECK(aclrtMemcpy(dst, BYTES, pinned, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    if (ok) {
        expect_bytes(dst, BYTES, 9);
    }
    CHECK(aclrtSynchronizeStream(a));
    CHECK(aclrtFreeHost(pinned));
}

/* A memsets, the host frees the memory at once. The twin frees with
 * aclrtFreeWithDevSync, which waits for the device first. */
static void free_while_queued(int ok) {
    void *buf = NULL;
    CHECK(aclrtMalloc(&buf, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemsetAsync(buf, BYTES, 0x10, BYTES, a));
    if (ok) {
        CHECK(aclrtFreeWithDevSync(buf));
        CHECK(aclrtSynchronizeStream(a));
    } else {
        CHECK(aclrtFree(buf));
        /* The memset may run after the free and fail (its memory is gone): the
         * synchronisation then reports it, as on hardware. */
        aclError rc = aclrtSynchronizeStream(a);
        EXPECT(rc == ACL_SUCCESS || rc == ACL_ERROR_RT_SYS_DMA);
    }
}

/* ---- reads of unwritten memory ------------------------------------------------- */

/* aclrtMalloc, then a copy to the host of bytes nothing wrote. */
static void uninit_d2h(int ok) {
    void *buf = device(BYTES);
    static uint8_t host[BYTES];
    if (ok) {
        CHECK(aclrtMemset(buf, BYTES, 0x11, BYTES));
    }
    CHECK(aclrtMemcpy(host, sizeof host, buf, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    if (ok) {
        EXPECT(host[0] == 0x11 && host[BYTES - 1] == 0x11);
    }
}

/* Physical memory reserved and mapped, then a device-to-device copy from it before
 * anything wrote it. The twin writes it first, then unmaps and maps it again: the
 * bytes are still written. */
static void uninit_vmm(int ok) {
    size_t chunk = granularity();
    aclrtDrvMemHandle handle = physical(chunk);
    void *va = NULL, *out = device(BYTES);
    CHECK(aclrtReserveMemAddress(&va, chunk, 0, NULL, 0));
    map(va, chunk, handle);
    if (ok) {
        CHECK(aclrtMemset(va, chunk, 0x22, BYTES));
    }
    CHECK(aclrtMemcpy(out, BYTES, va, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE));
    if (ok) {
        expect_bytes(out, BYTES, 0x22);
        CHECK(aclrtUnmapMem(va));
        map(va, chunk, handle);
        CHECK(aclrtMemset(out, BYTES, 0, BYTES));
        CHECK(aclrtMemcpy(out, BYTES, va, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE));
        expect_bytes(out, BYTES, 0x22);
    }
    CHECK(aclrtUnmapMem(va));
    CHECK(aclrtFreePhysical(handle));
    CHECK(aclrtReleaseMemAddress(va));
}

/* One physical allocation mapped at two addresses: A writes through the first, B
 * reads through the second. The sanitizer sees the same bytes. */
static void vmm_alias(int ok) {
    size_t chunk = granularity();
    aclrtDrvMemHandle handle = physical(chunk);
    void *base = NULL, *out = device(BYTES);
    CHECK(aclrtReserveMemAddress(&base, 2 * chunk, 0, NULL, 0));
    void *alias = (char *)base + chunk;
    map(base, chunk, handle);
    map(alias, chunk, handle);
    CHECK(aclrtMemsetAsync(base, chunk, 0x33, BYTES, a));
    if (ok) {
        order(a, b);
    }
    CHECK(aclrtMemcpyAsync(out, BYTES, alias, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(out, BYTES, 0x33);
    }
    CHECK(aclrtSynchronizeStream(a));
    CHECK(aclrtSynchronizeStream(b));
    CHECK(aclrtUnmapMem(alias));
    CHECK(aclrtUnmapMem(base));
    CHECK(aclrtFreePhysical(handle));
    CHECK(aclrtReleaseMemAddress(base));
}

/* ---- synchronisation that orders nothing --------------------------------------- */

/* B waits for an aclrtCreateEventExWithFlag event nobody recorded (a no-op), then
 * reads what A writes. The twin records it on A after the write. */
static void wait_unrecorded(int ok) {
    void *buf = device(BYTES), *out = device(BYTES);
    aclrtEvent e = NULL;
    CHECK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC));
    CHECK(aclrtMemsetAsync(buf, BYTES, 0x44, BYTES, a));
    if (ok) {
        CHECK(aclrtRecordEvent(e, a));
    }
    CHECK(aclrtStreamWaitEvent(b, e));
    CHECK(aclrtMemcpyAsync(out, BYTES, buf, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    if (ok) {
        CHECK(aclrtSynchronizeStream(b));
        expect_bytes(out, BYTES, 0x44);
    }
    CHECK(aclrtSynchronizeStream(a));
    CHECK(aclrtSynchronizeStream(b));
    CHECK(aclrtDestroyEvent(e));
}

/* The host synchronises with an event nobody recorded (it returns at once), then
 * reads what A writes. The twin records it on A after the write. */
static void sync_unrecorded(int ok) {
    void *buf = device(BYTES);
    static uint8_t host[BYTES];
    aclrtEvent e = event();
    CHECK(aclrtMemsetAsync(buf, BYTES, 0x55, BYTES, a));
    if (ok) {
        CHECK(aclrtRecordEvent(e, a));
    }
    CHECK(aclrtSynchronizeEvent(e));
    CHECK(aclrtMemcpy(host, sizeof host, buf, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    if (ok) {
        EXPECT(host[0] == 0x55 && host[BYTES - 1] == 0x55);
    }
    CHECK(aclrtSynchronizeStream(a));
    CHECK(aclrtDestroyEvent(e));
}

/* ---- the driver ---------------------------------------------------------------- */

struct sanitize_case {
    const char *name;
    void (*run)(int ok);
};

static const struct sanitize_case cases[] = {
    {"ww_streams", ww_streams},
    {"notify_streams", notify_streams},
    {"raw_streams", raw_streams},
    {"war_streams", war_streams},
    {"copy2d_streams", copy2d_streams},
    {"default_stream", default_stream},
    {"event_reused", event_reused},
    {"double_buffer", double_buffer},
    {"host_read_queued_write", host_read_queued_write},
    {"host_write_queued_read", host_write_queued_read},
    {"pinned_d2h_then_h2d", pinned_d2h_then_h2d},
    {"free_while_queued", free_while_queued},
    {"uninit_d2h", uninit_d2h},
    {"uninit_vmm", uninit_vmm},
    {"vmm_alias", vmm_alias},
    {"wait_unrecorded", wait_unrecorded},
    {"sync_unrecorded", sync_unrecorded},
};

static const size_t case_count = sizeof cases / sizeof cases[0];

/* Waits for every stream, then gives everything back. */
static void finish(void) {
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclrtDestroyStream(b));
    CHECK(aclrtDestroyStream(a));
    for (int i = owned_count - 1; i >= 0; i--) {
        CHECK(aclrtFree(owned[i]));
    }
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE | CASE_ok | --list\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < case_count; i++) {
            printf("%s\n", cases[i].name);
        }
        return 0;
    }
    const char *name = argv[1];
    size_t length = strlen(name);
    int ok = length > 3 && strcmp(name + length - 3, "_ok") == 0;
    if (ok) {
        length -= 3;
    }
    const struct sanitize_case *chosen = NULL;
    for (size_t i = 0; i < case_count; i++) {
        if (strlen(cases[i].name) == length && strncmp(cases[i].name, name, length) == 0) {
            chosen = &cases[i];
        }
    }
    if (chosen == NULL) {
        fprintf(stderr, "%s: no case %s (--list lists them)\n", argv[0], name);
        return 2;
    }

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&a));
    CHECK(aclrtCreateStream(&b));
    chosen->run(ok);
    /* Printed before aclFinalize, which ends the process when the sanitizer reported. */
    printf("sanitize %s: done\n", name);
    fflush(stdout);
    finish();
    return 0;
}
