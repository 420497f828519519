/* notify.c - the notify family through the installed tree: aclrtCreateNotify,
 * aclrtDestroyNotify, aclrtRecordNotify, aclrtWaitAndResetNotify, aclrtGetNotifyId,
 * aclrtNotifyBatchReset, aclrtNotifyGetExportKey, aclrtNotifySetImportPid,
 * aclrtNotifySetImportPidInterServer, aclrtNotifyImportByKey and the count notifies
 * (aclrtCntNotifyCreate, aclrtCntNotifyDestroy, aclrtCntNotifyRecord,
 * aclrtCntNotifyWaitWithTimeout, aclrtCntNotifyReset, aclrtCntNotifyGetId).
 *
 * The cross-process part forks before the runtime starts: the child reads the key from a
 * pipe, is refused while it is not on the whitelist, then imports the notify and records it;
 * the parent's stream waits for that record. */
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "check.h"

#define KEY_LEN 65

/* One line (at most `size` - 1 bytes, without its newline) from `fd`. */
static void read_line(int fd, char *line, size_t size) {
    size_t used = 0;
    while (used + 1 < size) {
        char c;
        ssize_t got = read(fd, &c, 1);
        EXPECT(got == 1);
        if (c == '\n') {
            break;
        }
        line[used++] = c;
    }
    line[used] = '\0';
}

static void write_line(int fd, const char *line) {
    size_t len = strlen(line);
    EXPECT(write(fd, line, len) == (ssize_t)len);
    EXPECT(write(fd, "\n", 1) == 1);
}

/* The child: imports the key it is sent (refused first: not on the whitelist), records the
 * notify on a stream of its own. */
static int child(int in, int out) {
    char key[KEY_LEN + 1];
    char go[8];
    aclrtNotify imported = NULL;
    aclrtStream stream = NULL;
    read_line(in, key, sizeof key);
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK_RC(aclrtNotifyImportByKey(&imported, key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT),
             ACL_ERROR_RT_NO_PERMISSION);
    write_line(out, "refused");
    read_line(in, go, sizeof go);
    EXPECT(strcmp(go, "go") == 0);
    CHECK(aclrtNotifyImportByKey(&imported, key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT));
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtRecordNotify(imported, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtDestroyNotify(imported));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}

