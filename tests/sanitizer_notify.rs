//! The stream-hazard sanitizer under the safe `Notify` and `CntNotify`: two
//! streams writing one buffer race unless a notify orders them; the race is
//! reported and its ordered twin is not. Software device only (the
//! sanitizer is part of it); a file of its own, since the planted race
//! counts in the process-wide summary.

mod common;

use ascend::stream::{CntCondition, CntNotify, CntRecord, Notify, Stream};
use ascend::testing::{SanitizerChecks, sanitizer_summary, start_sanitizer};
use ascend::{Device, DeviceBuf, sys};
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

const N: usize = 4096;

/// A raw memset of `buf` on `stream` (the safe layer orders its own
/// work, so the race is planted through the raw call).
fn fill(buf: &DeviceBuf<u8>, value: i32, stream: &Stream) {
    // SAFETY: `buf` holds N bytes of device memory and outlives the
    // stream's work (the streams are synchronised before it drops).
    let code = unsafe { sys::aclrtMemsetAsync(buf.as_raw(), N, value, N, stream.as_raw()) };
    ascend::check("aclrtMemsetAsync", code).expect("memset");
}

/// The races reported while two streams write one buffer, ordered (or
/// not) by `order(a, b)`.
fn races(order: impl Fn(&Device, &Stream, &Stream, bool)) -> [u64; 2] {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    start_sanitizer(SanitizerChecks::all());
    let device = Device::new(0).expect("device");
    [true, false].map(|ordered| {
        let before = sanitizer_summary().races;
        let buf = DeviceBuf::<u8>::zeroed(&device, N).expect("buffer");
        let (a, b) = (Stream::new(&device).expect("a"), Stream::new(&device).expect("b"));
        fill(&buf, 1, &a);
        order(&device, &a, &b, ordered);
        fill(&buf, 2, &b);
        a.synchronize().expect("a");
        b.synchronize().expect("b");
        sanitizer_summary().races - before
    })
}

#[test]
fn a_notify_orders_two_streams() {
    if !common::on_software() {
        return;
    }
    let [ordered, planted] = races(|device, a, b, ordered| {
        let notify = Notify::new(device).expect("notify");
        notify.record(a).expect("record");
        if ordered {
            notify.wait_and_reset(b, None).expect("wait");
        }
    });
    assert_eq!(ordered, 0, "the ordered twin was reported");
    assert_eq!(planted, 1, "the race through the notify was not reported once");
}

#[test]
fn a_count_notify_orders_two_streams() {
    if !common::on_software() {
        return;
    }
    let [ordered, planted] = races(|device, a, b, ordered| {
        let count = CntNotify::new(device).expect("count notify");
        count.record(a, CntRecord::Add(1)).expect("record");
        if ordered {
            count.wait(b, CntCondition::AtLeast(1), true, None).expect("wait");
        }
    });
    assert_eq!(ordered, 0, "the ordered twin was reported");
    assert_eq!(planted, 1, "the race through the count notify was not reported once");
}
