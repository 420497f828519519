/* mbuf.c - every Mbuf function (aclrtAllocBuf & co) through the installed tree: data,
 * data length, user data, reference copies, chains, and at least one refused argument
 * each, with the runtime's codes. */
#include "check.h"

#include <stdint.h>

int main(void) {
    CHECK(aclInit(NULL));

    aclrtMbuf buf = NULL;
    CHECK_RC(aclrtAllocBuf(NULL, 16), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtAllocBuf(&buf, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtAllocBuf(&buf, 256));
    EXPECT(buf != NULL);

    /* Data area: capacity, host-visible, zeroed. */
    void *data = NULL;
    size_t size = 0;
    CHECK_RC(aclrtGetBufData(buf, NULL, &size), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtGetBufData(buf, &data, &size));
    EXPECT(data != NULL && size == 256);
    EXPECT(((const uint8_t *)data)[255] == 0);
    memcpy(data, "message", 7);

    /* Data length: at most the capacity. */
    size_t len = 99;
    CHECK_RC(aclrtGetBufDataLen(buf, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtGetBufDataLen(buf, &len));
    EXPECT(len == 0);
    CHECK_RC(aclrtSetBufDataLen(NULL, 7), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtSetBufDataLen(buf, 257), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtSetBufDataLen(buf, 7));
    CHECK(aclrtGetBufDataLen(buf, &len));
    EXPECT(len == 7);

    /* User data: 96 bytes; size + offset above 96 is refused first. */
    uint32_t tag = 0xfeedbeefu, read_back = 0;
    CHECK_RC(aclrtSetBufUserData(NULL, NULL, 90, 7), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtGetBufUserData(buf, NULL, 4, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtSetBufUserData(buf, &tag, sizeof tag, 92));
    CHECK(aclrtGetBufUserData(buf, &read_back, sizeof read_back, 92));
    EXPECT(read_back == tag);

    /* A reference copy shares the data area and starts with the length and user data. */
    aclrtMbuf copy = NULL;
    CHECK_RC(aclrtCopyBufRef(buf, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtCopyBufRef(buf, &copy));
    void *copy_data = NULL;
    size_t copy_size = 0;
    CHECK(aclrtGetBufData(copy, &copy_data, &copy_size));
    EXPECT(copy_data == data && copy_size == 256);
    CHECK(aclrtGetBufDataLen(copy, &len));
    EXPECT(len == 7);
    read_back = 0;
    CHECK(aclrtGetBufUserData(copy, &read_back, sizeof read_back, 92));
    EXPECT(read_back == tag);
    /* Freeing the original drops one reference: the copy still reads the bytes. */
    CHECK(aclrtFreeBuf(buf));
    EXPECT(memcmp(copy_data, "message", 7) == 0);
    CHECK_RC(aclrtFreeBuf(buf), ACL_ERROR_RT_PARAM_INVALID); /* double free */
    CHECK_RC(aclrtFreeBuf(NULL), ACL_ERROR_INVALID_PARAM);

    /* Chains: copy -> second -> third. */
    aclrtMbuf second = NULL, third = NULL, got = NULL;
    CHECK(aclrtAllocBuf(&second, 32));
    CHECK(aclrtAllocBuf(&third, 64));
    CHECK_RC(aclrtAppendBufChain(copy, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtAppendBufChain(copy, second));
    CHECK(aclrtAppendBufChain(copy, third));
    CHECK_RC(aclrtAppendBufChain(third, copy), ACL_ERROR_RT_PARAM_INVALID); /* a cycle */
    uint32_t num = 0;
    CHECK_RC(aclrtGetBufChainNum(copy, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtGetBufChainNum(copy, &num));
    EXPECT(num == 3);
    CHECK_RC(aclrtGetBufFromChain(NULL, 0, &got), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtGetBufFromChain(copy, 3, &got), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtGetBufFromChain(copy, 0, &got));
    EXPECT(got == copy);
    CHECK(aclrtGetBufFromChain(copy, 2, &got));
    EXPECT(got == third);
    CHECK(aclrtGetBufData(got, &data, &size));
    EXPECT(size == 64);
    /* The head frees its chain. */
    CHECK(aclrtFreeBuf(copy));
    CHECK_RC(aclrtGetBufChainNum(third, &num), ACL_ERROR_RT_PARAM_INVALID);

    CHECK(aclFinalize());
    printf("mbuf: ok\n");
    return 0;
}
