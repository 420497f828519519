//! Custom allocators registered on streams: the callbacks the runtime
//! stores reach the Rust allocator, registration rules, and clean-up.
//!
//! The tests of this file serialise on one lock, so the software device's
//! descriptor counts they compare are theirs alone.

mod common;

use ascend::allocator::{AllocatorRegistration, Block, DeviceAllocator, registered_on, registered_on_raw};
use ascend::stream::Stream;
use ascend::{Device, DeviceBuf, Error, sys};
use common::{device, on_software, software_only};
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::{NonNull, null_mut};
use std::sync::{Arc, Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises the tests of this file; returns the descriptors live now.
fn serial() -> (MutexGuard<'static, ()>, usize) {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    (guard, live_descriptors())
}

fn live_descriptors() -> usize {
    sys::soft::live().allocator_descriptors
}

/// What the allocator was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Alloc(usize),
    Advise(usize, Option<usize>),
    Free { address: usize, size: usize, tag: usize },
}

/// Hands out one `DeviceBuf` per block, tagged with a serial number, and
/// records every call.
struct Recording {
    device: Device,
    live: Mutex<HashMap<usize, DeviceBuf<u8>>>,
    calls: Mutex<Vec<Call>>,
}

impl Recording {
    fn new(device: &Device) -> Arc<Self> {
        Arc::new(Self {
            device: device.clone(),
            live: Mutex::default(),
            calls: Mutex::default(),
        })
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn live_blocks(&self) -> usize {
        self.live.lock().unwrap().len()
    }

    fn give(&self, size: usize) -> Option<Block> {
        let buf = DeviceBuf::<u8>::zeroed(&self.device, size).ok()?;
        let address = NonNull::new(buf.as_raw())?;
        let mut live = self.live.lock().unwrap();
        live.insert(address.as_ptr() as usize, buf);
        Some(Block::new(address, size).with_tag(live.len()))
    }
}

// SAFETY: every block is a live `DeviceBuf` of `size` bytes, kept in `live`
// until `free` takes it back.
unsafe impl DeviceAllocator for Recording {
    fn alloc(&self, size: usize) -> Option<Block> {
        self.calls.lock().unwrap().push(Call::Alloc(size));
        self.give(size)
    }

    fn alloc_advise(&self, size: usize, hint: Option<NonNull<c_void>>) -> Option<Block> {
        self.calls
            .lock()
            .unwrap()
            .push(Call::Advise(size, hint.map(|h| h.as_ptr() as usize)));
        self.give(size)
    }

    fn free(&self, block: Block) {
        self.calls.lock().unwrap().push(Call::Free {
            address: block.address().as_ptr() as usize,
            size: block.size(),
            tag: block.tag(),
        });
        self.live.lock().unwrap().remove(&(block.address().as_ptr() as usize));
    }
}

/// Panics in every call.
struct Panicking;

// SAFETY: it never returns a block.
unsafe impl DeviceAllocator for Panicking {
    fn alloc(&self, _: usize) -> Option<Block> {
        panic!("alloc panics on purpose")
    }

    fn free(&self, _: Block) {
        panic!("free panics on purpose")
    }
}

/// Never has memory.
struct Empty;

// SAFETY: it never returns a block.
unsafe impl DeviceAllocator for Empty {
    fn alloc(&self, _: usize) -> Option<Block> {
        None
    }

