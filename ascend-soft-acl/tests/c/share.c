/* share.c - two processes share device memory, both ways the API offers:
 *
 *   1. VMM shareable handles: the parent exports a physical allocation
 *      (aclrtMemExportToShareableHandle), the child's import is refused until the parent
 *      whitelists the child's pid (aclrtMemSetPidToShareableHandle); then the child maps
 *      it and reads what the parent wrote, and writes an answer the parent reads.
 *   2. IPC keys: the parent exports an aclrtMalloc allocation under a key
 *      (aclrtIpcMemGetExportKey); the child's aclrtIpcMemImportByKey is refused until the
 *      parent calls aclrtIpcMemSetImportPid; then the child reads and writes it.
 *
 * The child is this program again (fork + exec, "share child"), talking to the parent
 * over two pipes, one line per message. */
#include <inttypes.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define IPC_BYTES (1u << 20)
#define KEY_LEN 65

static FILE *to_peer, *from_peer;

static void send_line(const char *text) {
    EXPECT(fprintf(to_peer, "%s\n", text) > 0);
    EXPECT(fflush(to_peer) == 0);
}

static void receive_line(char *line, size_t size) {
    EXPECT(fgets(line, (int)size, from_peer) != NULL);
    line[strcspn(line, "\n")] = '\0';
}

static size_t granularity(void) {
    aclrtPhysicalMemProp prop = device_prop();
    size_t value = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &value));
    return value;
}

/* Maps `handle` (of `size` bytes) into a fresh range. */
static void *map_whole(aclrtDrvMemHandle handle, size_t size) {
    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, size, 0, NULL, 0));
    CHECK(aclrtMapMem(va, size, 0, handle, 0));
    return va;
}

static void unmap_whole(void *va) {
    CHECK(aclrtUnmapMem(va));
    CHECK(aclrtReleaseMemAddress(va));
}

static int child(void) {
    char line[256];
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid));
    snprintf(line, sizeof line, "%d", (int)pid);
    send_line(line);

    /* 1. Shareable handle. */
    receive_line(line, sizeof line);
    uint64_t shareable = strtoull(line, NULL, 10);
    aclrtDrvMemHandle handle = NULL;
    CHECK_RC(aclrtMemImportFromShareableHandle(shareable, 0, &handle), ACL_ERROR_RT_NO_PERMISSION);
    send_line("refused");
    receive_line(line, sizeof line);
    EXPECT(strcmp(line, "whitelisted") == 0);
    CHECK(aclrtMemImportFromShareableHandle(shareable, 0, &handle));
    size_t size = granularity();
    void *va = map_whole(handle, size);
    uint64_t word = 0;
    CHECK(aclrtMemcpy(&word, sizeof word, va, sizeof word, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(word == UINT64_C(0x1122334455667788));
    word = UINT64_C(0xCAFEF00D);
    CHECK(aclrtMemcpy((char *)va + 8, sizeof word, &word, sizeof word, ACL_MEMCPY_HOST_TO_DEVICE));
    unmap_whole(va);
    CHECK(aclrtFreePhysical(handle));
    send_line("handle done");

    /* 2. IPC key. */
    char key[KEY_LEN];
    receive_line(key, sizeof key);
    void *imported = NULL;
    CHECK_RC(aclrtIpcMemImportByKey(&imported, key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT), ACL_ERROR_RT_NO_PERMISSION);
    send_line("refused");
    receive_line(line, sizeof line);
    EXPECT(strcmp(line, "whitelisted") == 0);
    CHECK(aclrtIpcMemImportByKey(&imported, key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT));
    unsigned char bytes[16];
    CHECK(aclrtMemcpy(bytes, sizeof bytes, imported, sizeof bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < sizeof bytes; i++) {
        EXPECT(bytes[i] == 0x5A);
    }
    CHECK(aclrtMemset(imported, IPC_BYTES, 0x6B, 16));
    CHECK(aclrtIpcMemClose(key));
    send_line("key done");

    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}

static int parent(const char *self) {
    int down[2], up[2];
    EXPECT(pipe(down) == 0 && pipe(up) == 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        char in[16], out[16];
        snprintf(in, sizeof in, "%d", down[0]);
        snprintf(out, sizeof out, "%d", up[1]);
        close(down[1]);
        close(up[0]);
        execl(self, self, "child", in, out, (char *)NULL);
        perror("execl");
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    to_peer = fdopen(down[1], "w");
    from_peer = fdopen(up[0], "r");
    EXPECT(to_peer != NULL && from_peer != NULL);

    char line[256];
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    receive_line(line, sizeof line);
    int32_t child_pid = (int32_t)strtol(line, NULL, 10);
    EXPECT(child_pid == (int32_t)pid);

    /* 1. Shareable handle. */
    size_t size = granularity();
    aclrtPhysicalMemProp prop = device_prop();
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMallocPhysical(&handle, size, &prop, 0));
    void *va = map_whole(handle, size);
    uint64_t word = UINT64_C(0x1122334455667788);
    CHECK(aclrtMemcpy(va, sizeof word, &word, sizeof word, ACL_MEMCPY_HOST_TO_DEVICE));
    uint64_t shareable = 0;
    CHECK(aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
                                          &shareable));
    snprintf(line, sizeof line, "%" PRIu64, shareable);
    send_line(line);
    receive_line(line, sizeof line);
    EXPECT(strcmp(line, "refused") == 0);
    CHECK(aclrtMemSetPidToShareableHandle(shareable, &child_pid, 1));
    send_line("whitelisted");
    receive_line(line, sizeof line);
    EXPECT(strcmp(line, "handle done") == 0);
    CHECK(aclrtMemcpy(&word, sizeof word, (char *)va + 8, sizeof word, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(word == UINT64_C(0xCAFEF00D));
    unmap_whole(va);
    CHECK(aclrtFreePhysical(handle));

    /* 2. IPC key. */
    void *device = NULL;
    CHECK(aclrtMalloc(&device, IPC_BYTES, ACL_MEM_MALLOC_HUGE_ONLY));
    CHECK(aclrtMemset(device, IPC_BYTES, 0x5A, IPC_BYTES));
    char key[KEY_LEN];
    memset(key, 0, sizeof key);
    CHECK(aclrtIpcMemGetExportKey(device, IPC_BYTES, key, KEY_LEN, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));
    send_line(key);
    receive_line(line, sizeof line);
    EXPECT(strcmp(line, "refused") == 0);
    CHECK(aclrtIpcMemSetImportPid(key, &child_pid, 1));
    send_line("whitelisted");
    receive_line(line, sizeof line);
    EXPECT(strcmp(line, "key done") == 0);
    unsigned char bytes[16];
    CHECK(aclrtMemcpy(bytes, sizeof bytes, device, sizeof bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < sizeof bytes; i++) {
        EXPECT(bytes[i] == 0x6B);
    }
    CHECK(aclrtIpcMemClose(key));
    CHECK(aclrtFree(device));

    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("share: ok\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        to_peer = fdopen(atoi(argv[3]), "w");
        from_peer = fdopen(atoi(argv[2]), "r");
        EXPECT(to_peer != NULL && from_peer != NULL);
        return child();
    }
    return parent(argv[0]);
}
