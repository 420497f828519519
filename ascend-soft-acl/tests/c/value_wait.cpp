// value_wait.cpp - two host threads, each with its own stream, hand a flag word in
// device memory back and forth with aclrtValueWrite / aclrtValueWait: a wait blocks only
// its own stream until the other stream writes the value.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "check.h"

namespace {

constexpr size_t kBytes = 1 << 16;
constexpr int kRounds = 8;

struct Shared {
    void *ping = nullptr;  // 8-byte flag written by the producer
    void *pong = nullptr;  // 8-byte flag written by the consumer
    void *data = nullptr;  // payload the producer fills
    void *copy = nullptr;  // where the consumer copies it
    std::atomic<bool> failed{false};
};

void producer(Shared &shared) {
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    for (int round = 1; round <= kRounds; round++) {
        // Wait for the consumer to finish the previous round, fill, then signal.
        CHECK(aclrtValueWait(shared.pong, static_cast<uint64_t>(round - 1), ACL_STREAM_WAIT_VALUE_EQ, stream));
        CHECK(aclrtMemsetAsync(shared.data, kBytes, round, kBytes, stream));
        CHECK(aclrtValueWrite(shared.ping, static_cast<uint64_t>(round), 0, stream));
    }
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
}

void consumer(Shared &shared) {
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    std::vector<uint8_t> host(kBytes);
    for (int round = 1; round <= kRounds; round++) {
        CHECK(aclrtValueWait(shared.ping, static_cast<uint64_t>(round), ACL_STREAM_WAIT_VALUE_GEQ, stream));
        CHECK(aclrtMemcpyAsync(shared.copy, kBytes, shared.data, kBytes, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
        CHECK(aclrtValueWrite(shared.pong, static_cast<uint64_t>(round), 0, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtMemcpy(host.data(), kBytes, shared.copy, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
        for (uint8_t byte : host) {
            if (byte != static_cast<uint8_t>(round)) {
                shared.failed = true;
            }
        }
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
}

}  // namespace

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    Shared shared;
    CHECK(aclrtMalloc(&shared.ping, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&shared.pong, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&shared.data, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&shared.copy, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(shared.ping, 8, 0, 8));
    CHECK(aclrtMemset(shared.pong, 8, 0, 8));

    // The consumer starts first: its first wait must block until the producer writes.
    std::thread consumer_thread(consumer, std::ref(shared));
    std::thread producer_thread(producer, std::ref(shared));
    producer_thread.join();
    consumer_thread.join();
    EXPECT(!shared.failed);

    uint64_t ping = 0, pong = 0;
    CHECK(aclrtMemcpy(&ping, 8, shared.ping, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(aclrtMemcpy(&pong, 8, shared.pong, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(ping == kRounds && pong == kRounds);

    CHECK(aclrtFree(shared.copy));
    CHECK(aclrtFree(shared.data));
    CHECK(aclrtFree(shared.pong));
    CHECK(aclrtFree(shared.ping));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("value_wait: ok\n");
    return 0;
}
