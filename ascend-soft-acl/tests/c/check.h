/* check.h - return-code checks for the C and C++ test programs. Each failure prints the
 * call, its code and aclGetRecentErrMsg(), and exits with status 1. */
#ifndef ASCEND_SOFT_ACL_TEST_CHECK_H
#define ASCEND_SOFT_ACL_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

static inline void check_failed(const char *file, int line, const char *call, aclError rc, aclError expected) {
    const char *message = aclGetRecentErrMsg();
    fprintf(stderr, "%s:%d: %s returned %d, expected %d: %s\n", file, line, call, (int)rc, (int)expected,
            message != NULL ? message : "(no message)");
    exit(1);
}

/* CHECK(call): the call must return ACL_SUCCESS. */
#define CHECK(call) CHECK_RC(call, ACL_SUCCESS)

/* CHECK_RC(call, code): the call must return `code`. */
#define CHECK_RC(call, code)                                                                                  \
    do {                                                                                                      \
        aclError check_rc_ = (call);                                                                          \
        if (check_rc_ != (code)) {                                                                            \
            check_failed(__FILE__, __LINE__, #call, check_rc_, (code));                                       \
        }                                                                                                     \
    } while (0)

/* EXPECT(condition): a non-ACL condition that must hold. */
#define EXPECT(condition)                                                                                     \
    do {                                                                                                      \
        if (!(condition)) {                                                                                   \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition);                          \
            exit(1);                                                                                          \
        }                                                                                                     \
    } while (0)

/* Pinned device memory of device 0 with huge pages: the properties the VMM programs allocate
 * with. */
static inline aclrtPhysicalMemProp device_prop(void) {
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

#endif
