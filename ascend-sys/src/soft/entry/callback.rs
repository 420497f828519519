//! Entry points of 3.14 Stream callbacks and host functions.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::state_callbacks;
use crate::soft::compose::streams::{self, SubscriptionKind};
use std::time::{Duration, Instant};

pub(crate) unsafe fn aclrtSubscribeReport(threadId: u64, stream: aclrtStream) -> aclError {
    finish(
        "aclrtSubscribeReport",
        streams::subscribe_callbacks(SubscriptionKind::Report, threadId, stream as usize),
    )
}

pub(crate) unsafe fn aclrtLaunchCallback(
    fn_: aclrtCallback,
    userData: *mut c_void,
    blockType: aclrtCallbackBlockType,
    stream: aclrtStream,
) -> aclError {
    let outcome = (|| {
        if blockType != ACL_CALLBACK_BLOCK && blockType != ACL_CALLBACK_NO_BLOCK {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("blockType {blockType} is neither ACL_CALLBACK_BLOCK nor ACL_CALLBACK_NO_BLOCK"),
            );
        }
        let Some(func) = fn_ else {
            return fail(ACL_ERROR_INVALID_PARAM, "fn is NULL");
        };
        streams::launch_callback(func, userData, blockType == ACL_CALLBACK_BLOCK, stream as usize)
    })();
    finish("aclrtLaunchCallback", outcome)
}

/// The deadline of an `aclrtProcess*` timeout: -1 waits without limit, a
/// positive value that many milliseconds; 0 and values below -1 are
/// refused with `code`.
fn report_deadline(timeout: i32, code: aclError) -> SoftResult<Option<Instant>> {
    match timeout {
        -1 => Ok(None),
        t if t > 0 => Ok(Some(Instant::now() + Duration::from_millis(t as u64))),
        t => fail(
            code,
            format!("timeout {t}: -1 waits without limit, a positive value is a wait in milliseconds"),
        ),
    }
}

pub(crate) unsafe fn aclrtProcessReport(timeout: i32) -> aclError {
    finish(
        "aclrtProcessReport",
        report_deadline(timeout, ACL_ERROR_INVALID_PARAM)
            .and_then(|deadline| streams::process_callbacks(SubscriptionKind::Report, deadline)),
    )
}

pub(crate) unsafe fn aclrtUnSubscribeReport(threadId: u64, stream: aclrtStream) -> aclError {
    finish(
        "aclrtUnSubscribeReport",
        streams::unsubscribe_callbacks(
            SubscriptionKind::Report,
            threadId,
            stream as usize,
            "aclrtUnSubscribeReport",
        ),
    )
}

pub(crate) unsafe fn aclrtLaunchHostFunc(stream: aclrtStream, fn_: aclrtHostFunc, args: *mut c_void) -> aclError {
    let outcome = match fn_ {
        Some(func) => streams::launch_host_func(func, args, stream as usize),
        None => fail(ACL_ERROR_RT_PARAM_INVALID, "fn is NULL"),
    };
    finish("aclrtLaunchHostFunc", outcome)
}

pub(crate) unsafe fn aclrtSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) -> aclError {
    finish(
        "aclrtSubscribeHostFunc",
        streams::subscribe_callbacks(SubscriptionKind::HostFunc, hostFuncThreadId, exeStream as usize),
    )
}

pub(crate) unsafe fn aclrtProcessHostFunc(timeout: i32) -> aclError {
    finish(
        "aclrtProcessHostFunc",
        report_deadline(timeout, ACL_ERROR_RT_PARAM_INVALID)
            .and_then(|deadline| streams::process_callbacks(SubscriptionKind::HostFunc, deadline)),
    )
}

pub(crate) unsafe fn aclrtUnSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) -> aclError {
    finish(
        "aclrtUnSubscribeHostFunc",
        streams::unsubscribe_callbacks(
            SubscriptionKind::HostFunc,
            hostFuncThreadId,
            exeStream as usize,
            "aclrtUnSubscribeHostFunc",
        ),
    )
}

/// The registration name: not NULL, not empty (`ACL_ERROR_INVALID_PARAM`).
///
/// # Safety
///
/// `name`, when not NULL, must point to a NUL-terminated string.
unsafe fn registration_name(name: *const c_char) -> SoftResult<String> {
    non_null(name, "regName")?;
    // SAFETY: checked non-NULL; NUL-terminated by the call's contract.
    let text = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    if text.is_empty() {
        return fail(ACL_ERROR_INVALID_PARAM, "regName is empty");
    }
    Ok(text)
}

pub(crate) unsafe fn aclrtRegStreamStateCallback(
    regName: *const c_char,
    callback: aclrtStreamStateCallback,
    args: *mut c_void,
) -> aclError {
    // SAFETY: `regName` is a C string by the call's contract.
    let outcome =
        unsafe { registration_name(regName) }.and_then(|name| state_callbacks::register_stream(&name, callback, args));
    finish("aclrtRegStreamStateCallback", outcome)
}

pub(crate) unsafe fn aclrtRegDeviceStateCallback(
    regName: *const c_char,
    callback: aclrtDeviceStateCallback,
    args: *mut c_void,
) -> aclError {
    // SAFETY: `regName` is a C string by the call's contract.
    let outcome =
        unsafe { registration_name(regName) }.and_then(|name| state_callbacks::register_device(&name, callback, args));
    finish("aclrtRegDeviceStateCallback", outcome)
}
