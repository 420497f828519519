/* A program that forgets to free: with ASCEND_SOFT_REPORT=1, aclFinalize
 * reports the leaked allocation. */
#include "check.h"

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    void *forgotten = NULL;
    CHECK(aclrtMalloc(&forgotten, 12345, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclFinalize());
    puts("leak: finalized with one allocation still live");
    return 0;
}
