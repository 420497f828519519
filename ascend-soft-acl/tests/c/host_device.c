/* Host memory, device memory, copies both ways and memset. */
#include <string.h>
#include "check.h"

int main(void) {
    enum { SIZE = 1 << 20 };
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    uint32_t count = 0;
    CHECK(aclrtGetDeviceCount(&count));
    EXPECT(count >= 1);

    unsigned char *host = NULL;
    void *device = NULL;
    CHECK(aclrtMallocHost((void **)&host, SIZE));
    CHECK(aclrtMalloc(&device, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < SIZE; i++) host[i] = (unsigned char)(i * 7);
    CHECK(aclrtMemcpy(device, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(host, 0, SIZE);
    CHECK(aclrtMemcpy(host, SIZE, device, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < SIZE; i++) EXPECT(host[i] == (unsigned char)(i * 7));

    CHECK(aclrtMemset(device, SIZE, 0x5a, SIZE / 2));
    CHECK(aclrtMemcpy(host, SIZE, device, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(host[0] == 0x5a && host[SIZE / 2 - 1] == 0x5a && host[SIZE / 2] == (unsigned char)((SIZE / 2) * 7));

    /* A host dereference of device memory is not allowed; a bad free is refused. */
    EXPECT(aclrtFree(host) != ACL_SUCCESS);
    CHECK(aclrtFree(device));
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    puts("host_device: ok");
    return 0;
}
