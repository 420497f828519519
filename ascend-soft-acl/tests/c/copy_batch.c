/* copy_batch.c - the batch copies (aclrtMemcpyBatch, aclrtMemcpyBatchV2, aclrtMemcpyBatchAsync,
 * aclrtMemcpyBatchAsyncV2), the offset copy (aclrtMemcpyAsyncWithOffset), the memory-copy
 * descriptors (aclrtGetMemcpyDescSize, aclrtSetMemcpyDesc, aclrtMemcpyAsyncWithDesc) and
 * aclrtMemcpyAsyncWithCondition, each with its data checked and at least one refused argument. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define SIZE 256

static aclrtMemcpyBatchAttr attr(aclrtMemLocationType dst, aclrtMemLocationType src) {
    aclrtMemcpyBatchAttr value;
    memset(&value, 0, sizeof value);
    value.dstLoc.type = dst;
    value.dstLoc.id = 0;
    value.srcLoc.type = src;
    value.srcLoc.id = 0;
    return value;
}

static void expect_bytes(const uint8_t *bytes, size_t len, uint8_t value) {
    for (size_t i = 0; i < len; i++) {
        EXPECT(bytes[i] == value);
    }
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));

    uint8_t *host = NULL, *back = NULL;
    CHECK(aclrtMallocHost((void **)&host, SIZE));
    CHECK(aclrtMallocHost((void **)&back, SIZE));
    void *a = NULL, *b = NULL;
    CHECK(aclrtMalloc(&a, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    memset(host, 0x11, SIZE / 2);
    memset(host + SIZE / 2, 0x22, SIZE / 2);
    CHECK(aclrtMemset(a, SIZE, 0, SIZE));
    CHECK(aclrtMemset(b, SIZE, 0, SIZE));

    /* Synchronous batch: two host-to-device entries. */
    void *dsts[2] = {a, b};
    void *srcs[2] = {host, host + SIZE / 2};
    size_t sizes[2] = {SIZE / 2, SIZE / 2};
    size_t maxes[2] = {SIZE, SIZE};
    aclrtMemcpyBatchAttr h2d = attr(ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST);
    aclrtMemcpyBatchAttr d2h = attr(ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE);
    size_t starts[1] = {0};
    size_t fail_index = 0;
    CHECK(aclrtMemcpyBatch(dsts, maxes, srcs, sizes, 2, &h2d, starts, 1, &fail_index));
    EXPECT(fail_index == SIZE_MAX);
    /* Refused: NULL failIndex (ACL layer); an attribute that does not match entry 1. */
    CHECK_RC(aclrtMemcpyBatch(dsts, maxes, srcs, sizes, 2, &h2d, starts, 1, NULL), ACL_ERROR_INVALID_PARAM);
    aclrtMemcpyBatchAttr two[2] = {h2d, d2h};
    size_t two_starts[2] = {0, 1};
    CHECK_RC(aclrtMemcpyBatch(dsts, maxes, srcs, sizes, 2, two, two_starts, 2, &fail_index),
             ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(fail_index == 1);

    /* V2: device to host. */
    void *back_dsts[2] = {back, back + SIZE / 2};
    void *back_srcs[2] = {a, b};
    CHECK(aclrtMemcpyBatchV2(back_dsts, maxes, back_srcs, sizes, 2, &d2h, starts, 1));
    expect_bytes(back, SIZE / 2, 0x11);
    expect_bytes(back + SIZE / 2, SIZE / 2, 0x22);
    CHECK_RC(aclrtMemcpyBatchV2(back_dsts, maxes, back_srcs, sizes, 0, &d2h, starts, 1), ACL_ERROR_INVALID_PARAM);

    /* Asynchronous batch, then its V2 reading back. */
    memset(host, 0x33, SIZE);
    CHECK(aclrtMemcpyBatchAsync(dsts, maxes, srcs, sizes, 2, &h2d, starts, 1, &fail_index, stream));
    EXPECT(fail_index == SIZE_MAX);
    CHECK(aclrtMemcpyBatchAsyncV2(back_dsts, maxes, back_srcs, sizes, 2, &d2h, starts, 1, stream));
    CHECK(aclrtSynchronizeStream(stream));
    expect_bytes(back, SIZE, 0x33);
    size_t zero_sizes[2] = {SIZE / 2, 0};
    CHECK_RC(aclrtMemcpyBatchAsync(dsts, maxes, srcs, zero_sizes, 2, &h2d, starts, 1, &fail_index, stream),
             ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(fail_index == 1);
    aclrtMemcpyBatchAttr reserved = h2d;
    reserved.rsv[3] = 1;
    CHECK_RC(aclrtMemcpyBatchAsyncV2(dsts, maxes, srcs, sizes, 2, &reserved, starts, 1, stream),
             ACL_ERROR_INVALID_PARAM);

    /* The offset copy: two pointers in device memory, read when the copy runs. */
    void *dst_slot = NULL, *src_slot = NULL;
    CHECK(aclrtMalloc(&dst_slot, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&src_slot, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    uint64_t address = (uint64_t)(uintptr_t)b;
    CHECK(aclrtMemcpy(dst_slot, 8, &address, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    address = (uint64_t)(uintptr_t)a;
    CHECK(aclrtMemcpy(src_slot, 8, &address, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemset(a, SIZE, 0x44, SIZE));
    CHECK(aclrtMemset(b, SIZE, 0, SIZE));
    CHECK(aclrtMemcpyAsyncWithOffset((void **)dst_slot, SIZE, 16, (const void **)src_slot, 32, 0,
                                     ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(back, SIZE, b, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    expect_bytes(back, 16, 0);
    expect_bytes(back + 16, 32, 0x44);
    expect_bytes(back + 48, SIZE - 48, 0);
    CHECK_RC(aclrtMemcpyAsyncWithOffset((void **)dst_slot, SIZE, SIZE, (const void **)src_slot, 8, 0,
                                        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream),
             ACL_ERROR_RT_PARAM_INVALID);

    /* Descriptors. */
    size_t desc_size = 0;
    CHECK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &desc_size));
    EXPECT(desc_size == 32);
    CHECK_RC(aclrtGetMemcpyDescSize(ACL_MEMCPY_HOST_TO_DEVICE, &desc_size), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    void *desc = NULL;
    CHECK(aclrtMalloc(&desc, desc_size, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT((uintptr_t)desc % 64 == 0);
    CHECK(aclrtMemset(b, SIZE, 0, SIZE));
    CHECK(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 64, NULL));
    CHECK_RC(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 64, desc), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, host, b, 64, NULL),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream));
    CHECK_RC(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(back, SIZE, b, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    expect_bytes(back, 64, 0x44);
    expect_bytes(back + 64, SIZE - 64, 0);

    /* The condition copy: aclrtMemcpyAsync with the page-locked check. */
    memset(host, 0x55, SIZE);
    CHECK(aclrtMemcpyAsyncWithCondition(b, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(back, SIZE, b, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    expect_bytes(back, SIZE, 0x55);
    CHECK_RC(aclrtMemcpyAsyncWithCondition(NULL, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, stream),
             ACL_ERROR_INVALID_PARAM);

    CHECK(aclrtFree(desc));
    CHECK(aclrtFree(dst_slot));
    CHECK(aclrtFree(src_slot));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtFreeHost(back));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
