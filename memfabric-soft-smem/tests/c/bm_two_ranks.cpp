/*
 * C++, as MemFabric's headers are (smem.h declares a C++ reference).
 *
 * Two ranks of one BM world on the drop-in libmf_smem.so (ascend-rs's
 * software fabric), written against MemFabric's own headers as a
 * MemFabric program would be: the parent forks one process per rank, as
 * MemFabric's BM sample does.
 *
 * Rank 0 writes a pattern from its host memory into rank 1's global DRAM
 * (H2GH) and global HBM (H2G); rank 1 then reads its own DRAM through
 * smem_bm_gva_to_va and its HBM back with G2H, and checks every byte.
 * Pipes order the two ranks. Exit status 0 when both ranks passed.
 *
 * Usage: bm_two_ranks PORT
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include "smem.h"
#include "smem_bm.h"

#define BYTES (2u << 20)
#define CHECK(what, expr)                                                             \
    do {                                                                              \
        int32_t code_ = (expr);                                                       \
        if (code_ != 0) {                                                             \
            fprintf(stderr, "rank %d: %s failed: %d (%s)\n", rank, what, code_,        \
                    smem_get_last_err_msg() ? smem_get_last_err_msg() : "");          \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static unsigned char pattern(size_t i) { return (unsigned char)((i * 131u + 7u) & 0xff); }

static void wait_byte(int fd, int rank) {
    char byte;
    if (read(fd, &byte, 1) != 1) {
        fprintf(stderr, "rank %d: the other rank went away\n", rank);
        exit(1);
    }
}

static int run_rank(int rank, const char *url, int signal_fd, int wait_fd) {
    CHECK("smem_init", smem_init(0));
    smem_bm_config_t config;
    CHECK("smem_bm_config_init", smem_bm_config_init(&config));
    config.autoRanking = false;
    config.rankId = (uint32_t)rank;
    config.initTimeout = 30;
    config.controlOperationTimeout = 30;
    CHECK("smem_bm_init", smem_bm_init(url, 2, 0, &config));
    if (smem_bm_get_rank_id() != (uint32_t)rank) {
        fprintf(stderr, "rank %d: smem_bm_get_rank_id says %u\n", rank, smem_bm_get_rank_id());
        return 1;
    }

    smem_bm_create_option_t option;
    memset(&option, 0, sizeof option);
    option.localDRAMSize = BYTES;
    option.localHBMSize = BYTES;
    option.maxDramSize = 2 * (uint64_t)BYTES;
    option.maxHbmSize = 2 * (uint64_t)BYTES;
    option.dataOpType = SMEMB_DATA_OP_HOST_SHM;
    smem_bm_t bm = smem_bm_create2(0, &option);
    if (bm == nullptr) {
        fprintf(stderr, "rank %d: smem_bm_create2 failed: %d\n", rank, smem_get_last_err_code());
        return 1;
    }
    CHECK("smem_bm_join", smem_bm_join(bm, 0));

    unsigned char *host = static_cast<unsigned char *>(malloc(BYTES));
    if (host == nullptr) return 1;
    CHECK("smem_bm_register_user_mem", smem_bm_register_user_mem(bm, (uint64_t)(uintptr_t)host, BYTES));
    void *peer_dram = smem_bm_ptr_by_mem_type(bm, SMEM_MEM_TYPE_HOST, 1);
    void *peer_hbm = smem_bm_ptr_by_mem_type(bm, SMEM_MEM_TYPE_DEVICE, 1);
    if (peer_dram == nullptr || peer_hbm == nullptr || smem_bm_get_rank_id_by_gva(bm, peer_dram) != 1) {
        fprintf(stderr, "rank %d: rank 1's global addresses are wrong\n", rank);
        return 1;
    }

    if (rank == 0) {
        for (size_t i = 0; i < BYTES; i++) host[i] = pattern(i);
        smem_copy_params_t to_dram = {host, peer_dram, BYTES, nullptr};
        CHECK("smem_bm_copy H2GH", smem_bm_copy(bm, &to_dram, SMEMB_COPY_H2GH, 0));
        smem_copy_params_t to_hbm = {host, peer_hbm, BYTES, nullptr};
        CHECK("smem_bm_copy H2G", smem_bm_copy(bm, &to_hbm, SMEMB_COPY_H2G, 0));
        if (write(signal_fd, "w", 1) != 1) return 1;
        wait_byte(wait_fd, rank); /* rank 1 has checked */
    } else {
        wait_byte(wait_fd, rank); /* rank 0 has written */
        void *mine = nullptr;
        CHECK("smem_bm_gva_to_va", smem_bm_gva_to_va(bm, peer_dram, SMEM_MEM_TYPE_LOCAL_HOST, &mine));
        for (size_t i = 0; i < BYTES; i++) {
            if (static_cast<unsigned char *>(mine)[i] != pattern(i)) {
                fprintf(stderr, "rank 1: DRAM byte %zu is %u, not %u\n", i, static_cast<unsigned char *>(mine)[i], pattern(i));
                return 1;
            }
        }
        memset(host, 0, BYTES);
        smem_copy_params_t from_hbm = {peer_hbm, host, BYTES, nullptr};
        CHECK("smem_bm_copy G2H", smem_bm_copy(bm, &from_hbm, SMEMB_COPY_G2H, 0));
        for (size_t i = 0; i < BYTES; i++) {
            if (host[i] != pattern(i)) {
                fprintf(stderr, "rank 1: HBM byte %zu is %u, not %u\n", i, host[i], pattern(i));
                return 1;
            }
        }
        if (write(signal_fd, "c", 1) != 1) return 1;
    }

    CHECK("smem_bm_unregister_user_mem", smem_bm_unregister_user_mem(bm, (uint64_t)(uintptr_t)host));
    free(host);
    CHECK("smem_bm_leave", smem_bm_leave(bm, 0));
    smem_bm_destroy(bm);
    smem_bm_uninit(0);
    smem_uninit();
    printf("rank %d: ok\n", rank);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PORT\n", argv[0]);
        return 2;
    }
    char url[64];
    snprintf(url, sizeof url, "tcp://127.0.0.1:%s", argv[1]);
    int to_one[2], to_zero[2];
    if (pipe(to_one) != 0 || pipe(to_zero) != 0) return 1;
    pid_t ranks[2];
    for (int rank = 0; rank < 2; rank++) {
        ranks[rank] = fork();
        if (ranks[rank] < 0) return 1;
        if (ranks[rank] == 0) {
            int signal_fd = rank == 0 ? to_one[1] : to_zero[1];
            int wait_fd = rank == 0 ? to_zero[0] : to_one[0];
            exit(run_rank(rank, url, signal_fd, wait_fd));
        }
    }
    close(to_one[0]); close(to_one[1]); close(to_zero[0]); close(to_zero[1]);
    int failed = 0;
    for (int rank = 0; rank < 2; rank++) {
        int status = 0;
        if (waitpid(ranks[rank], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "rank %d failed (status %d)\n", rank, status);
            failed = 1;
        }
    }
    return failed;
}
