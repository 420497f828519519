/* check.h - what every test program does with a return code. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "acl/acl.h"

#define CHECK(call)                                                                          \
    do {                                                                                     \
        aclError check_rc_ = (call);                                                         \
        if (check_rc_ != ACL_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,        \
                    check_rc_, aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "(no message)"); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

#define EXPECT(condition)                                                                    \
    do {                                                                                     \
        if (!(condition)) {                                                                  \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition);         \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)
#endif