/* Records, waits, ids, the batch reset and the argument rules, in this process. */
static void notifies(aclrtStream producer, aclrtStream consumer) {
    aclrtNotify notify = NULL, other = NULL, imported = NULL;
    uint32_t id = 0, other_id = 0;
    char key[KEY_LEN];
    int32_t pids[1] = {1};
    aclrtServerPid server = {0, pids, 1};
    CHECK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    CHECK(aclrtCreateNotify(&other, ACL_NOTIFY_DEFAULT));
    CHECK(aclrtGetNotifyId(notify, &id));
    CHECK(aclrtGetNotifyId(other, &other_id));
    EXPECT(id != other_id);
    /* A record on one stream releases the wait on the other. */
    CHECK(aclrtRecordNotify(notify, producer));
    CHECK(aclrtWaitAndResetNotify(notify, consumer, 5));
    CHECK(aclrtSynchronizeStream(consumer));
    /* The wait reset it: the next wait (1 s) times out on the stream. */
    CHECK(aclrtWaitAndResetNotify(notify, consumer, 1));
    CHECK_RC(aclrtSynchronizeStream(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);
    /* A batch reset forgets a record nobody waited for. */
    CHECK(aclrtRecordNotify(notify, producer));
    CHECK(aclrtSynchronizeStream(producer));
    aclrtNotify both[2] = {notify, other};
    CHECK(aclrtNotifyBatchReset(both, 2));
    CHECK(aclrtWaitAndResetNotify(notify, consumer, 1));
    CHECK_RC(aclrtSynchronizeStream(consumer), ACL_ERROR_RT_WAIT_TIMEOUT);
    /* Export and import in this process. */
    CHECK_RC(aclrtNotifySetImportPid(notify, pids, 1), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtNotifyGetExportKey(notify, key, 64, 0), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtNotifyGetExportKey(notify, key, sizeof key, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    CHECK(aclrtNotifySetImportPid(notify, pids, 1));
    CHECK_RC(aclrtNotifySetImportPidInterServer(notify, &server, 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(aclrtNotifyImportByKey(&imported, key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT));
    CHECK(aclrtRecordNotify(imported, producer));
    CHECK(aclrtWaitAndResetNotify(notify, consumer, 5));
    CHECK(aclrtSynchronizeStream(consumer));
    /* The ACL layer's NULL checks. */
    CHECK_RC(aclrtCreateNotify(NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtCreateNotify(&imported, 7), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_RC(aclrtGetNotifyId(notify, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtNotifyBatchReset(NULL, 1), ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtNotifyImportByKey(&imported, NULL, 0), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtDestroyNotify(imported));
    CHECK(aclrtDestroyNotify(other));
    CHECK(aclrtDestroyNotify(notify));
    CHECK_RC(aclrtDestroyNotify(notify), ACL_ERROR_RT_INVALID_HANDLE);
}

/* The count notify: additions from two streams, a wait for both that clears the counter, a
 * reset on a stream, the id. */
static void count_notifies(aclrtStream producer, aclrtStream consumer) {
    aclrtCntNotify count = NULL;
    uint32_t id = UINT32_MAX;
    aclrtCntNotifyRecordInfo add = {ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1};
    aclrtCntNotifyWaitInfo both = {ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 2, 5, true, {0, 0, 0}};
    aclrtCntNotifyWaitInfo zero = {ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, 5, false, {0, 0, 0}};
    CHECK_RC(aclrtCntNotifyCreate(&count, 1), ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtCntNotifyCreate(&count, 0));
    CHECK(aclrtCntNotifyGetId(count, &id));
    EXPECT(id != UINT32_MAX);
    CHECK(aclrtCntNotifyRecord(count, producer, &add));
    CHECK(aclrtCntNotifyRecord(count, consumer, &add));
    CHECK(aclrtCntNotifyWaitWithTimeout(count, consumer, &both));
    CHECK(aclrtSynchronizeStream(consumer));
    CHECK(aclrtCntNotifyWaitWithTimeout(count, consumer, &zero));
    CHECK(aclrtSynchronizeStream(consumer));
    CHECK(aclrtCntNotifyRecord(count, producer, &add));
    CHECK(aclrtCntNotifyReset(count, producer));
    CHECK(aclrtSynchronizeStream(producer));
    CHECK(aclrtCntNotifyWaitWithTimeout(count, consumer, &zero));
    CHECK(aclrtSynchronizeStream(consumer));
    CHECK_RC(aclrtCntNotifyRecord(count, producer, NULL), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtCntNotifyDestroy(count));
}

/* Another process imports the notify by its key and records it; this process waits. */
static void across_processes(aclrtStream consumer, pid_t pid, int to_child, int from_child) {
    aclrtNotify notify = NULL;
    char key[KEY_LEN];
    char answer[16];
    int32_t allowed[1] = {(int32_t)pid};
    CHECK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    CHECK(aclrtNotifyGetExportKey(notify, key, sizeof key, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    write_line(to_child, key);
    read_line(from_child, answer, sizeof answer);
    EXPECT(strcmp(answer, "refused") == 0);
    CHECK(aclrtNotifySetImportPid(notify, allowed, 1));
    CHECK(aclrtWaitAndResetNotify(notify, consumer, 10));
    write_line(to_child, "go");
    CHECK(aclrtSynchronizeStream(consumer));
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(aclrtDestroyNotify(notify));
}

int main(void) {
    int down[2], up[2];
    EXPECT(pipe(down) == 0 && pipe(up) == 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        return child(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);

    aclrtStream producer = NULL, consumer = NULL;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&producer));
    CHECK(aclrtCreateStream(&consumer));

    notifies(producer, consumer);
    count_notifies(producer, consumer);
    across_processes(consumer, pid, down[1], up[0]);

    CHECK(aclrtDestroyStream(producer));
    CHECK(aclrtDestroyStream(consumer));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    puts("notify: all checks passed");
    return 0;
}
