// Two threads on two streams exchange a flag in device memory: one stream
// waits for the value another writes, and work queued after the wait runs
// only then.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include "check.h"

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    void *flag = nullptr;
    void *data = nullptr;
    CHECK(aclrtMalloc(&flag, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&data, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(flag, 64, 0, 64));
    CHECK(aclrtMemset(data, 4096, 0, 4096));

    std::atomic<bool> waiting{false};
    std::thread consumer([&] {
        CHECK(aclrtSetDevice(0));
        aclrtStream stream = nullptr;
        CHECK(aclrtCreateStream(&stream));
        CHECK(aclrtValueWait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, stream));
        // Runs only after the producer's write.
        CHECK(aclrtMemsetAsync(data, 4096, 0x77, 4096, stream));
        waiting = true;
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtDestroyStream(stream));
    });
    while (!waiting) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    unsigned char byte = 0xff;
    // The wait holds the memset back.
    CHECK(aclrtMemcpy(&byte, 1, data, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(byte == 0);

    std::thread producer([&] {
        CHECK(aclrtSetDevice(0));
        aclrtStream stream = nullptr;
        CHECK(aclrtCreateStream(&stream));
        CHECK(aclrtValueWrite(flag, 1, 0, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtDestroyStream(stream));
    });
    producer.join();
    consumer.join();
    CHECK(aclrtMemcpy(&byte, 1, data, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(byte == 0x77);
    CHECK(aclrtFree(flag));
    CHECK(aclrtFree(data));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::puts("value_wait: ok");
    return 0;
}
