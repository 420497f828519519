/* mem_pool.c - the stream-ordered memory pool (aclrtMemPool*, acl/acl_rt_memory_soma.h):
 * every function once with a bad argument and its code, then a pool's life: allocations
 * ordered on a stream, data through them, reuse on the freeing stream, the attributes,
 * trimming, maxSize, and destruction. */
#include <stdint.h>
#include <string.h>

#include "acl/acl_rt_memory_soma.h"
#include "check.h"

#define MIB2 ((size_t)2 << 20)

static aclrtMemPoolProps pool_props(size_t max_size) {
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = max_size;
    return props;
}

static uint64_t attr_u64(aclrtMemPool pool, aclrtMemPoolAttr attr) {
    uint64_t value = 0;
    CHECK(aclrtMemPoolGetAttr(pool, attr, &value));
    return value;
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));

    /* Bad arguments, each with its code. */
    aclrtMemPoolProps props = pool_props(2 * MIB2);
    aclrtMemPool pool = NULL;
    CHECK_RC(aclrtMemPoolCreate(NULL, &props), ACL_ERROR_INVALID_PARAM);
    props.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    CHECK_RC(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM);
    props = pool_props(2 * MIB2);
    CHECK_RC(aclrtMemPoolDestroy(NULL), ACL_ERROR_INVALID_PARAM);
    uint64_t value = 0;
    CHECK_RC(aclrtMemPoolSetAttr(NULL, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemPoolGetAttr(NULL, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value), ACL_ERROR_INVALID_PARAM);
    void *ptr = NULL;
    CHECK_RC(aclrtMemPoolMallocAsync(&ptr, 64, NULL, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemPoolFreeAsync(NULL, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemPoolTrimTo(NULL, 0), ACL_ERROR_INVALID_PARAM);

    /* A pool of 4 MiB. */
    CHECK(aclrtMemPoolCreate(&pool, &props));
    CHECK_RC(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &value), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, NULL), ACL_ERROR_RT_PARAM_INVALID);
    uint32_t flag = 1;
    CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &flag));
    flag = 0;
    CHECK(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &flag));
    EXPECT(flag == 1);
    value = MIB2;
    CHECK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value));
    EXPECT(attr_u64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD) == MIB2);

    /* Data through pool memory. */
    CHECK(aclrtMemPoolMallocAsync(&ptr, 4096, pool, stream));
    uint8_t host[4096], back[4096];
    for (size_t i = 0; i < sizeof host; i++) host[i] = (uint8_t)(i * 7);
    CHECK(aclrtMemcpyAsync(ptr, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtMemsetAsync(ptr, 16, 0xab, 16, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(back, sizeof back, ptr, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST));
    memset(host, 0xab, 16);
    EXPECT(memcmp(host, back, sizeof back) == 0);
    EXPECT(attr_u64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == MIB2);

    /* Reuse on the freeing stream; the same pointer twice is refused. */
    CHECK(aclrtMemPoolFreeAsync(ptr, stream));
    CHECK_RC(aclrtMemPoolFreeAsync(ptr, stream), ACL_ERROR_RT_PARAM_INVALID);
    void *again = NULL;
    CHECK(aclrtMemPoolMallocAsync(&again, 100, pool, stream));
    EXPECT(again == ptr);

    /* maxSize: a second 2 MiB block fits, a third does not. */
    void *second = NULL, *third = NULL;
    CHECK(aclrtMemPoolMallocAsync(&second, MIB2, pool, stream));
    CHECK_RC(aclrtMemPoolMallocAsync(&third, 1, pool, stream), ACL_ERROR_RT_INTERNAL_ERROR);
    EXPECT(attr_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == 2 * MIB2);

    /* Trimming: not below the used bytes; idle memory goes. */
    CHECK_RC(aclrtMemPoolTrimTo(pool, MIB2), ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK(aclrtMemPoolFreeAsync(again, stream));
    CHECK(aclrtMemPoolFreeAsync(second, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemPoolTrimTo(pool, 0));
    EXPECT(attr_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0);

    CHECK(aclrtMemPoolDestroy(pool));
    CHECK_RC(aclrtMemPoolDestroy(pool), ACL_ERROR_RT_INTERNAL_ERROR);
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("mem_pool: ok\n");
    return 0;
}
