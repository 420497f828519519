//! `ascend::testing::LeakCheck` cannot be fooled: it compares the
//! identities of what the checked code created (not counts), and sees misuse
//! recorded while it ran even if the global list was drained.
//!
//! Software device only (the check reads the software device's tables): on
//! another backend every test returns at once. A file of its own, and its
//! tests run one at a time, because the resources made *before* each check
//! must not land inside another test's check.

mod common;

use ascend::sys::{self, soft};
use ascend::testing::{LeakCheck, LeakCheckError};
use ascend::{Device, DeviceBuf};
use common::on_software;
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// The file-wide lock, or `None` (skip the test) off the software device.
fn software() -> Option<MutexGuard<'static, ()>> {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    on_software().then_some(guard)
}

#[test]
fn a_leak_balanced_by_freeing_an_older_buffer_is_caught() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let kept = DeviceBuf::<u8>::zeroed(&device, 4096).unwrap();
    let older = DeviceBuf::<u8>::zeroed(&device, 4096).unwrap();
    let check = LeakCheck::start().unwrap();
    drop(older);
    let leaked = DeviceBuf::<u8>::zeroed(&device, 4096).unwrap();
    let address = leaked.as_raw();
    std::mem::forget(leaked);
    // Every count is what it was at the start: one buffer of 4096 bytes
    // freed, one made.
    assert_eq!(check.live_now(), *check.baseline());
    let error = check.finish().expect_err("the new buffer leaked");
    let LeakCheckError::Leaked { leaked } = &error else {
        panic!("expected a leak, got {error}");
    };
    assert_eq!(leaked.len(), 1, "only what the checked code leaked: {error}");
    assert_eq!(leaked[0].kind, soft::ResourceKind::DeviceMemory);
    assert_eq!(leaked[0].id, address as u64);
    assert!(leaked[0].bytes >= 4096);
    assert_eq!(leaked[0].device, Some(0));
    let message = error.to_string();
    assert!(message.contains(&format!("{:#x}", address as u64)), "{message}");
    assert!(!message.contains(&format!("{:#x}", kept.as_raw() as u64)), "{message}");
    // SAFETY: the address of the buffer forgotten above, freed once.
    assert_eq!(unsafe { sys::aclrtFree(address) }, sys::ACL_SUCCESS);
    drop(kept);
}

#[test]
fn draining_the_misuse_list_inside_the_check_does_not_hide_misuse() {
    let Some(_serial) = software() else { return };
    let check = LeakCheck::start().unwrap();
    // A descriptor that was never created: the runtime would dereference
    // it, the software device records misuse.
    let bogus = 0x40 as sys::aclrtAllocatorDesc;
    let object = 0x80 as sys::aclrtAllocator;
    // SAFETY: the software device dereferences neither an unknown
    // descriptor nor the allocator object.
    let code = unsafe { sys::aclrtAllocatorSetObjToDesc(bogus, object) };
    assert_ne!(code, sys::ACL_SUCCESS);
    assert!(!soft::take_misuse().is_empty(), "recorded, then drained");
    assert_eq!(check.new_misuse().len(), 1);
    let error = check.finish().expect_err("the misuse is still seen");
    let LeakCheckError::Misuse { detected } = &error else {
        panic!("expected misuse, got {error}");
    };
    assert_eq!(detected.len(), 1, "{error}");
    assert_eq!(detected[0].api, "aclrtAllocatorSetObjToDesc");
}

#[test]
fn freeing_older_resources_inside_the_check_is_not_a_failure() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let older = DeviceBuf::<u32>::from_slice(&device, &[1, 2, 3]).unwrap();
    let stream = ascend::stream::Stream::new(&device).unwrap();
    let check = LeakCheck::start().unwrap();
    let made_and_freed = DeviceBuf::<u32>::zeroed(&device, 16).unwrap();
    drop(made_and_freed);
    drop(stream);
    assert_eq!(older.to_vec().unwrap(), [1, 2, 3]);
    drop(older);
    assert!(check.leaked_now().is_empty());
    check.finish().unwrap();
}
