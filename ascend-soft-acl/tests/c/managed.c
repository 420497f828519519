/* managed.c - managed memory through the installed tree: aclrtMemAllocManaged (the host and
 * the device see the same bytes), aclrtMemManagedAdvise and the attributes it sets,
 * aclrtMemManagedGetAttr(s), aclrtMemManagedPrefetchAsync and
 * aclrtMemManagedPrefetchBatchAsync (validated, ordered on the stream, moving nothing),
 * aclrtFree; one bad argument at least for each. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define SIZE 4096u

static aclrtMemManagedLocation location(aclrtMemManagedLocationType type, int32_t id) {
    aclrtMemManagedLocation where;
    where.type = type;
    where.id = id;
    return where;
}

static int32_t attribute(aclrtMemManagedRangeAttribute which, const void *ptr, size_t size) {
    int32_t value = 12345;
    CHECK(aclrtMemManagedGetAttr(which, ptr, size, &value, sizeof value));
    return value;
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtMemManagedLocation device0 = location(ACL_MEM_LOCATIONTYPE_DEVICE, 0);
    aclrtMemManagedLocation host = location(ACL_MEM_LOCATIONTYPE_HOST, 0);

    /* Allocation: the flag must be ACL_RT_MEM_ATTACH_GLOBAL; size 0 is the runtime's check. */
    uint8_t *managed = NULL;
    CHECK_RC(aclrtMemAllocManaged((void **)&managed, SIZE, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemAllocManaged(NULL, SIZE, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemAllocManaged((void **)&managed, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemAllocManaged((void **)&managed, SIZE, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT(managed != NULL);

    /* The host writes, the device reads; the device writes, the host reads. */
    for (uint32_t i = 0; i < SIZE; i++) {
        managed[i] = (uint8_t)(i * 5 + 1);
    }
    uint8_t out[SIZE];
    CHECK(aclrtMemcpy(out, SIZE, managed, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(out, managed, SIZE) == 0);
    CHECK(aclrtMemset(managed, SIZE, 0x5A, 100));
    EXPECT(managed[0] == 0x5A && managed[99] == 0x5A && managed[100] == (uint8_t)(100 * 5 + 1));
    aclrtPtrAttributes attributes;
    CHECK(aclrtPointerGetAttributes(managed, &attributes));
    EXPECT(attributes.location.type == ACL_MEM_LOCATION_TYPE_MANAGED);

    /* Advice, read back through the attributes. */
    CHECK_RC(aclrtMemManagedAdvise(managed, 0, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemManagedAdvise(managed, SIZE, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
                                   location(ACL_MEM_LOCATIONTYPE_DEVICE, 1000)),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemManagedAdvise(managed, SIZE, ACL_MEM_ADVISE_SET_READ_MOSTLY, host));
    CHECK(aclrtMemManagedAdvise(managed, SIZE, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device0));
    CHECK(aclrtMemManagedAdvise(managed, SIZE, ACL_MEM_ADVISE_SET_ACCESSED_BY, device0));
    EXPECT(attribute(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, SIZE) == 1);
    EXPECT(attribute(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed, SIZE) == 0);
    EXPECT(attribute(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, managed, SIZE) ==
           (int32_t)ACL_MEM_LOCATIONTYPE_DEVICE);
    int32_t value = 0;
    CHECK_RC(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, SIZE, NULL, 4),
             ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemManagedGetAttr((aclrtMemManagedRangeAttribute)0, managed, SIZE, &value, 4),
             ACL_ERROR_RT_PARAM_INVALID);

    /* Several at once: accessed-by is an array, padded with -2. */
    aclrtMemManagedRangeAttribute which[2] = {ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                                              ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
    int32_t accessed[4] = {7, 7, 7, 7};
    int32_t prefetched = 7;
    void *data[2] = {accessed, &prefetched};
    size_t sizes[2] = {sizeof accessed, sizeof prefetched};
    CHECK(aclrtMemManagedGetAttrs(which, 2, managed, SIZE, data, sizes));
    EXPECT(accessed[0] == 0 && accessed[1] == -2 && accessed[3] == -2);
    EXPECT(prefetched == -2);
    CHECK_RC(aclrtMemManagedGetAttrs(which, 2, managed, SIZE, data, NULL), ACL_ERROR_INVALID_PARAM);

    /* A prefetch: checked, ordered between a memset and a copy, moving nothing. */
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    CHECK_RC(aclrtMemManagedPrefetchAsync(managed, SIZE, device0, 1, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemManagedPrefetchAsync(managed, SIZE, location(ACL_MEM_LOCATIONTYPE_INVALID, 0), 0, stream),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtMemsetAsync(managed, SIZE, 0x11, SIZE, stream));
    CHECK(aclrtMemManagedPrefetchAsync(managed, SIZE, host, 0, stream));
    CHECK(aclrtMemcpyAsync(out, SIZE, managed, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(out[0] == 0x11 && out[SIZE - 1] == 0x11 && managed[SIZE / 2] == 0x11);
    EXPECT(attribute(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, managed, SIZE) == -1);

    /* A batch: the first two ranges to device 0, the last to the host (advice and prefetches
     * apply to whole 2 MiB pages: one range per page). */
    uint8_t *big = NULL;
    CHECK(aclrtMemAllocManaged((void **)&big, 3u << 21, ACL_RT_MEM_ATTACH_GLOBAL));
    const void *ptrs[3] = {big, big + (1u << 21), big + (2u << 21)};
    size_t lengths[3] = {1024, 1024, 1024};
    aclrtMemManagedLocation targets[2] = {device0, host};
    size_t starts[2] = {0, 2};
    size_t bad_starts[2] = {1, 2};
    CHECK_RC(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 3, targets, bad_starts, 2, 0, stream),
             ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 1, targets, starts, 2, 0, stream),
             ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 3, targets, starts, 2, 0, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(attribute(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, big, 2u << 21) == 0);
    EXPECT(attribute(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, big + (2u << 21), 1024) == -1);
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtFree(big));

    /* aclrtFree frees it, once. */
    CHECK(aclrtFree(managed));
    CHECK_RC(aclrtFree(managed), ACL_ERROR_RT_PARAM_INVALID);

    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("managed: ok\n");
    return 0;
}
