//! Compile-time checks of the C struct layouts.
//!
//! The numbers are those of the project's reference (`memfabric.md` §1.3,
//! computed with g++ against the headers of wheel 1.3.0 on x86_64), plus the
//! two structs it does not list (`smem_batch_copy_result_t`,
//! `smem_trans_quant_copy_param_t`), measured the same way. They are written
//! by hand, so a declaration that drifts from the real ABI fails to compile.
//! LP64 only (x86_64 and aarch64, the only targets MemFabric ships for).
#![cfg(target_pointer_width = "64")]

use crate::types::*;
use core::mem::{align_of, offset_of, size_of};

// smem_tls_config: a bool and 7 × char[256] = 1793 / 1.
const _: () = assert!(size_of::<smem_tls_config>() == 1793);
const _: () = assert!(align_of::<smem_tls_config>() == 1);
const _: () = assert!(offset_of!(smem_tls_config, tlsEnable) == 0);
const _: () = assert!(offset_of!(smem_tls_config, caPath) == 1);
const _: () = assert!(offset_of!(smem_tls_config, decrypterLibPath) == 1 + 6 * 256);

// smem_bm_config_t = 3680 / 4.
const _: () = assert!(size_of::<smem_bm_config_t>() == 3680);
const _: () = assert!(align_of::<smem_bm_config_t>() == 4);
const _: () = assert!(offset_of!(smem_bm_config_t, initTimeout) == 0);
const _: () = assert!(offset_of!(smem_bm_config_t, controlOperationTimeout) == 8);
const _: () = assert!(offset_of!(smem_bm_config_t, startConfigStoreServer) == 12);
const _: () = assert!(offset_of!(smem_bm_config_t, autoRanking) == 16);
const _: () = assert!(offset_of!(smem_bm_config_t, rankId) == 20);
const _: () = assert!(offset_of!(smem_bm_config_t, flags) == 24);
const _: () = assert!(offset_of!(smem_bm_config_t, hcomUrl) == 28);
const _: () = assert!(offset_of!(smem_bm_config_t, hcomTlsConfig) == 92);
const _: () = assert!(offset_of!(smem_bm_config_t, storeTlsConfig) == 1885);

// smem_bm_create_option_t = 336 / 8.
const _: () = assert!(size_of::<smem_bm_create_option_t>() == 336);
const _: () = assert!(align_of::<smem_bm_create_option_t>() == 8);
const _: () = assert!(offset_of!(smem_bm_create_option_t, maxDramSize) == 0);
const _: () = assert!(offset_of!(smem_bm_create_option_t, localHBMSize) == 24);
const _: () = assert!(offset_of!(smem_bm_create_option_t, dataOpType) == 32);
const _: () = assert!(offset_of!(smem_bm_create_option_t, enable56BitsGva) == 36);
const _: () = assert!(offset_of!(smem_bm_create_option_t, flags) == 40);
const _: () = assert!(offset_of!(smem_bm_create_option_t, tag) == 44);
const _: () = assert!(offset_of!(smem_bm_create_option_t, tagOpInfo) == 76);
const _: () = assert!(offset_of!(smem_bm_create_option_t, dramShmFd) == 332);

// smem_copy_params_t = 32 / 8.
const _: () = assert!(size_of::<smem_copy_params_t>() == 32);
const _: () = assert!(align_of::<smem_copy_params_t>() == 8);
const _: () = assert!(offset_of!(smem_copy_params_t, src) == 0);
const _: () = assert!(offset_of!(smem_copy_params_t, dest) == 8);
const _: () = assert!(offset_of!(smem_copy_params_t, dataSize) == 16);
const _: () = assert!(offset_of!(smem_copy_params_t, stream) == 24);

// smem_batch_copy_params_t = 40 / 8.
const _: () = assert!(size_of::<smem_batch_copy_params_t>() == 40);
const _: () = assert!(align_of::<smem_batch_copy_params_t>() == 8);
const _: () = assert!(offset_of!(smem_batch_copy_params_t, sources) == 0);
const _: () = assert!(offset_of!(smem_batch_copy_params_t, destinations) == 8);
const _: () = assert!(offset_of!(smem_batch_copy_params_t, dataSizes) == 16);
const _: () = assert!(offset_of!(smem_batch_copy_params_t, batchSize) == 24);
const _: () = assert!(offset_of!(smem_batch_copy_params_t, stream) == 32);

// smem_batch_copy_result_t = 16 / 8.
const _: () = assert!(size_of::<smem_batch_copy_result_t>() == 16);
const _: () = assert!(align_of::<smem_batch_copy_result_t>() == 8);
const _: () = assert!(offset_of!(smem_batch_copy_result_t, batchSize) == 8);

// smem_trans_config_t = 1880 / 4.
const _: () = assert!(size_of::<smem_trans_config_t>() == 1880);
const _: () = assert!(align_of::<smem_trans_config_t>() == 4);
const _: () = assert!(offset_of!(smem_trans_config_t, role) == 0);
const _: () = assert!(offset_of!(smem_trans_config_t, dataOpType) == 16);
const _: () = assert!(offset_of!(smem_trans_config_t, nic) == 20);
const _: () = assert!(offset_of!(smem_trans_config_t, hcomTlsConfig) == 84);

// smem_trans_quant_copy_param_t = 72 / 8.
const _: () = assert!(size_of::<smem_trans_quant_copy_param_t>() == 72);
const _: () = assert!(align_of::<smem_trans_quant_copy_param_t>() == 8);
const _: () = assert!(offset_of!(smem_trans_quant_copy_param_t, batchSize) == 48);
const _: () = assert!(offset_of!(smem_trans_quant_copy_param_t, unitNum) == 52);
const _: () = assert!(offset_of!(smem_trans_quant_copy_param_t, stream) == 56);
const _: () = assert!(offset_of!(smem_trans_quant_copy_param_t, inputType) == 64);
const _: () = assert!(offset_of!(smem_trans_quant_copy_param_t, flags) == 68);

// Every C enum is 4 bytes; handles are pointer-sized.
const _: () = assert!(size_of::<smem_bm_mem_type>() == 4);
const _: () = assert!(size_of::<smem_bm_data_op_type>() == 4);
const _: () = assert!(size_of::<smem_bm_copy_type>() == 4);
const _: () = assert!(size_of::<smem_trans_role_t>() == 4);
const _: () = assert!(size_of::<smem_bm_t>() == 8);
const _: () = assert!(size_of::<smem_trans_t>() == 8);
// A nullable callback is one pointer.
const _: () = assert!(size_of::<smem_logger_fn>() == 8);
