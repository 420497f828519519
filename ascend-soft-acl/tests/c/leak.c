/* leak.c - a program that forgets to free a device allocation. Run with
 * ASCEND_SOFT_REPORT=1: aclFinalize then reports the leak on stderr. Prints the leaked
 * address on stdout, so that the test can find it in the report. */
#include "check.h"

#define LEAKED_BYTES 12345

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    void *kept = NULL, *leaked = NULL;
    CHECK(aclrtMalloc(&kept, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&leaked, LEAKED_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtFree(kept));
    printf("leaked %p\n", leaked);
    fflush(stdout);
    /* No aclrtFree(leaked), no aclrtResetDevice. */
    CHECK(aclFinalize());
    return 0;
}
