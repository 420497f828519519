//! The device pool as the runtime's allocator for a stream: the runtime's
//! stored callbacks take blocks from the pool, the stream's work on a block
//! is tracked, so a freed block goes back to the cache with that work and
//! its next user on another stream is ordered after it. Every backend.

mod common;

use ascend::PinnedHostBuf;
use ascend::allocator::AllocatorRegistration;
use ascend::pool::{DevicePool, PoolConfig};
use ascend::stream::{Ordered, Stream};
use ascend::sys;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

#[test]
fn the_runtime_takes_pool_blocks_and_their_stream_work_is_tracked() {
    let device = common::device();
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let (runtime_stream, other) = (
        Arc::new(Stream::new(&device).unwrap()),
        Arc::new(Stream::new(&device).unwrap()),
    );
    let allocator = pool.stream_allocator(&runtime_stream);
    let registration = AllocatorRegistration::register(&runtime_stream, allocator.clone()).unwrap();

    // The runtime's copy of the callbacks, called as an operator library
    // would call them for a workspace.
    let (mut descriptor, mut object) = (null_mut(), null_mut());
    let (mut alloc, mut free, mut address) = (None, None, None);
    // SAFETY: a live stream and valid out-pointers (advise not wanted).
    let code = unsafe {
        sys::aclrtAllocatorGetByStream(
            runtime_stream.as_raw(),
            &mut descriptor,
            &mut object,
            &mut alloc,
            &mut free,
            null_mut(),
            &mut address,
        )
    };
    assert_eq!(code, sys::ACL_SUCCESS);
    let (alloc, free, address) = (alloc.unwrap(), free.unwrap(), address.unwrap());
    // SAFETY: the stored object and callbacks; the registration is alive.
    let block = unsafe { alloc(object, 1000) };
    assert!(!block.is_null());
    assert_eq!(allocator.outstanding(), 1);
    assert_eq!(pool.stats().allocated, 1024, "rounded to 512 bytes");
    // SAFETY: a block the allocator returned, not yet freed.
    let workspace: *mut c_void = unsafe { address(block) };
    // The runtime's work on the block: a memset queued on its stream.
    // SAFETY: 1000 bytes of a live block, on a live stream.
    let code = unsafe { sys::aclrtMemsetAsync(workspace, 1000, 0x3c, 1000, runtime_stream.as_raw()) };
    assert_eq!(code, sys::ACL_SUCCESS);
    // SAFETY: the block is the allocator's, freed once.
    unsafe { free(object, block) };
    let stats = pool.stats();
    assert_eq!((stats.allocated, allocator.outstanding()), (0, 0));
    assert_eq!(stats.active, 1024, "cached with the stream's work still noted");

    // The pool hands the memory out again; a use on another stream is
    // ordered after the runtime's memset by the block's tracks.
    let reused = pool.alloc(1000).unwrap();
    assert_eq!(reused.device_ptr(), workspace.cast_const());
    let mut host = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 1000).unwrap());
    host.copy_from_device(&reused, &other).unwrap();
    assert!(host.get_mut().unwrap().iter().all(|&b| b == 0x3c));

    drop(reused);
    registration.unregister().unwrap();
    assert_eq!(pool.stats().allocated, 0);
}

#[test]
fn a_pool_that_cannot_serve_returns_no_block() {
    use ascend::allocator::DeviceAllocator;
    let device = common::device();
    let granule = ascend::vmm::PhysicalMemProp::device(&device).round_up(1).unwrap();
    let mut config = PoolConfig::default();
    config.small_limit = 64 << 10;
    config.small_chunk = granule;
    config.small_reserve = granule;
    config.large_chunk = granule;
    config.large_reserve = granule;
    let pool = DevicePool::new(&device, config).unwrap();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let allocator = pool.stream_allocator(&stream);
    assert!(allocator.alloc(2 * granule).is_none(), "past the reservation");
    let block = allocator.alloc(granule).expect("one chunk fits");
    // A block it did not hand out is ignored.
    allocator.free(ascend::allocator::Block::new(
        std::ptr::NonNull::<u8>::dangling().cast(),
        8,
    ));
    assert_eq!(allocator.outstanding(), 1);
    allocator.free(block);
    assert_eq!(allocator.outstanding(), 0);
}

#[test]
fn blocks_the_runtime_still_holds_are_kept_when_the_allocator_goes() {
    use ascend::allocator::DeviceAllocator;
    let device = common::device();
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let allocator = pool.stream_allocator(&stream);
    let held = allocator.alloc(4096).expect("a block");
    // Dropped (for example unregistered) with the block never freed.
    drop(allocator);
    // The block stays counted and its memory is not handed out again.
    assert_eq!(pool.stats().allocated, 4096);
    let next = pool.alloc(4096).unwrap();
    assert_ne!(next.device_ptr(), held.address().as_ptr().cast_const());
}
