//! How `aclrtMalloc*` sizes are rounded, and the configurations
//! `aclrtMallocWithCfg` accepts.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;

/// How a variant rounds the requested size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    /// `round_up(size, 32) + 32` (`aclrtMalloc`, `aclrtMallocCached`).
    Padded,
    /// `round_up(size, 32)` (`aclrtMallocAlign32`, `aclrtMallocWithCfg`, and
    /// the 1 GiB-page policies of `aclrtMalloc`).
    Align32,
}

/// The padding `aclrtMalloc` adds (the SoC spec's value on A2/A3/310P/910).
const PAD: u64 = 32;

/// The size actually reserved for a request of `size` bytes.
pub(crate) fn rounded_size(size: usize, rounding: Rounding, policy: aclrtMemMallocPolicy) -> SoftResult<u64> {
    // The padded calls map only the exact policy values: anything else,
    // bit-ORs included, is the default policy and padded
    // (acl-behaviour.md §4, #4). Only the 1 GiB-page policies are not.
    let pad = match rounding {
        Rounding::Padded if policy != ACL_MEM_MALLOC_HUGE1G_ONLY && policy != ACL_MEM_MALLOC_HUGE1G_ONLY_P2P => PAD,
        _ => 0,
    };
    (size as u64)
        .checked_next_multiple_of(32)
        .and_then(|rounded| rounded.checked_add(pad))
        .filter(|&total| total <= usize::MAX as u64)
        .map_or_else(
            || {
                fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("size {size} overflows when rounded up"),
                )
            },
            Ok,
        )
}

/// Checks an `aclrtMallocWithCfg` configuration the way the runtime does.
///
/// # Safety
///
/// `cfg`, when not NULL, must point to a valid `aclrtMallocConfig` whose
/// `attrs` points to `numAttrs` attributes.
pub(crate) unsafe fn check_device_cfg(cfg: *const aclrtMallocConfig) -> SoftResult {
    // SAFETY: the caller guarantees `cfg` is NULL or valid.
    let Some(cfg) = (unsafe { cfg.as_ref() }) else {
        return Ok(());
    };
    if cfg.attrs.is_null() {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "cfg->attrs is NULL");
    }
    let device = current::require()?;
    // SAFETY: the caller guarantees `attrs` holds `numAttrs` entries.
    let attrs = unsafe { std::slice::from_raw_parts(cfg.attrs, cfg.numAttrs) };
    for attr in attrs {
        match attr.attr {
            ACL_RT_MEM_ATTR_RSV | ACL_RT_MEM_ATTR_MODULE_ID => {}
            ACL_RT_MEM_ATTR_DEVICE_ID => {
                // SAFETY: the union member named by `attr.attr`.
                let wanted = unsafe { attr.value.deviceId };
                if i64::from(wanted) != i64::from(device) {
                    return fail(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("ACL_RT_MEM_ATTR_DEVICE_ID {wanted} is not the current device {device}"),
                    );
                }
            }
            other => {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("attribute kind {other} is not accepted for device memory"),
                );
            }
        }
    }
    Ok(())
}
