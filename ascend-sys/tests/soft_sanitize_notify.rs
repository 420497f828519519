//! The stream-hazard sanitizer orders through notifies as through events:
//! a record on stream A and a wait on stream B order B's later work after
//! A's earlier work. A planted race through a notify (and a count notify)
//! is reported; its correctly ordered twin is not. Software device only
//! (the sanitizer is part of it).
//!
//! The sanitizer is process-wide, so the tests of this file run one at a
//! time (a lock), each watching the misuse list only while it runs.

mod soft_common;

use ascend_sys::*;
use soft_common::sanitize::{done, fill, free, malloc, ok, planted, reports, stream};
use std::ptr::null_mut;

const N: usize = 4096;

#[test]
fn a_race_through_a_notify() {
    planted(&["write after write", "aclrtMemsetAsync"], |ordered| {
        let (a, b, buf) = (stream(), stream(), malloc(N));
        let mut notify = null_mut();
        // SAFETY: a valid out-pointer.
        ok(unsafe { aclrtCreateNotify(&mut notify, 0) }, "create notify");
        fill(buf, 1, N, a);
        // SAFETY: live handles.
        ok(unsafe { aclrtRecordNotify(notify, a) }, "record notify");
        if ordered {
            // SAFETY: live handles.
            ok(unsafe { aclrtWaitAndResetNotify(notify, b, 0) }, "wait notify");
        }
        fill(buf, 2, N, b);
        done(a);
        done(b);
        // SAFETY: a live notify, destroyed once.
        ok(unsafe { aclrtDestroyNotify(notify) }, "destroy notify");
        free(buf);
    });
}

#[test]
fn a_wait_queued_before_its_record_orders_too() {
    // B queues its wait before A records: B's write still comes after A's.
    let found = reports(|| {
        let (a, b, buf) = (stream(), stream(), malloc(N));
        let mut notify = null_mut();
        // SAFETY: a valid out-pointer.
        ok(unsafe { aclrtCreateNotify(&mut notify, 0) }, "create notify");
        // SAFETY: live handles.
        ok(unsafe { aclrtWaitAndResetNotify(notify, b, 0) }, "wait notify");
        fill(buf, 2, N, b);
        fill(buf, 1, N, a);
        // SAFETY: live handles.
        ok(unsafe { aclrtRecordNotify(notify, a) }, "record notify");
        done(a);
        done(b);
        // SAFETY: a live notify, destroyed once.
        ok(unsafe { aclrtDestroyNotify(notify) }, "destroy notify");
        free(buf);
    });
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_race_through_a_count_notify() {
    planted(&["write after write", "aclrtMemsetAsync"], |ordered| {
        let (a, b, buf) = (stream(), stream(), malloc(N));
        let mut count = null_mut();
        // SAFETY: a valid out-pointer.
        ok(unsafe { aclrtCntNotifyCreate(&mut count, 0) }, "create count notify");
        fill(buf, 1, N, a);
        let mut record = aclrtCntNotifyRecordInfo {
            mode: ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE,
            value: 1,
        };
        // SAFETY: live handles, a valid info.
        ok(
            unsafe { aclrtCntNotifyRecord(count, a, &mut record) },
            "record count notify",
        );
        if ordered {
            let mut wait = aclrtCntNotifyWaitInfo {
                mode: ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE,
                value: 1,
                timeout: 0,
                isClear: false,
                rsv: [0; 3],
            };
            // SAFETY: live handles, a valid info.
            ok(
                unsafe { aclrtCntNotifyWaitWithTimeout(count, b, &mut wait) },
                "wait count notify",
            );
        }
        fill(buf, 2, N, b);
        done(a);
        done(b);
        // SAFETY: a live count notify, destroyed once.
        ok(unsafe { aclrtCntNotifyDestroy(count) }, "destroy count notify");
        free(buf);
    });
}
