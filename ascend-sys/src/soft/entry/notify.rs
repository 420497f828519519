//! Entry points of 3.14 Notifies: the ACL layer's NULL checks (100000),
//! then the runtime's rules in `compose::streams` (`notify_ops.rs`).
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::streams::{self, NotifyKind};
use std::ffi::c_char;

fn create_into(out: *mut *mut c_void, create: impl FnOnce() -> SoftResult<usize>) -> SoftResult {
    let handle = create()?;
    // SAFETY: checked non-NULL by the caller; valid by the call's contract.
    unsafe { put(out, handle as *mut c_void) };
    Ok(())
}

pub(crate) unsafe fn aclrtCreateNotify(notify: *mut aclrtNotify, flag: u64) -> aclError {
    let outcome = non_null(notify, "notify").and_then(|()| create_into(notify, || streams::create_notify(flag)));
    finish("aclrtCreateNotify", outcome)
}

pub(crate) unsafe fn aclrtDestroyNotify(notify: aclrtNotify) -> aclError {
    let outcome =
        non_null(notify, "notify").and_then(|()| streams::destroy_notify(notify as usize, NotifyKind::Notify));
    finish("aclrtDestroyNotify", outcome)
}

pub(crate) unsafe fn aclrtRecordNotify(notify: aclrtNotify, stream: aclrtStream) -> aclError {
    let outcome = non_null(notify, "notify").and_then(|()| streams::record_notify(notify as usize, stream as usize));
    finish("aclrtRecordNotify", outcome)
}

pub(crate) unsafe fn aclrtWaitAndResetNotify(notify: aclrtNotify, stream: aclrtStream, timeout: u32) -> aclError {
    let outcome = non_null(notify, "notify")
        .and_then(|()| streams::wait_and_reset_notify(notify as usize, stream as usize, timeout));
    finish("aclrtWaitAndResetNotify", outcome)
}

fn id_into(handle: *mut c_void, kind: NotifyKind, out: *mut u32) -> SoftResult {
    let id = streams::notify_id(handle as usize, kind)?;
    // SAFETY: checked non-NULL by the caller; valid by the call's contract.
    unsafe { put(out, id) };
    Ok(())
}

pub(crate) unsafe fn aclrtGetNotifyId(notify: aclrtNotify, notifyId: *mut u32) -> aclError {
    let outcome = non_null(notify, "notify")
        .and(non_null(notifyId, "notifyId"))
        .and_then(|()| id_into(notify, NotifyKind::Notify, notifyId));
    finish("aclrtGetNotifyId", outcome)
}

pub(crate) unsafe fn aclrtNotifyBatchReset(notifies: *mut aclrtNotify, num: usize) -> aclError {
    let outcome = non_null(notifies, "notifies").and_then(|()| {
        // The runtime takes `num` as a 32-bit count.
        let num = num as u32 as usize;
        let handles: Vec<usize> = if num == 0 {
            Vec::new()
        } else {
            // SAFETY: checked non-NULL; `notifies` holds `num` handles by
            // the call's contract.
            unsafe { std::slice::from_raw_parts(notifies, num) }
                .iter()
                .map(|&handle| handle as usize)
                .collect()
        };
        streams::notify_batch_reset(&handles)
    });
    finish("aclrtNotifyBatchReset", outcome)
}

pub(crate) unsafe fn aclrtNotifyGetExportKey(
    notify: aclrtNotify,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> aclError {
    let outcome = non_null(notify, "notify").and(non_null(key, "key")).and_then(|()| {
        // The ACL layer hands the runtime `len` as a 32-bit value.
        let len = len as u32 as usize;
        let text = streams::notify_export_key(notify as usize, len, flags)?;
        let bytes = text.as_bytes();
        if bytes.len() >= len {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("len {len} cannot hold the key ({} bytes and its NUL)", bytes.len()),
            );
        }
        // SAFETY: checked non-NULL; `key` holds `len` bytes by the call's
        // contract, and the key and its NUL fit in them (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), key.cast::<u8>(), bytes.len());
            key.add(bytes.len()).write(0);
        }
        Ok(())
    });
    finish("aclrtNotifyGetExportKey", outcome)
}

pub(crate) unsafe fn aclrtNotifySetImportPid(notify: aclrtNotify, pid: *mut i32, num: usize) -> aclError {
    let outcome = non_null(notify, "notify").and(non_null(pid, "pid")).and_then(|()| {
        // The runtime takes `num` as an `int`.
        let count = num as i32;
        let pids = if count <= 0 {
            &[][..]
        } else {
            // SAFETY: checked non-NULL; `pid` holds `num` entries by the
            // call's contract.
            unsafe { std::slice::from_raw_parts(pid, count as usize) }
        };
        streams::notify_set_import_pids(notify as usize, pids)
    });
    finish("aclrtNotifySetImportPid", outcome)
}

