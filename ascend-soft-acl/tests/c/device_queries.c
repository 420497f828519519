/* device_queries.c - the device queries, event flags and stream abort of issue 41 through
 * the installed tree: each call once for its behaviour and once with a bad argument for the
 * runtime's code. */
#include <stdint.h>

#include "check.h"

#define BYTES 4096

static void device_info(void) {
    int64_t value = -1;
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_CUBE_CORE_NUM, &value));
    EXPECT(value == 24);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &value));
    EXPECT(value == 48);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &value));
    EXPECT(value > 0);
    CHECK_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &value), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK_RC(aclrtGetDeviceInfo(0, (aclrtDevAttr)7, &value), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtGetDeviceInfo(99, ACL_DEV_ATTR_CUBE_CORE_NUM, &value), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_CUBE_CORE_NUM, NULL), ACL_ERROR_INVALID_PARAM);

    int32_t least = -1, greatest = -1;
    CHECK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT(least == 7 && greatest == 0);
    CHECK_RC(aclrtDeviceGetStreamPriorityRange(NULL, &greatest), ACL_ERROR_INVALID_PARAM);
}

static void resource_limits(void) {
    uint32_t value = 0;
    CHECK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &value));
    EXPECT(value == 24);
    CHECK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 4));
    CHECK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &value));
    EXPECT(value == 4);
    CHECK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &value));
    EXPECT(value == 4);
    CHECK_RC(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtSetDeviceResLimit(0, (aclrtDevResLimitType)5, 1), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtGetDeviceResLimit(99, ACL_RT_DEV_RES_CUBE_CORE, &value), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_RC(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtResetDeviceResLimit(0));
    CHECK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &value));
    EXPECT(value == 24);
    CHECK_RC(aclrtResetDeviceResLimit(-1), ACL_ERROR_RT_INVALID_DEVICEID);
}

static void status_and_utilization(void) {
    aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_END;
    CHECK(aclrtQueryDeviceStatus(0, &status));
    EXPECT(status == ACL_RT_DEVICE_STATUS_NORMAL);
    CHECK_RC(aclrtQueryDeviceStatus(99, &status), ACL_ERROR_RT_INVALID_DEVICEID);
    CHECK_RC(aclrtQueryDeviceStatus(0, NULL), ACL_ERROR_INVALID_PARAM);

    aclrtUtilizationInfo info;
    memset(&info, 0xFF, sizeof info);
    info.utilizationExtend = NULL;
    CHECK(aclrtGetDeviceUtilizationRate(0, &info));
    EXPECT(info.cubeUtilization == 0 && info.vectorUtilization == 0 && info.aicpuUtilization == 0);
    EXPECT(info.memoryUtilization >= 0 && info.memoryUtilization <= 100);
    info.utilizationExtend = (aclrtUtilizationExtendInfo *)&info;
    CHECK_RC(aclrtGetDeviceUtilizationRate(0, &info), ACL_ERROR_INVALID_PARAM);
    info.utilizationExtend = NULL;
    CHECK_RC(aclrtGetDeviceUtilizationRate(99, &info), ACL_ERROR_RT_INVALID_DEVICEID);
}

static void events(aclrtStream stream) {
    aclrtEvent event = NULL, other = NULL;
    aclrtStream waiter = NULL;
    uint32_t id = 0, second = 0, left = 0, after = 0;
    CHECK(aclrtGetEventAvailNum(&left));
    CHECK(aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    CHECK(aclrtCreateEvent(&other));
    CHECK(aclrtGetEventAvailNum(&after));
    EXPECT(after + 2 == left);
    CHECK(aclrtGetEventId(event, &id));
    CHECK(aclrtGetEventId(other, &second));
    EXPECT(id != second);
    CHECK_RC(aclrtGetEventId(event, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtGetEventAvailNum(NULL), ACL_ERROR_INVALID_PARAM);

    CHECK(aclrtCreateStream(&waiter));
    CHECK(aclrtRecordEventWithFlag(event, stream, ACL_EVENT_RECORD_DEFAULT));
    CHECK(aclrtStreamWaitEventWithFlag(waiter, event, 10, ACL_EVENT_WAIT_DEFAULT));
    CHECK(aclrtSynchronizeStream(waiter));
    CHECK_RC(aclrtRecordEventWithFlag(event, stream, ACL_EVENT_RECORD_EXTERNAL), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    CHECK_RC(aclrtRecordEventWithFlag(event, stream, 2), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtStreamWaitEventWithFlag(waiter, event, 1, ACL_EVENT_WAIT_EXTERNAL), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtStreamWaitEventWithFlag(waiter, event, 0, ACL_EVENT_WAIT_EXTERNAL),
             ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    CHECK(aclrtDestroyStream(waiter));
    CHECK(aclrtDestroyEvent(other));
    CHECK(aclrtDestroyEvent(event));
}

/* aclrtStreamAbort: a memset queued behind a wait that never ends is dropped and never runs;
 * the stream then works as before. aclrtStreamStop refuses the stream. */
static void abort_and_stop(void *device) {
    aclrtStream stream = NULL;
    aclrtEvent never = NULL;
    unsigned char host[BYTES];
    CHECK(aclrtMemset(device, BYTES, 0, BYTES));
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtCreateEventWithFlag(&never, ACL_EVENT_SYNC));
    CHECK(aclrtStreamWaitEvent(stream, never)); /* waits for a record that never comes */
    CHECK(aclrtMemsetAsync(device, BYTES, 0xAB, BYTES, stream));
    CHECK(aclrtStreamAbort(stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host, BYTES, device, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < BYTES; i++) {
        EXPECT(host[i] == 0);
    }
    CHECK(aclrtMemsetAsync(device, BYTES, 0x5A, BYTES, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host, BYTES, device, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(host[0] == 0x5A && host[BYTES - 1] == 0x5A);
    CHECK_RC(aclrtStreamAbort(NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtStreamStop(stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK_RC(aclrtStreamStop(NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtDestroyEvent(never));
    CHECK(aclrtDestroyStream(stream));
    CHECK_RC(aclrtStreamAbort(stream), ACL_ERROR_RT_INVALID_HANDLE);
}

int main(void) {
    void *buffer = NULL;
    aclrtStream stream = NULL;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtMalloc(&buffer, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtCreateStream(&stream));

    device_info();
    resource_limits();
    status_and_utilization();
    events(stream);
    abort_and_stop(buffer);

    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtFree(buffer));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    puts("device_queries: all checks passed");
    return 0;
}
