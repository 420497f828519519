/* acl/acl_base.h - programs that include it get the same declarations as acl/acl.h. */
#ifndef ASCEND_SOFT_ACL_ACL_BASE_H
#define ASCEND_SOFT_ACL_ACL_BASE_H

#include "acl.h"

#endif
