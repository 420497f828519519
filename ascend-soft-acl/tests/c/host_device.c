/* host_device.c - host memory, device memory, copies and memsets, synchronous and on a
 * stream, written against CANN's documented memory API. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define SIZE (1u << 20)

int main(void) {
    CHECK(aclInit(NULL));
    uint32_t count = 0;
    CHECK(aclrtGetDeviceCount(&count));
    EXPECT(count >= 1);
    CHECK(aclrtSetDevice(0));

    size_t free_before = 0, total = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_before, &total));
    EXPECT(total > 0 && free_before <= total);

    /* Page-locked host memory and device memory. */
    uint8_t *host = NULL;
    CHECK(aclrtMallocHost((void **)&host, SIZE));
    EXPECT(host != NULL);
    void *device = NULL, *device2 = NULL;
    CHECK(aclrtMalloc(&device, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&device2, SIZE, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT(device != NULL && device2 != NULL && device != device2);

    size_t free_after = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_after, &total));
    EXPECT(free_after < free_before);

    /* Host -> device -> device -> host. */
    for (size_t i = 0; i < SIZE; i++) {
        host[i] = (uint8_t)(i * 7 + 3);
    }
    CHECK(aclrtMemcpy(device, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(device2, SIZE, device, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE));
    memset(host, 0, SIZE);
    CHECK(aclrtMemcpy(host, SIZE, device2, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < SIZE; i++) {
        EXPECT(host[i] == (uint8_t)(i * 7 + 3));
    }

    /* Memset, then a 2-D copy of a 16 x 64 window. */
    CHECK(aclrtMemset(device, SIZE, 0xA5, SIZE));
    CHECK(aclrtMemcpy2d(host, 64, device, 128, 64, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < 64 * 16; i++) {
        EXPECT(host[i] == 0xA5);
    }

    /* The same on a stream, with an event between two copies. */
    aclrtStream stream = NULL;
    aclrtEvent event = NULL;
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtCreateEvent(&event));
    CHECK(aclrtMemsetAsync(device2, SIZE, 0x3C, SIZE, stream));
    CHECK(aclrtRecordEvent(event, stream));
    CHECK(aclrtMemcpyAsync(host, SIZE, device2, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtSynchronizeEvent(event));
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    CHECK(aclrtQueryEventStatus(event, &status));
    EXPECT(status == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    for (size_t i = 0; i < SIZE; i++) {
        EXPECT(host[i] == 0x3C);
    }

    /* The runtime's own checks come back as documented codes. */
    CHECK_RC(aclrtMalloc(NULL, SIZE, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemcpy(host, 16, device, 32, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);

    CHECK(aclrtDestroyEvent(event));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtFree(device2));
    CHECK(aclrtFree(device));
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("host_device: ok\n");
    return 0;
}
