// vmm.cpp - virtual memory management: reserve an address range, allocate physical
// memory, map it, set access, copy through the mapping, unmap, free and release.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));

    aclrtPhysicalMemProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;

    size_t granularity = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
    EXPECT(granularity > 0);
    const size_t chunk = granularity;
    const size_t range = 4 * chunk;

    // Two chunks of physical memory mapped back to back in a range of four.
    void *base = nullptr;
    CHECK(aclrtReserveMemAddress(&base, range, 0, nullptr, 0));
    EXPECT(base != nullptr);
    aclrtDrvMemHandle first = nullptr, second = nullptr;
    CHECK(aclrtMallocPhysical(&first, chunk, &prop, 0));
    CHECK(aclrtMallocPhysical(&second, chunk, &prop, 0));
    void *second_va = static_cast<char *>(base) + chunk;
    CHECK(aclrtMapMem(base, chunk, 0, first, 0));
    CHECK(aclrtMapMem(second_va, chunk, 0, second, 0));

    aclrtMemAccessDesc access;
    std::memset(&access, 0, sizeof access);
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    CHECK(aclrtMemSetAccess(base, chunk, &access, 1));
    uint64_t flags = 0;
    CHECK(aclrtMemGetAccess(base, &access.location, &flags));
    EXPECT(flags == ACL_RT_MEM_ACCESS_FLAGS_READWRITE);

    // One copy across both mappings, and back.
    std::vector<uint8_t> data(2 * chunk), back(2 * chunk);
    for (size_t i = 0; i < data.size(); i++) {
        data[i] = static_cast<uint8_t>(i % 241);
    }
    CHECK(aclrtMemcpy(base, 2 * chunk, data.data(), data.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(back.data(), back.size(), base, 2 * chunk, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(back == data);

    // The mapping knows its allocation.
    aclrtDrvMemHandle retained = nullptr;
    CHECK(aclrtMemRetainAllocationHandle(second_va, &retained));
    EXPECT(retained == second);
    CHECK(aclrtFreePhysical(retained));
    void *found = nullptr;
    size_t found_size = 0;
    CHECK(aclrtMemGetAddressRange(static_cast<char *>(second_va) + 100, &found, &found_size));
    EXPECT(found == second_va && found_size == chunk);

    // Tear down in the documented order.
    CHECK(aclrtUnmapMem(second_va));
    CHECK(aclrtUnmapMem(base));
    CHECK(aclrtFreePhysical(second));
    CHECK(aclrtFreePhysical(first));
    CHECK(aclrtReleaseMemAddress(base));

    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("vmm: ok\n");
    return 0;
}