pub(crate) unsafe fn aclrtNotifySetImportPidInterServer(
    notify: aclrtNotify,
    serverPids: *mut aclrtServerPid,
    num: usize,
) -> aclError {
    // No ACL-layer checks: the runtime refuses NULL and 0 with 107000.
    let outcome = (|| {
        if notify.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "notify is NULL");
        }
        // SAFETY: `serverPids` holds `num` entries by the call's contract.
        unsafe { check_server_pids(serverPids, num) }?;
        streams::notify_set_import_pids_inter_server(notify as usize)
    })();
    finish("aclrtNotifySetImportPidInterServer", outcome)
}

pub(crate) unsafe fn aclrtNotifyImportByKey(notify: *mut aclrtNotify, key: *const c_char, flags: u64) -> aclError {
    let outcome = non_null(notify, "notify").and(non_null(key, "key")).and_then(|()| {
        // SAFETY: checked non-NULL; a NUL-terminated string by the call's
        // contract.
        let text = unsafe { CStr::from_ptr(key) }.to_str().or_else(|_| {
            fail(
                ACL_ERROR_RT_PARAM_INVALID,
                "key is not valid UTF-8 text (aclrtNotifyGetExportKey makes keys)",
            )
        })?;
        create_into(notify, || streams::notify_import_by_key(text, flags))
    });
    finish("aclrtNotifyImportByKey", outcome)
}

pub(crate) unsafe fn aclrtCntNotifyCreate(cntNotify: *mut aclrtCntNotify, flag: u64) -> aclError {
    // The runtime's NULL check (the ACL layer has none): 107000.
    let outcome = if cntNotify.is_null() {
        fail(ACL_ERROR_RT_PARAM_INVALID, "cntNotify is NULL")
    } else {
        create_into(cntNotify, || streams::create_cnt_notify(flag))
    };
    finish("aclrtCntNotifyCreate", outcome)
}

/// The runtime's NULL check of a count notify (the ACL layer has none).
fn cnt_non_null(cntNotify: aclrtCntNotify) -> SoftResult {
    if cntNotify.is_null() {
        fail(ACL_ERROR_RT_PARAM_INVALID, "cntNotify is NULL")
    } else {
        Ok(())
    }
}

pub(crate) unsafe fn aclrtCntNotifyDestroy(cntNotify: aclrtCntNotify) -> aclError {
    let outcome = cnt_non_null(cntNotify).and_then(|()| streams::destroy_notify(cntNotify as usize, NotifyKind::Count));
    finish("aclrtCntNotifyDestroy", outcome)
}

pub(crate) unsafe fn aclrtCntNotifyRecord(
    cntNotify: aclrtCntNotify,
    stream: aclrtStream,
    info: *mut aclrtCntNotifyRecordInfo,
) -> aclError {
    let outcome = non_null(info, "info").and(cnt_non_null(cntNotify)).and_then(|()| {
        // SAFETY: checked non-NULL; valid for a read by the call's contract.
        let info = unsafe { info.read() };
        streams::cnt_notify_record(cntNotify as usize, stream as usize, info.mode, info.value)
    });
    finish("aclrtCntNotifyRecord", outcome)
}

pub(crate) unsafe fn aclrtCntNotifyWaitWithTimeout(
    cntNotify: aclrtCntNotify,
    stream: aclrtStream,
    info: *mut aclrtCntNotifyWaitInfo,
) -> aclError {
    let outcome = non_null(info, "info").and(cnt_non_null(cntNotify)).and_then(|()| {
        // SAFETY: checked non-NULL; valid for a read by the call's contract.
        // `isClear` is read as a byte: any non-zero value is true, as in C.
        let (mode, value, timeout, clear) = unsafe {
            (
                (&raw const (*info).mode).read(),
                (&raw const (*info).value).read(),
                (&raw const (*info).timeout).read(),
                (&raw const (*info).isClear).cast::<u8>().read() != 0,
            )
        };
        streams::cnt_notify_wait(cntNotify as usize, stream as usize, mode, value, timeout, clear)
    });
    finish("aclrtCntNotifyWaitWithTimeout", outcome)
}

pub(crate) unsafe fn aclrtCntNotifyReset(cntNotify: aclrtCntNotify, stream: aclrtStream) -> aclError {
    let outcome = cnt_non_null(cntNotify).and_then(|()| streams::cnt_notify_reset(cntNotify as usize, stream as usize));
    finish("aclrtCntNotifyReset", outcome)
}

pub(crate) unsafe fn aclrtCntNotifyGetId(cntNotify: aclrtCntNotify, notifyId: *mut u32) -> aclError {
    let outcome = cnt_non_null(cntNotify).and_then(|()| {
        if notifyId.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "notifyId is NULL");
        }
        id_into(cntNotify, NotifyKind::Count, notifyId)
    });
    finish("aclrtCntNotifyGetId", outcome)
}
