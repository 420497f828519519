/*
 * acl/acl.h - the AscendCL header that C and C++ programs include, as laid
 * out by ascend-soft-acl's install.sh. It declares the memory API that
 * ascend-rs binds (acl_memory.h): initialisation, devices, streams and
 * events, device and host memory, VMM, sharing, IPC and the custom
 * allocator. Operator, model and graph APIs are not part of it.
 */
#ifndef ASCEND_SOFT_ACL_ACL_H
#define ASCEND_SOFT_ACL_ACL_H

#include "acl_memory.h"

#endif
