/* events.c - the event queries, the stream failure mode, the current context's default
 * stream, the thread's resource limits, the device's fault record and IPC events through
 * the installed tree: each call once for its behaviour and once with a bad argument for
 * the runtime's code. */
#include <stdint.h>

#include "check.h"

#define BYTES 256

static unsigned char first_byte(void *device) {
    unsigned char byte = 0;
    CHECK(aclrtMemcpy(&byte, 1, device, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    return byte;
}

/* aclrtQueryEvent: complete before the first record, then after the record is reached. */
static void query_event(aclrtStream stream) {
    aclrtEvent event = NULL;
    aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
    CHECK(aclrtCreateEvent(&event));
    CHECK(aclrtQueryEvent(event, &status));
    EXPECT(status == ACL_EVENT_STATUS_COMPLETE);
    CHECK(aclrtRecordEvent(event, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtQueryEvent(event, &status));
    EXPECT(status == ACL_EVENT_STATUS_COMPLETE);
    CHECK_RC(aclrtQueryEvent(event, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtQueryEvent(NULL, &status), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtDestroyEvent(event));
    /* Events of aclrtCreateEventExWithFlag are refused. */
    CHECK(aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC));
    CHECK_RC(aclrtQueryEvent(event, &status), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(aclrtDestroyEvent(event));
}

/* aclrtQueryEventWaitStatus: not ready while a stream waits for the event. */
static void query_wait_status(aclrtStream stream) {
    aclrtEvent event = NULL;
    aclrtStream recorder = NULL;
    aclrtEventWaitStatus status = ACL_EVENT_WAIT_STATUS_RESERVED;
    CHECK(aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    CHECK(aclrtCreateStream(&recorder));
    CHECK(aclrtQueryEventWaitStatus(event, &status));
    EXPECT(status == ACL_EVENT_WAIT_STATUS_COMPLETE);
    CHECK(aclrtStreamWaitEvent(stream, event)); /* waits for the next record */
    CHECK(aclrtQueryEventWaitStatus(event, &status));
    EXPECT(status == ACL_EVENT_WAIT_STATUS_NOT_READY);
    CHECK(aclrtRecordEvent(event, recorder));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtQueryEventWaitStatus(event, &status));
    EXPECT(status == ACL_EVENT_WAIT_STATUS_COMPLETE);
    CHECK_RC(aclrtQueryEventWaitStatus(event, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtSynchronizeStream(recorder));
    CHECK(aclrtDestroyStream(recorder));
    CHECK(aclrtDestroyEvent(event));
}

/* aclrtSetStreamFailureMode: after a failed task, continue runs the later work, stop skips
 * it until the synchronisation that reports the failure. */
static void failure_mode(void *buffer) {
    for (int stop = 0; stop <= 1; ++stop) {
        aclrtStream stream = NULL;
        aclrtEvent never = NULL;
        CHECK(aclrtCreateStream(&stream));
        CHECK(aclrtSetStreamFailureMode(stream, stop ? ACL_STOP_ON_FAILURE : ACL_CONTINUE_ON_FAILURE));
        CHECK(aclrtCreateEventWithFlag(&never, ACL_EVENT_SYNC));
        CHECK(aclrtMemsetAsync(buffer, BYTES, 0x11, BYTES, stream));
        CHECK(aclrtStreamWaitEventWithTimeout(stream, never, 1)); /* fails after 1 s */
        CHECK(aclrtMemsetAsync(buffer, BYTES, 0x22, BYTES, stream));
        CHECK_RC(aclrtSynchronizeStream(stream), ACL_ERROR_RT_WAIT_TIMEOUT);
        EXPECT(first_byte(buffer) == (stop ? 0x11 : 0x22));
        if (stop) {
            CHECK_RC(aclrtSetStreamFailureMode(stream, ACL_CONTINUE_ON_FAILURE), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        }
        CHECK(aclrtDestroyStream(stream));
        CHECK(aclrtDestroyEvent(never));
    }
    CHECK_RC(aclrtSetStreamFailureMode((aclrtStream)(uintptr_t)0x1234, ACL_STOP_ON_FAILURE),
             ACL_ERROR_RT_INVALID_HANDLE);
}

/* aclrtCtxGetCurrentDefaultStream: a handle the other calls take as the default stream. */
static void default_stream(void *buffer) {
    aclrtStream handle = NULL, again = NULL;
    aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
    CHECK(aclrtCtxGetCurrentDefaultStream(&handle));
    EXPECT(handle != NULL);
    CHECK(aclrtCtxGetCurrentDefaultStream(&again));
    EXPECT(again == handle);
    CHECK(aclrtMemsetAsync(buffer, BYTES, 0x5c, BYTES, handle));
    CHECK(aclrtSynchronizeStream(NULL)); /* the same stream */
    CHECK(aclrtStreamQuery(handle, &status));
    EXPECT(status == ACL_STREAM_STATUS_COMPLETE);
    EXPECT(first_byte(buffer) == 0x5c);
    CHECK_RC(aclrtDestroyStream(handle), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtCtxGetCurrentDefaultStream(NULL), ACL_ERROR_INVALID_PARAM);
}

/* aclrtGetResInCurrentThread: the core counts. */
static void resources(void) {
    uint32_t cube = 0, vector = 0;
    CHECK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &cube));
    CHECK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &vector));
    EXPECT(cube > 0 && vector > 0);
    CHECK_RC(aclrtGetResInCurrentThread((aclrtDevResLimitType)2, &cube), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, NULL), ACL_ERROR_INVALID_PARAM);
}

/* aclrtGetErrorVerbose: no fault on a device where no task failed (a timed-out wait is
 * none). */
static void error_verbose(void) {
    aclrtErrorInfo info;
    memset(&info, 0xff, sizeof info);
    CHECK(aclrtGetErrorVerbose(0, &info));
    EXPECT(info.errorType == ACL_RT_NO_ERROR && info.hasDetail == 0 && info.tryRepair == 0);
    CHECK_RC(aclrtGetErrorVerbose(0, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtGetErrorVerbose(-1, &info), ACL_ERROR_RT_INVALID_DEVICEID);
}

/* aclrtIpcGetEventHandle / aclrtIpcOpenEventHandle: an IPC event opened by its handle (in
 * this process: the software device allows it) sees the original's records. */
static void ipc_events(aclrtStream stream) {
    aclrtEvent shared = NULL, opened = NULL, plain = NULL;
    aclrtIpcEventHandle handle, garbage;
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    CHECK(aclrtCreateEventExWithFlag(&shared, ACL_EVENT_IPC));
    CHECK(aclrtIpcGetEventHandle(shared, &handle));
    CHECK(aclrtIpcOpenEventHandle(handle, &opened));
    EXPECT(opened != NULL && opened != shared);
    CHECK(aclrtRecordEvent(shared, stream));
    CHECK(aclrtSynchronizeEvent(opened));
    CHECK(aclrtQueryEventStatus(opened, &status));
    EXPECT(status == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK(aclrtStreamWaitEvent(stream, opened));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK_RC(aclrtIpcGetEventHandle(shared, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtCreateEvent(&plain));
    CHECK_RC(aclrtIpcGetEventHandle(plain, &handle), ACL_ERROR_RT_PARAM_INVALID);
    memset(&garbage, 7, sizeof garbage);
    CHECK_RC(aclrtIpcOpenEventHandle(garbage, &opened), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtIpcOpenEventHandle(handle, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtDestroyEvent(plain));
    CHECK(aclrtDestroyEvent(opened));
    CHECK(aclrtDestroyEvent(shared));
}

int main(void) {
    void *buffer = NULL;
    aclrtStream stream = NULL;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtMalloc(&buffer, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtCreateStream(&stream));

    query_event(stream);
    query_wait_status(stream);
    failure_mode(buffer);
    default_stream(buffer);
    resources();
    error_verbose();
    ipc_events(stream);

    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtFree(buffer));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    puts("events: all checks passed");
    return 0;
}
