//! Peer access between devices (`acl-behaviour.md` §11).
//!
//! On the software device every pair of distinct devices can access each
//! other. Access is enabled one direction at a time (current device →
//! peer), process-wide, and a device-to-device copy between two devices
//! needs it (see [`check_copy`]).

use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::segments::Segments;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// Which device may access which peer: `(from, to)` pairs. This family's
/// state, behind its own lock.
static ENABLED: Mutex<BTreeSet<(i32, i32)>> = Mutex::new(BTreeSet::new());

fn enabled() -> Ranked<'static, BTreeSet<(i32, i32)>> {
    lock_order::lock(&ENABLED, Rank::Peers)
}

/// `aclrtDeviceCanAccessPeer` after the ACL layer's checks: both ids must
/// be devices; every pair of distinct devices can (1).
pub(crate) fn can_access(device: i32, peer: i32) -> SoftResult<i32> {
    let core = started::core()?;
    core.device(peer)?;
    core.device(device)?;
    Ok(1)
}

/// `aclrtDeviceEnablePeerAccess` after the flags check: the current device
/// gains access to `peer` (one direction). Enabling it again succeeds and
/// changes nothing (the runtime leaves this to the driver; the software
/// device chooses idempotence, see `docs/runtime-choices.md`).
pub(crate) fn enable(peer: i32) -> SoftResult {
    let device = current::require()?;
    if device == peer {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("peerDeviceId {peer} is the current device"),
        );
    }
    started::core()?.device(peer)?;
    enabled().insert((device, peer));
    Ok(())
}

/// `aclrtDeviceDisablePeerAccess`: the current device loses access to
/// `peer`. Disabling access that is not enabled is refused with
/// `ACL_ERROR_RT_PARAM_INVALID` (a driver decision on hardware; see
/// `docs/runtime-choices.md`).
pub(crate) fn disable(peer: i32) -> SoftResult {
    let device = current::require()?;
    if device == peer {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("peerDeviceId {peer} is the current device"),
        );
    }
    started::core()?.device(peer)?;
    if !enabled().remove(&(device, peer)) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("peer access from device {device} to device {peer} is not enabled"),
        );
    }
    Ok(())
}

/// Whether `device` has enabled access to `peer`
/// (`aclrtDeviceEnablePeerAccess` on `device`).
pub(crate) fn is_enabled(device: i32, peer: i32) -> bool {
    enabled().contains(&(device, peer))
}

/// The peer-access rule for a copy whose two sides were translated to `to`
/// and `from` ([`crate::soft::compose::translate::Translator::resolve`]): nothing to check unless both
/// are device memory of two different devices (one branch on the hot path),
/// then [`check_copy`].
#[inline]
pub(crate) fn check_sides(to: &Segments, from: &Segments) -> SoftResult {
    match (to.device, from.device) {
        (Some(dst), Some(src)) if dst != src => check_copy(dst, src),
        _ => Ok(()),
    }
}

/// The rule for a copy whose destination is on device `dst` and source on
/// device `src` (`dst != src`): the device driving the copy — this thread's
/// current device — must have enabled access to the other one. When the
/// current device is neither, it needs access to both; a thread with no
/// current device (a stream worker) needs access enabled in either
/// direction between the two. Refused with `ACL_ERROR_RT_PARAM_INVALID`
/// (the runtime leaves this to the driver; see `docs/runtime-choices.md`).
#[cold]
pub(crate) fn check_copy(dst: i32, src: i32) -> SoftResult {
    let allowed = {
        let enabled = enabled();
        let on = |from: i32, to: i32| enabled.contains(&(from, to));
        match current::device() {
            Some(current) if current == dst => on(dst, src),
            Some(current) if current == src => on(src, dst),
            Some(current) => on(current, dst) && on(current, src),
            None => on(dst, src) || on(src, dst),
        }
    };
    if allowed {
        return Ok(());
    }
    let how = match current::device() {
        Some(current) if current == dst || current == src => {
            let other = if current == dst { src } else { dst };
            format!("call aclrtDeviceEnablePeerAccess({other}, 0) with device {current} current")
        }
        Some(current) => format!("device {current} (current) needs peer access to both devices"),
        None => "no peer access is enabled between them".to_string(),
    };
    fail(
        ACL_ERROR_RT_PARAM_INVALID,
        format!("copy from device {src} to device {dst} needs peer access: {how}"),
    )
}
