//! `Notify`, `NotifyExportKey` and `CntNotify`: a record on one stream
//! releasing a wait on another, one record per wait, the batch reset, the
//! export and import with the pid whitelist, and the count notify's modes.
//! Each body runs on the software device and on hardware when present;
//! the assertions marked "software device" hold only there (the import
//! in the exporting process, and count notifies, which recent chips only
//! have). The cross-process import is tested on the raw calls
//! (`ascend-sys/tests/soft_notify.rs`).

mod common;

use ascend::ErrorCode;
use ascend::stream::{CntCondition, CntNotify, CntRecord, Notify, NotifyExportKey, Stream};
use common::gate::gated;
use common::{device, on_software, software_only};
use std::time::Duration;

#[test]
fn a_record_releases_a_wait_on_another_stream() {
    let device = device();
    let (producer, consumer) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
    let ready = Notify::new(&device).unwrap();
    gated(&device, &producer, || {
        ready.record(&producer).unwrap();
        ready.wait_and_reset(&consumer, None).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !consumer.query().unwrap(),
            "the consumer waits for the held-back record"
        );
    });
    consumer.synchronize().unwrap();
    producer.synchronize().unwrap();
    ready.destroy().unwrap();
}

#[test]
fn one_record_releases_one_wait() {
    let device = device();
    let (producer, consumer) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
    let notify = Notify::new(&device).unwrap();
    notify.record(&producer).unwrap();
    producer.synchronize().unwrap();
    notify
        .wait_and_reset(&consumer, Some(Duration::from_millis(1)))
        .unwrap();
    consumer.synchronize().unwrap();
    // The wait cleared the bit: a second wait times out on the stream.
    notify
        .wait_and_reset(&consumer, Some(Duration::from_millis(1)))
        .unwrap();
    let error = consumer.synchronize().unwrap_err();
    if on_software() {
        // Software device: the timeout's code is the event wait's.
        assert_eq!(error.code(), Some(ErrorCode::RT_WAIT_TIMEOUT));
    }
    // A batch reset forgets a record nobody waited for.
    let other = Notify::new(&device).unwrap();
    notify.record(&producer).unwrap();
    producer.synchronize().unwrap();
    Notify::reset_all(&[&notify, &other]).unwrap();
    notify
        .wait_and_reset(&consumer, Some(Duration::from_millis(1)))
        .unwrap();
    assert!(consumer.synchronize().is_err());
    assert!(Notify::reset_all(&[]).is_err());
    assert!(notify.wait_and_reset(&consumer, Some(Duration::MAX)).is_err());
}

#[test]
fn ids_differ() {
    let device = device();
    let (a, b) = (Notify::new(&device).unwrap(), Notify::new(&device).unwrap());
    assert_ne!(a.id().unwrap(), b.id().unwrap());
    assert!(format!("{a:?}").starts_with("Notify {"));
}

#[test]
fn an_import_shares_the_bit() {
    // Software device: a process imports its own notify.
    software_only(|| {
        let device = device();
        let notify = Notify::new(&device).unwrap();
        assert!(notify.allow_import(&[1]).is_err(), "not exported yet");
        let key = notify.export().unwrap();
        notify.allow_import(&[std::process::id() as i32 + 1]).unwrap();
        assert_eq!(notify.export().unwrap(), key);
        let received: NotifyExportKey = key.to_string().parse().unwrap();
        let imported = Notify::import(&device, &received).unwrap();
        assert_eq!(imported.id().unwrap(), notify.id().unwrap());
        let stream = Stream::new(&device).unwrap();
        imported.record(&stream).unwrap();
        notify.wait_and_reset(&stream, Some(Duration::from_secs(5))).unwrap();
        stream.synchronize().unwrap();
        imported.destroy().unwrap();
        drop(notify);
        // The exporter's notify is gone: its key imports nothing.
        let error = Notify::import(&device, &key).unwrap_err();
        assert_eq!(error.code(), Some(ErrorCode::RT_PARAM_INVALID));
        assert!("x".repeat(80).parse::<NotifyExportKey>().is_err());
        assert!("a\0b".parse::<NotifyExportKey>().is_err());
    });
}

#[test]
fn count_notifies_count() {
    let device = device();
    let Ok(count) = CntNotify::new(&device) else {
        assert!(!on_software(), "the software device has count notifies");
        return; // a chip without count notifies
    };
    let producers = [Stream::new(&device).unwrap(), Stream::new(&device).unwrap()];
    let consumer = Stream::new(&device).unwrap();
    for producer in &producers {
        count.record(producer, CntRecord::Add(1)).unwrap();
    }
    count
        .wait(&consumer, CntCondition::AtLeast(2), true, Some(Duration::from_secs(5)))
        .unwrap();
    consumer.synchronize().unwrap();
    // Cleared by the wait.
    count.wait(&consumer, CntCondition::Equal(0), false, None).unwrap();
    consumer.synchronize().unwrap();
    count.record(&producers[0], CntRecord::Set(0b0110)).unwrap();
    count.record(&producers[0], CntRecord::Or(0b0001)).unwrap();
    count.record(&producers[0], CntRecord::And(0b0011)).unwrap();
    count
        .wait(
            &consumer,
            CntCondition::AllBits(0b0011),
            false,
            Some(Duration::from_secs(5)),
        )
        .unwrap();
    consumer.synchronize().unwrap();
    count
        .wait(&consumer, CntCondition::Greater(3), false, Some(Duration::from_secs(1)))
        .unwrap();
    assert!(consumer.synchronize().is_err(), "3 > 3 never holds");
    count.reset(&producers[1]).unwrap();
    producers[1].synchronize().unwrap();
    count.wait(&consumer, CntCondition::Less(1), false, None).unwrap();
    consumer.synchronize().unwrap();
    let other = CntNotify::new(&device).unwrap();
    assert_ne!(other.id().unwrap(), count.id().unwrap());
    count.destroy().unwrap();
}
