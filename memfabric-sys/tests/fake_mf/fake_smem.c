/* A stand-in libmf_smem.so for memfabric-sys's loader tests: it reports the
 * ABI version FAKE_ABI and exports only a few functions, so that the tests
 * see a missing symbol, an ABI mismatch and the load order (it is linked
 * against libmf_hybm_core.so without an RPATH, as the real one is). Written
 * for this project; nothing of MemFabric is in it. */
#include <stdint.h>

#ifndef FAKE_ABI
#define FAKE_ABI 0x00010003u
#endif

extern int fake_core_marker(void);

static int32_t last_code = 0;
static const char *last_message = "fake: no error";

uint32_t smem_get_abi_version(void) { return FAKE_ABI; }

int32_t smem_init(uint32_t flags) {
    if (flags != 0) {
        last_code = -2000;
        last_message = "fake: smem_init flags must be 0";
        return -2000;
    }
    last_code = 0;
    last_message = "fake: no error";
    return fake_core_marker();
}

int32_t smem_get_last_err_code(void) { return last_code; }

const char *smem_get_last_err_msg(void) { return last_message; }
