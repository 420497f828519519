/* cmo.c - cache maintenance and memory checks (hicann/runtime acl_rt.h): every function of
 * the family through the installed tree, its result and at least one bad-argument code. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define SIZE 4096u

int main(void) {
    CHECK(aclInit(NULL));
    uint32_t count = 0;
    CHECK(aclrtGetDeviceCount(&count));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    void *buf = NULL;
    CHECK(aclrtMalloc(&buf, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(buf, SIZE, 0x5a, SIZE));
    uint8_t host[64];

    /* aclrtCmoAsync: every operation, ordered on the stream; the data is untouched. */
    CHECK(aclrtCmoAsync(buf, SIZE, ACL_RT_CMO_TYPE_PREFETCH, stream));
    CHECK(aclrtCmoAsync(buf, SIZE, ACL_RT_CMO_TYPE_WRITEBACK, stream));
    CHECK(aclrtCmoAsync(buf, SIZE, ACL_RT_CMO_TYPE_INVALID, stream));
    CHECK(aclrtCmoAsync(buf, SIZE, ACL_RT_CMO_TYPE_FLUSH, stream));
    CHECK_RC(aclrtCmoAsync(NULL, SIZE, ACL_RT_CMO_TYPE_PREFETCH, stream), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtCmoAsync(buf, SIZE, (aclrtCmoType)4, stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK_RC(aclrtCmoAsync(host, sizeof host, ACL_RT_CMO_TYPE_PREFETCH, stream), ACL_ERROR_RT_PARAM_INVALID);

    /* Barriers: an invalidation carries a barrier id, the wait names it. */
    CHECK(aclrtCmoAsyncWithBarrier(buf, SIZE, ACL_RT_CMO_TYPE_INVALID, 1, stream));
    CHECK_RC(aclrtCmoAsyncWithBarrier(buf, SIZE, ACL_RT_CMO_TYPE_INVALID, 0, stream), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtCmoAsyncWithBarrier(buf, SIZE, ACL_RT_CMO_TYPE_FLUSH, 1, stream), ACL_ERROR_RT_PARAM_INVALID);
    aclrtBarrierTaskInfo info;
    memset(&info, 0, sizeof info);
    info.barrierNum = 1;
    info.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_INVALID;
    info.cmoInfo[0].barrierId = 1;
    CHECK(aclrtCmoWaitBarrier(&info, stream, 0));
    info.barrierNum = ACL_RT_CMO_MAX_BARRIER_NUM + 1;
    CHECK_RC(aclrtCmoWaitBarrier(&info, stream, 0), ACL_ERROR_INVALID_PARAM);

    /* Descriptors. */
    size_t desc_size = 0;
    CHECK(aclrtCmoGetDescSize(&desc_size));
    EXPECT(desc_size == 32);
    CHECK_RC(aclrtCmoGetDescSize(NULL), ACL_ERROR_RT_PARAM_INVALID);
    void *desc = NULL;
    CHECK(aclrtMalloc(&desc, desc_size, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtCmoSetDesc(desc, buf, SIZE));
    CHECK_RC(aclrtCmoSetDesc(desc, buf, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream, NULL));
    CHECK_RC(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream, host), ACL_ERROR_RT_PARAM_INVALID);

    CHECK(aclrtSynchronizeStream(stream));
    uint8_t back[SIZE];
    CHECK(aclrtMemcpy(back, SIZE, buf, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < SIZE; i++) {
        EXPECT(back[i] == 0x5a);
    }

    /* Synchronous cache calls. */
    CHECK(aclrtMemFlush(buf, SIZE));
    CHECK_RC(aclrtMemFlush(NULL, SIZE), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtMemInvalidate(buf, SIZE));
    CHECK_RC(aclrtMemInvalidate(buf, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtDeviceL2CacheFlush(NULL));
    CHECK_RC(aclrtDeviceL2CacheFlush(host), ACL_ERROR_INVALID_PARAM);

    /* Memory types. */
    void *list[2] = {buf, desc};
    uint32_t result = 7;
    CHECK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    EXPECT(result == 1);
    list[1] = host;
    CHECK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    EXPECT(result == 0);
    CHECK_RC(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &result, 1), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtCheckMemType(NULL, 2, ACL_RT_MEM_TYPE_DEV, &result, 0), ACL_ERROR_INVALID_PARAM);

    /* Peer mapping: its own device always; another one after enabling peer access. */
    CHECK(aclrtMemP2PMap(buf, SIZE, 0, 0));
    CHECK_RC(aclrtMemP2PMap(buf, SIZE, 0, 1), ACL_ERROR_INVALID_PARAM);
    if (count >= 2) {
        CHECK_RC(aclrtMemP2PMap(buf, SIZE, 1, 0), ACL_ERROR_RT_PARAM_INVALID);
        CHECK(aclrtSetDevice(1));
        CHECK(aclrtDeviceEnablePeerAccess(0, 0));
        CHECK(aclrtMemP2PMap(buf, SIZE, 1, 0));
        CHECK(aclrtDeviceDisablePeerAccess(0));
        CHECK(aclrtResetDevice(1));
        CHECK(aclrtSetDevice(0));
    }

    /* Uncorrectable errors: none here; the repair checks its arguments. */
    aclrtMemUceInfo uce[4];
    memset(uce, 0, sizeof uce);
    size_t found = 99;
    CHECK(aclrtGetMemUceInfo(0, uce, 4, &found));
    EXPECT(found == 0);
    CHECK_RC(aclrtGetMemUceInfo(0, uce, 4, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtMemUceRepair(0, uce, 4));
    CHECK_RC(aclrtMemUceRepair(0, uce, MAX_MEM_UCE_INFO_ARRAY_SIZE + 1), ACL_ERROR_INVALID_PARAM);

    CHECK(aclrtFree(desc));
    CHECK(aclrtFree(buf));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("cmo: all checks passed\n");
    return 0;
}
