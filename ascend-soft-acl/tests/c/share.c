/* Two processes share device memory: physical memory through a V2
 * shareable handle, and device memory through an IPC key, both behind the
 * pid whitelist (the child is refused until the parent adds it). */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

struct offer {
    uint64_t handle;    /* the V2 shareable handle */
    size_t size;        /* the physical allocation's size */
    char key[65];       /* the IPC key */
};

static void send_all(int fd, const void *data, size_t size) {
    EXPECT(write(fd, data, size) == (ssize_t)size);
}

static void receive_all(int fd, void *data, size_t size) {
    EXPECT(read(fd, data, size) == (ssize_t)size);
}

static void check_bytes(const void *device, size_t size, unsigned char byte) {
    unsigned char *host = malloc(size);
    EXPECT(host != NULL);
    CHECK(aclrtMemcpy(host, size, device, size, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < size; i++) EXPECT(host[i] == byte);
    free(host);
}

static int child(int from_parent, int to_parent) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid));
    send_all(to_parent, &pid, sizeof pid);
    struct offer offer;
    receive_all(from_parent, &offer, sizeof offer);

    /* Not whitelisted yet: both imports are refused. */
    aclrtDrvMemHandle handle = NULL;
    void *ipc = NULL;
    EXPECT(aclrtMemImportFromShareableHandleV2(&offer.handle, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &handle) != ACL_SUCCESS);
    EXPECT(aclrtIpcMemImportByKey(&ipc, offer.key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT) != ACL_SUCCESS);
    char step = 'r';
    send_all(to_parent, &step, 1);
    receive_all(from_parent, &step, 1);

    /* Whitelisted: import, map, read the parent's bytes, write ours. */
    CHECK(aclrtMemImportFromShareableHandleV2(&offer.handle, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &handle));
    void *base = NULL;
    CHECK(aclrtReserveMemAddress(&base, offer.size, 0, NULL, 0));
    CHECK(aclrtMapMem(base, offer.size, 0, handle, 0));
    check_bytes(base, offer.size, 0x42);
    CHECK(aclrtMemset(base, offer.size, 0x43, offer.size));
    CHECK(aclrtUnmapMem(base));
    CHECK(aclrtFreePhysical(handle));
    CHECK(aclrtReleaseMemAddress(base));

    CHECK(aclrtIpcMemImportByKey(&ipc, offer.key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT));
    check_bytes(ipc, 4096, 0x24);
    CHECK(aclrtIpcMemClose(offer.key));

    step = 'd';
    send_all(to_parent, &step, 1);
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}

int main(void) {
    int down[2], up[2];
    EXPECT(pipe(down) == 0 && pipe(up) == 0);
    pid_t forked = fork();
    EXPECT(forked >= 0);
    if (forked == 0) {
        close(down[1]);
        close(up[0]);
        return child(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    struct offer offer;
    memset(&offer, 0, sizeof offer);
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &offer.size));
    aclrtDrvMemHandle physical = NULL;
    void *base = NULL, *buffer = NULL;
    CHECK(aclrtMallocPhysical(&physical, offer.size, &prop, 0));
    CHECK(aclrtReserveMemAddress(&base, offer.size, 0, NULL, 0));
    CHECK(aclrtMapMem(base, offer.size, 0, physical, 0));
    CHECK(aclrtMemset(base, offer.size, 0x42, offer.size));
    CHECK(aclrtMemExportToShareableHandleV2(physical, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &offer.handle));
    CHECK(aclrtMalloc(&buffer, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(buffer, 4096, 0x24, 4096));
    CHECK(aclrtIpcMemGetExportKey(buffer, 4096, offer.key, sizeof offer.key, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));

    int32_t pid = 0;
    receive_all(up[0], &pid, sizeof pid);
    send_all(down[1], &offer, sizeof offer);
    char step = 0;
    receive_all(up[0], &step, 1);
    EXPECT(step == 'r');
    CHECK(aclrtMemSetPidToShareableHandleV2(&offer.handle, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &pid, 1));
    CHECK(aclrtIpcMemSetImportPid(offer.key, &pid, 1));
    send_all(down[1], &step, 1);
    receive_all(up[0], &step, 1);
    EXPECT(step == 'd');
    int status = 0;
    EXPECT(waitpid(forked, &status, 0) == forked);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    check_bytes(base, offer.size, 0x43); /* the child's bytes */
    CHECK(aclrtIpcMemClose(offer.key));
    CHECK(aclrtFree(buffer));
    CHECK(aclrtUnmapMem(base));
    CHECK(aclrtFreePhysical(physical));
    CHECK(aclrtReleaseMemAddress(base));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    puts("share: ok");
    return 0;
}