    fn free(&self, _: Block) {}
}

/// What the runtime stored for a stream.
struct Stored {
    descriptor: sys::aclrtAllocatorDesc,
    object: sys::aclrtAllocator,
    alloc: unsafe extern "C" fn(sys::aclrtAllocator, usize) -> *mut c_void,
    free: unsafe extern "C" fn(sys::aclrtAllocator, sys::aclrtAllocatorBlock),
    advise: unsafe extern "C" fn(sys::aclrtAllocator, usize, sys::aclrtAllocatorAddr) -> *mut c_void,
    address: unsafe extern "C" fn(sys::aclrtAllocatorBlock) -> *mut c_void,
}

fn stored_for(stream: &Stream) -> Stored {
    let (mut descriptor, mut object) = (null_mut(), null_mut());
    let (mut alloc, mut free, mut advise, mut address) = (None, None, None, None);
    // SAFETY: a live stream and valid out-pointers.
    let code = unsafe {
        sys::aclrtAllocatorGetByStream(
            stream.as_raw(),
            &mut descriptor,
            &mut object,
            &mut alloc,
            &mut free,
            &mut advise,
            &mut address,
        )
    };
    assert_eq!(code, sys::ACL_SUCCESS);
    Stored {
        descriptor,
        object,
        alloc: alloc.expect("alloc callback stored"),
        free: free.expect("free callback stored"),
        advise: advise.expect("alloc-advise callback stored"),
        address: address.expect("get-address callback stored"),
    }
}

#[test]
fn the_runtime_reaches_the_rust_allocator_through_the_stored_callbacks() {
    let (_serial, start) = serial();
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let allocator = Recording::new(&device);
    assert!(!registered_on(&stream).unwrap());
    let registration = AllocatorRegistration::register(&stream, allocator.clone()).unwrap();
    assert!(registered_on(&stream).unwrap());
    software_only(|| assert_eq!(live_descriptors(), start + 1));

    let stored = stored_for(&stream);
    assert_eq!(stored.descriptor, registration.descriptor_raw());
    assert!(!stored.object.is_null());

    // Allocate through the runtime's copy of the callbacks.
    // SAFETY: the object and callbacks the runtime stored, as the runtime
    // would call them; the registration is alive.
    let block = unsafe { (stored.alloc)(stored.object, 1000) };
    assert!(!block.is_null());
    assert_eq!(allocator.calls(), [Call::Alloc(1000)]);
    assert_eq!(registration.outstanding_blocks(), 1);
    // SAFETY: a block the allocator returned and not yet freed.
    let address = unsafe { (stored.address)(block) };
    assert!(allocator.live.lock().unwrap().contains_key(&(address as usize)));

    // The address is real device memory: data copied there reads back.
    let data: Vec<u8> = (0..=255).cycle().take(1000).collect();
    let mut back = vec![0u8; 1000];
    // SAFETY: `address` is a live 1000-byte device allocation; `data` and
    // `back` hold 1000 bytes.
    unsafe {
        assert_eq!(
            sys::aclrtMemcpy(
                address,
                1000,
                data.as_ptr().cast(),
                1000,
                sys::ACL_MEMCPY_HOST_TO_DEVICE
            ),
            sys::ACL_SUCCESS
        );
        assert_eq!(
            sys::aclrtMemcpy(
                back.as_mut_ptr().cast(),
                1000,
                address,
                1000,
                sys::ACL_MEMCPY_DEVICE_TO_HOST
            ),
            sys::ACL_SUCCESS
        );
    }
    assert_eq!(back, data);

    // An advised allocation sees the hint.
    // SAFETY: as above.
    let advised = unsafe { (stored.advise)(stored.object, 512, address) };
    assert!(!advised.is_null());
    assert_eq!(allocator.calls()[1], Call::Advise(512, Some(address as usize)));
    assert_eq!(registration.outstanding_blocks(), 2);

    // Both come back through the free callback, with size and tag.
    // SAFETY: blocks the allocator returned, each freed once.
    unsafe {
        (stored.free)(stored.object, block);
        (stored.free)(stored.object, advised);
    }
    let calls = allocator.calls();
    assert_eq!(
        calls[2],
        Call::Free {
            address: address as usize,
            size: 1000,
            tag: 1
        }
    );
    assert!(matches!(calls[3], Call::Free { size: 512, tag: 2, .. }));
    assert_eq!(registration.outstanding_blocks(), 0);
    assert_eq!(allocator.live_blocks(), 0);

    registration.unregister().unwrap();
    assert!(!registered_on(&stream).unwrap());
    assert_eq!(
        Arc::strong_count(&allocator),
        1,
        "the registration released the allocator"
    );
    software_only(|| assert_eq!(live_descriptors(), start));
    stream.destroy().unwrap();
}

#[test]
fn one_allocator_per_stream() {
    let (_serial, start) = serial();
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let first = AllocatorRegistration::register(&stream, Arc::new(Empty)).unwrap();
    let second = AllocatorRegistration::register(&stream, Arc::new(Empty));
    assert!(matches!(second, Err(Error::InvalidArgument { .. })), "{second:?}");
    software_only(|| assert_eq!(live_descriptors(), start + 1, "the refused one left nothing"));
    drop(first);
    assert!(!registered_on(&stream).unwrap());
    let again = AllocatorRegistration::register(&stream, Arc::new(Empty)).unwrap();
    assert!(registered_on(&stream).unwrap());
    // A second stream takes its own allocator.
    let other = Stream::new(&device).unwrap();
    let beside = AllocatorRegistration::register(&other, Arc::new(Empty)).unwrap();
    assert_ne!(again.descriptor_raw(), beside.descriptor_raw());
    drop((again, beside));
    software_only(|| assert_eq!(live_descriptors(), start));
}

#[test]
fn panics_and_failures_stay_on_the_rust_side() {
    let (_serial, start) = serial();
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let registration = AllocatorRegistration::register(&stream, Arc::new(Panicking)).unwrap();
    let stored = stored_for(&stream);
    // SAFETY: the stored object and callback; the panic is caught inside.
    let block = unsafe { (stored.alloc)(stored.object, 64) };
    assert!(block.is_null(), "a panicking allocation is a failed one");
    assert_eq!(registration.outstanding_blocks(), 0);
    drop(registration);

    let registration = AllocatorRegistration::register(&stream, Arc::new(Empty)).unwrap();
    let stored = stored_for(&stream);
    // SAFETY: as above.
    let block = unsafe { (stored.advise)(stored.object, 64, null_mut()) };
    assert!(block.is_null(), "no memory: NULL");
    // NULL blocks are ignored by the free and get-address callbacks.
    // SAFETY: NULL is handled without dereferencing.
    unsafe {
        (stored.free)(stored.object, null_mut());
        assert!((stored.address)(null_mut()).is_null());
    }
    drop(registration);
    software_only(|| assert_eq!(live_descriptors(), start));
}

#[test]
fn a_panicking_free_is_contained() {
    /// Gives real blocks, panics when one comes back.
    struct PanicOnFree(Arc<Recording>);
    // SAFETY: the blocks are the inner allocator's.
    unsafe impl DeviceAllocator for PanicOnFree {
        fn alloc(&self, size: usize) -> Option<Block> {
            self.0.alloc(size)
        }
        fn free(&self, _: Block) {
            panic!("free panics on purpose")
        }
    }
    let (_serial, start) = serial();
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let inner = Recording::new(&device);
    let registration = AllocatorRegistration::register(&stream, Arc::new(PanicOnFree(inner.clone()))).unwrap();
    let stored = stored_for(&stream);
    // SAFETY: the stored object and callbacks; the block is freed once.
    unsafe {
        let block = (stored.alloc)(stored.object, 128);
        assert!(!block.is_null());
        (stored.free)(stored.object, block); // panics inside, caught
    }
    assert_eq!(
        registration.outstanding_blocks(),
        0,
        "the block was taken back before the panic"
    );
    drop(registration);
    software_only(|| assert_eq!(live_descriptors(), start));
}

#[test]
fn a_replaced_allocator_is_not_unregistered_by_the_old_registration() {
    let (_serial, start) = serial();
    let device = device();
    let (first_stream, second_stream) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
    let first = AllocatorRegistration::register(&first_stream, Arc::new(Empty)).unwrap();
    let second = AllocatorRegistration::register(&second_stream, Recording::new(&device)).unwrap();
    // A raw call replaces the first stream's allocator with the second's.
    // SAFETY: a live stream and a live, complete descriptor whose object
    // outlives this registration (removed again below).
    let code = unsafe { sys::aclrtAllocatorRegister(first_stream.as_raw(), second.descriptor_raw()) };
    assert_eq!(code, sys::ACL_SUCCESS);
    first.unregister().unwrap();
    assert!(registered_on(&first_stream).unwrap(), "the replacement was left alone");
    assert_eq!(stored_for(&first_stream).descriptor, second.descriptor_raw());
    // SAFETY: removes the raw registration made above.
    assert_eq!(
        unsafe { sys::aclrtAllocatorUnregister(first_stream.as_raw()) },
        sys::ACL_SUCCESS
    );
    drop(second);
    assert!(!registered_on(&second_stream).unwrap());
    software_only(|| assert_eq!(live_descriptors(), start));
}

#[test]
fn null_streams_are_refused_in_rust() {
    let (_serial, start) = serial();
    // SAFETY: NULL is refused before any use.
    let result = unsafe { AllocatorRegistration::register_raw(null_mut(), Arc::new(Empty)) };
    assert!(matches!(result, Err(Error::InvalidArgument { .. })), "{result:?}");
    assert!(matches!(
        registered_on_raw(null_mut()),
        Err(Error::InvalidArgument { .. })
    ));
    software_only(|| assert_eq!(live_descriptors(), start));
}

#[test]
fn failed_registrations_leave_nothing_behind() {
    if !on_software() {
        return;
    }
    let (_serial, start) = serial();
    let device = device();
    let stream = Stream::new(&device).unwrap();
    for api in [
        "aclrtAllocatorSetFreeFuncToDesc",
        "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
        "aclrtAllocatorRegister",
    ] {
        let allocator = Recording::new(&device);
        sys::soft::inject_fault(api, 1, sys::ACL_ERROR_INVALID_PARAM).unwrap();
        let error = AllocatorRegistration::register(&stream, allocator.clone()).unwrap_err();
        assert!(
            matches!(error, Error::Acl { api: failed, .. } if failed == api),
            "{error}"
        );
        assert_eq!(live_descriptors(), start, "{api}: descriptor destroyed");
        assert_eq!(Arc::strong_count(&allocator), 1, "{api}: allocator released");
        assert!(!registered_on(&stream).unwrap());
    }
}

#[test]
fn a_failed_unregister_keeps_the_allocator_alive() {
    if !on_software() {
        return;
    }
    let (_serial, start) = serial();
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let allocator = Recording::new(&device);
    let registration = AllocatorRegistration::register(&stream, allocator.clone()).unwrap();
    sys::soft::inject_fault("aclrtAllocatorUnregister", 1, sys::ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    let error = registration.unregister().unwrap_err();
    assert_eq!(error.code(), Some(ascend::ErrorCode(sys::ACL_ERROR_RT_INTERNAL_ERROR)));
    // The runtime still holds the object, so it was leaked, not freed: its
    // callbacks keep working.
    assert!(registered_on(&stream).unwrap());
    assert_eq!(Arc::strong_count(&allocator), 2);
    let stored = stored_for(&stream);
    // SAFETY: the object the runtime still holds (leaked, so valid).
    unsafe {
        let block = (stored.alloc)(stored.object, 32);
        assert!(!block.is_null());
        (stored.free)(stored.object, block);
    }
    assert_eq!(allocator.live_blocks(), 0);
    // SAFETY: removes the registration the failed call left behind.
    assert_eq!(
        unsafe { sys::aclrtAllocatorUnregister(stream.as_raw()) },
        sys::ACL_SUCCESS
    );
    assert_eq!(live_descriptors(), start, "the descriptor itself was destroyed");
}
