/* Virtual memory management: reserve, allocate physical, map, copy, unmap,
 * free, release. */
#include <string.h>
#include "check.h"

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t granularity = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
    EXPECT(granularity > 0);

    void *base = NULL;
    aclrtDrvMemHandle first = NULL, second = NULL;
    CHECK(aclrtReserveMemAddress(&base, 2 * granularity, 0, NULL, 0));
    CHECK(aclrtMallocPhysical(&first, granularity, &prop, 0));
    CHECK(aclrtMallocPhysical(&second, granularity, &prop, 0));
    CHECK(aclrtMapMem(base, granularity, 0, first, 0));
    CHECK(aclrtMapMem((char *)base + granularity, granularity, 0, second, 0));

    /* One copy across both mappings. */
    size_t size = 2 * granularity;
    unsigned char *host = malloc(size);
    EXPECT(host != NULL);
    for (size_t i = 0; i < size; i++) host[i] = (unsigned char)(i % 251);
    CHECK(aclrtMemcpy(base, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(host, 0, size);
    CHECK(aclrtMemcpy(host, size, base, size, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < size; i++) EXPECT(host[i] == (unsigned char)(i % 251));

    /* A range with mappings cannot be released; in order, everything goes. */
    EXPECT(aclrtReleaseMemAddress(base) != ACL_SUCCESS);
    CHECK(aclrtUnmapMem(base));
    CHECK(aclrtUnmapMem((char *)base + granularity));
    CHECK(aclrtFreePhysical(first));
    CHECK(aclrtFreePhysical(second));
    CHECK(aclrtReleaseMemAddress(base));
    free(host);
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    puts("vmm: ok");
    return 0;
}
