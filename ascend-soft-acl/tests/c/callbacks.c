/* callbacks.c - stream callbacks, host functions and state callbacks through the installed
 * tree: a callback runs on the thread subscribed to its stream, after the work queued before
 * it (and, blocking, before the work after it); host functions run in stream order on the
 * runtime's thread or on a subscribed thread; state callbacks see a stream made and
 * destroyed; each rule once with a bad argument for the runtime's code. */
#include <pthread.h>
#include <stdint.h>

#include "check.h"

#define BYTES 256

/* What a callback saw: the first byte of a host buffer and the thread it ran on. */
typedef struct {
    const unsigned char *host;
    unsigned char seen;
    uint64_t thread;
    int calls;
} probe_t;

static uint64_t me(void) { return (uint64_t)pthread_self(); }

static void read_probe(void *data) {
    probe_t *probe = (probe_t *)data;
    probe->seen = probe->host[0];
    probe->thread = me();
    probe->calls += 1;
}

/* Writes 42 into the host buffer: work queued after a blocking callback sees it. */
static void write_host(void *data) {
    probe_t *probe = (probe_t *)data;
    ((unsigned char *)probe->host)[0] = 42;
    probe->calls += 1;
}

/* A callback on this thread, after a copy queued before it; a blocking one, whose write the
 * copy queued after it carries to the device. */
static void callbacks(aclrtStream stream, void *device, unsigned char *host) {
    probe_t probe = {host, 0, 0, 0};
    CHECK(aclrtSubscribeReport(me(), stream));
    CHECK(aclrtMemsetAsync(device, BYTES, 7, BYTES, stream));
    CHECK(aclrtMemcpyAsync(host, BYTES, device, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtLaunchCallback(read_probe, &probe, ACL_CALLBACK_NO_BLOCK, stream));
    CHECK(aclrtProcessReport(5000));
    EXPECT(probe.calls == 1 && probe.seen == 7 && probe.thread == me());

    CHECK(aclrtLaunchCallback(write_host, &probe, ACL_CALLBACK_BLOCK, stream));
    CHECK(aclrtMemcpyAsync(device, BYTES, host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtProcessReport(5000));
    CHECK(aclrtSynchronizeStream(stream));
    unsigned char back = 0;
    CHECK(aclrtMemcpy(&back, 1, device, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(probe.calls == 2 && back == 42);

    /* Nothing left to process: the report times out. */
    CHECK_RC(aclrtProcessReport(20), ACL_ERROR_RT_REPORT_TIMEOUT);
    CHECK(aclrtUnSubscribeReport(me(), stream));
}

/* The codes of the callback calls. */
static void callback_codes(aclrtStream stream) {
    probe_t probe = {NULL, 0, 0, 0};
    CHECK_RC(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    CHECK_RC(aclrtLaunchCallback(write_host, &probe, (aclrtCallbackBlockType)2, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtLaunchCallback(write_host, &probe, ACL_CALLBACK_NO_BLOCK, stream), ACL_ERROR_RT_STREAM_NO_CB_REG);
    CHECK_RC(aclrtSubscribeReport(me(), NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtSubscribeReport(me(), stream));
    CHECK_RC(aclrtSubscribeReport(me(), stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK_RC(aclrtLaunchCallback(NULL, &probe, ACL_CALLBACK_NO_BLOCK, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtUnSubscribeReport(me() ^ 1, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK(aclrtUnSubscribeReport(me(), stream));
    CHECK_RC(aclrtUnSubscribeReport(me(), stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
}

/* Host functions: in stream order on the runtime's thread, then on a subscribed thread. */
static void host_functions(void *device, unsigned char *host) {
    aclrtStream stream = NULL;
    probe_t probe = {host, 0, 0, 0};
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtMemsetAsync(device, BYTES, 3, BYTES, stream));
    CHECK(aclrtMemcpyAsync(host, BYTES, device, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtLaunchHostFunc(stream, read_probe, &probe));
    CHECK(aclrtMemsetAsync(device, BYTES, 4, BYTES, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(probe.calls == 1 && probe.seen == 3 && probe.thread != me());
    CHECK_RC(aclrtLaunchHostFunc(stream, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtProcessHostFunc(0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtProcessHostFunc(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);

    /* A stream that ran host functions on the runtime's thread keeps that way. */
    CHECK_RC(aclrtSubscribeHostFunc(me(), stream), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    CHECK(aclrtDestroyStream(stream));

    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtSubscribeHostFunc(me(), stream));
    CHECK(aclrtLaunchHostFunc(stream, read_probe, &probe));
    CHECK(aclrtLaunchHostFunc(stream, read_probe, &probe));
    while (probe.calls < 3) {
        CHECK(aclrtProcessHostFunc(5000));
    }
    EXPECT(probe.thread == me());
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtUnSubscribeHostFunc(me(), stream));
    CHECK(aclrtDestroyStream(stream));
}

static int stream_states;
static int device_states;

static void on_stream(aclrtStream stream, aclrtStreamState state, void *args) {
    (void)stream;
    (void)args;
    if (state == ACL_RT_STREAM_STATE_CREATE_POST || state == ACL_RT_STREAM_STATE_DESTROY_PRE) {
        stream_states += 1;
    }
}

static void on_device(int32_t device, aclrtDeviceState state, void *args) {
    (void)device;
    (void)state;
    (void)args;
    device_states += 1;
}

/* State callbacks: a stream made and destroyed, registered by name, removed with NULL. */
static void stream_state_callbacks(void) {
    aclrtStream stream = NULL;
    CHECK_RC(aclrtRegStreamStateCallback(NULL, on_stream, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtRegStreamStateCallback("callbacks.c", on_stream, NULL));
    CHECK_RC(aclrtRegStreamStateCallback("callbacks.c", on_stream, NULL), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtDestroyStream(stream));
    EXPECT(stream_states == 2);
    CHECK(aclrtRegStreamStateCallback("callbacks.c", NULL, NULL));
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtDestroyStream(stream));
    EXPECT(stream_states == 2);
}

int main(void) {
    aclrtStream stream = NULL;
    void *device = NULL;
    unsigned char *host = NULL;
    CHECK(aclInit(NULL));
    /* The device's state callback sees it set (before and after). */
    CHECK(aclrtRegDeviceStateCallback("callbacks.c", on_device, NULL));
    CHECK(aclrtSetDevice(0));
    EXPECT(device_states == 2);
    CHECK(aclrtRegDeviceStateCallback("callbacks.c", NULL, NULL));
    stream_state_callbacks();
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtMalloc(&device, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMallocHost((void **)&host, BYTES));
    callbacks(stream, device, host);
    callback_codes(stream);
    host_functions(device, host);
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtFree(device));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("callbacks: ok\n");
    return 0;
}
