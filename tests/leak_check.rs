//! `ascend::testing::LeakCheck` cannot be fooled: it compares the
//! identities of what the checked code created (not counts), and sees misuse
//! recorded while it ran even if the global list was drained.
//!
//! Pools (a `DevicePool` or `PinnedPool` made *before* the check) report
//! the blocks the checked code leaves live, by identity too, and their own
//! cache is not a leak.
//!
//! Software device only (the check reads the software device's tables): on
//! another backend every test returns at once. A file of its own, and its
//! tests run one at a time, because the resources made *before* each check
//! must not land inside another test's check.

mod common;

use ascend::pool::{DevicePool, PinnedPool, PoolConfig};
use ascend::stream::Stream;
use ascend::sys::{self, soft};
use ascend::testing::{LeakCheck, LeakCheckError, PoolBlockLeak, PoolKind, on_software_device};
use ascend::{Device, DeviceBuf};
use common::on_software;
use std::sync::Arc;
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

/// The pool blocks of a failed check, or a panic naming what it was.
fn pool_blocks(error: &LeakCheckError) -> &[PoolBlockLeak] {
    match error {
        LeakCheckError::PoolLeaked { blocks, .. } => blocks,
        other => panic!("expected leaked pool blocks, got {other}"),
    }
}

#[test]
fn a_device_pool_block_forgotten_inside_the_check_is_named_with_its_pool() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    // Warm: the block inside is a hit of the thread cache, no runtime call.
    drop(pool.alloc(4096).unwrap());
    let mut address = 0;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        on_software_device(|| {
            let block = pool.alloc(4096).unwrap();
            address = block.device_ptr() as u64;
            std::mem::forget(block); // never given back
        });
    }));
    let panic = outcome.expect_err("the forgotten block fails the check");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("1 pool block(s)"), "{message}");
    assert!(message.contains("DevicePool of device 0"), "{message}");
    assert!(message.contains("tag \"default\""), "{message}");
    assert!(message.contains(&format!("{address:#x}, 4096 bytes")), "{message}");
}

#[test]
fn a_pool_block_balanced_by_freeing_an_older_one_is_caught() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let older = pool.alloc(4096).unwrap();
    let older_address = older.device_ptr();
    let kept = pool.alloc_tagged(1 << 20, "weights").unwrap();
    let check = LeakCheck::start().unwrap();
    drop(older);
    // The pool gives the new block the older one's memory: the same
    // address, the same counts.
    let leaked = pool.alloc(4096).unwrap();
    assert_eq!(leaked.device_ptr(), older_address);
    let large = pool.alloc_tagged(1 << 20, "weights").unwrap();
    let stats = pool.stats();
    assert_eq!(check.leaked_blocks_now().len(), 2);
    let error = check.finish().expect_err("two blocks handed out inside are live");
    let blocks = pool_blocks(&error);
    assert_eq!(blocks.len(), 2, "only what the checked code kept: {error}");
    assert_eq!(
        (blocks[0].pool, blocks[0].device, blocks[0].tag.as_deref()),
        (PoolKind::Device, 0, Some("default"))
    );
    assert_eq!((blocks[0].address, blocks[0].bytes), (older_address as u64, 4096));
    assert_eq!(blocks[1].tag.as_deref(), Some("weights"));
    assert_eq!(
        (blocks[1].address, blocks[1].bytes),
        (large.device_ptr() as u64, 1 << 20)
    );
    assert!(
        !error.to_string().contains(&format!("{:#x}", kept.device_ptr() as u64)),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("2 block(s), 1052672 bytes, of the DevicePool of device 0"),
        "{error}"
    );
    // The check changed nothing the pool counts.
    assert_eq!(pool.stats(), stats);
    drop((leaked, large, kept));
}

#[test]
fn pool_blocks_given_back_inside_the_check_pass_and_the_cache_is_not_a_leak() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let stream = Arc::new(Stream::new(&device).unwrap());
    // Made before the check, nothing mapped yet.
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let pinned = PinnedPool::new(&device);
    let held_before = pool.alloc(4096).unwrap();
    on_software_device(|| {
        // Blocks made and dropped inside: the segments grow (new chunks,
        // new mappings) and keep them cached, with their queued work.
        let small = pool.alloc(4096).unwrap();
        small.fill_bytes(1, &stream).unwrap();
        let large = pool.alloc(8 << 20).unwrap();
        large.fill_bytes(2, &stream).unwrap();
        let tagged = pool.alloc_tagged(4096, "kv_cache").unwrap(); // a new tag: new reservations
        drop((small, large, tagged));
        // A new pinned buffer, cached when dropped; one taken out of its
        // pool for good and freed.
        let mut staging = pinned.alloc(3000).unwrap();
        staging.get_mut().unwrap()[0] = 7;
        drop(staging);
        drop(pinned.alloc(1 << 20).unwrap().into_inner().unwrap());
        // Blocks of a pool made and dropped inside.
        let inner = DevicePool::new(&device, PoolConfig::default()).unwrap();
        drop(inner.alloc(512).unwrap());
        drop(inner);
    });
    let stats = pool.stats();
    assert!(stats.reserved > 8 << 20, "the cache stayed: {stats:?}");
    assert_eq!(stats.allocated, 4096, "the block made before is still live");
    assert_eq!(pinned.stats().cached_bytes, 4096);
    // The cache is used after the check as before it.
    let again = pool.alloc(8 << 20).unwrap();
    drop((again, held_before));
    stream.synchronize().unwrap();
}

#[test]
fn a_pinned_pool_buffer_kept_past_the_check_is_named_with_its_pool() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let pool = PinnedPool::new(&device);
    let older = pool.alloc(4096).unwrap();
    let address = older.host_ptr() as u64;
    let check = LeakCheck::start().unwrap();
    drop(older);
    let kept = pool.alloc(4096).unwrap(); // the older buffer, from the cache
    assert_eq!(kept.host_ptr() as u64, address);
    let error = check.finish().expect_err("the buffer handed out inside is live");
    let blocks = pool_blocks(&error);
    assert_eq!(blocks.len(), 1, "{error}");
    assert_eq!(
        (blocks[0].pool, blocks[0].device, blocks[0].tag.as_deref()),
        (PoolKind::Pinned, 0, None)
    );
    assert_eq!((blocks[0].address, blocks[0].bytes), (address, 4096));
    assert!(error.to_string().contains("PinnedPool of device 0"), "{error}");
    drop(kept);
    // Given back: the next check passes.
    let check = LeakCheck::start().unwrap();
    drop(pool.alloc(4096).unwrap());
    check.finish().unwrap();
}

#[test]
fn a_block_forgotten_in_a_pool_made_inside_is_named_with_the_memory_it_keeps() {
    let Some(_serial) = software() else { return };
    let device = Device::new(0).unwrap();
    let check = LeakCheck::start().unwrap();
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let block = pool.alloc(4096).unwrap();
    let address = block.device_ptr() as u64;
    drop(pool); // the block keeps the pool's memory alive
    let error = check.finish().expect_err("the block and its pool's memory leaked");
    let LeakCheckError::PoolLeaked { blocks, resources } = &error else {
        panic!("expected leaked pool blocks, got {error}");
    };
    assert_eq!(blocks.len(), 1, "{error}");
    assert_eq!((blocks[0].address, blocks[0].bytes), (address, 4096));
    assert!(
        resources
            .iter()
            .any(|resource| resource.kind == soft::ResourceKind::Mapping),
        "{error}"
    );
    drop(block);
    assert!(LeakCheck::start().unwrap().leaked_blocks_now().is_empty());
}
