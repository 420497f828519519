//! Managed memory on the software device (`aclrtMemAllocManaged`,
//! `aclrtMemManagedAdvise`, `aclrtMemManagedGetAttr(s)`,
//! `aclrtMemManagedPrefetch(Batch)Async`): the ACL layer's checks
//! (`hicann/runtime` `src/acl/aclrt_impl/memory.cpp`, `ACL_ERROR_INVALID_PARAM`)
//! before the runtime's (`src/runtime/api/impl/api_error_uvm.cc`,
//! `api_error.cc` `ManagedMemAlloc`: `ACL_ERROR_RT_PARAM_INVALID`), the host
//! and the device seeing the same bytes, advice reported back by the
//! attributes, and prefetches that move nothing but validate and take their
//! place on the stream. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{create_stream, destroy_stream, device_count, free, malloc, managed, managed_location, sync};
use soft_common::{on_device, recent, software, without_device};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const MIB2: usize = 2 << 20;

/// Runs `body` on a fresh thread with device 0 current, device 0 being
/// retained for the rest of the process first: otherwise the last reset of
/// one test's thread tears the device's memory down while another test's
/// thread may be setting the device and allocating, between the reset's
/// check of the retains and its free of the device's allocations.
fn on_dev<R: Send>(body: impl FnOnce() -> R + Send) -> R {
    static KEEP: std::sync::Once = std::sync::Once::new();
    KEEP.call_once(|| {
        software();
        // SAFETY: no pointer arguments; never balanced on purpose.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    });
    on_device(body)
}

fn device(id: i32) -> aclrtMemManagedLocation {
    managed_location(ACL_MEM_LOCATIONTYPE_DEVICE, id)
}

fn host() -> aclrtMemManagedLocation {
    managed_location(ACL_MEM_LOCATIONTYPE_HOST, 0)
}

fn alloc(ptr: *mut *mut c_void, size: u64, flag: u32) -> aclError {
    // SAFETY: `ptr` is NULL (refused) or a valid out-pointer.
    unsafe { aclrtMemAllocManaged(ptr, size, flag) }
}

fn advise(ptr: *const c_void, size: u64, advice: aclrtMemManagedAdviseType, at: aclrtMemManagedLocation) -> aclError {
    // SAFETY: no memory is accessed through `ptr` by this call.
    unsafe { aclrtMemManagedAdvise(ptr, size, advice, at) }
}

/// One 32-bit attribute of `[ptr, ptr + size)`.
fn attr(attribute: aclrtMemManagedRangeAttribute, ptr: *const c_void, size: usize) -> i32 {
    let mut value = 0x5555_5555i32;
    // SAFETY: `value` holds 4 bytes.
    let code = unsafe { aclrtMemManagedGetAttr(attribute, ptr, size, (&raw mut value).cast(), 4) };
    assert_eq!(code, ACL_SUCCESS, "attribute {attribute}: {}", recent_or_none());
    value
}

fn recent_or_none() -> String {
    // SAFETY: no arguments; copied at once.
    let text = unsafe { aclGetRecentErrMsg() };
    if text.is_null() {
        String::new()
    } else {
        // SAFETY: non-NULL C string.
        unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }
}

fn prefetch(ptr: *const c_void, size: usize, at: aclrtMemManagedLocation, flags: u32, stream: aclrtStream) -> aclError {
    // SAFETY: no memory is accessed through `ptr` by this call.
    unsafe { aclrtMemManagedPrefetchAsync(ptr, size, at, flags, stream) }
}

fn at(ptr: *mut c_void, offset: usize) -> *mut c_void {
    // SAFETY: callers stay inside (or one past) the allocation.
    unsafe { ptr.cast::<u8>().add(offset) }.cast()
}

#[test]
fn allocation_argument_rules() {
    on_dev(|| {
        let mut ptr = null_mut();
        assert_eq!(alloc(null_mut(), 64, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("ptr is NULL"), "{}", recent());
        // The ACL layer accepts only ACL_RT_MEM_ATTACH_GLOBAL.
        for flag in [0, 2, 3, 0x100] {
            assert_eq!(alloc(&mut ptr, 64, flag), ACL_ERROR_INVALID_PARAM, "flag {flag}");
            assert!(recent().contains("ACL_RT_MEM_ATTACH_GLOBAL"), "{}", recent());
        }
        // Size 0 is the runtime's check.
        assert_eq!(alloc(&mut ptr, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("size is 0"), "{}", recent());
        // Rounding up to 2 MiB overflows; more than the device holds.
        assert_eq!(
            alloc(&mut ptr, u64::MAX, ACL_RT_MEM_ATTACH_GLOBAL),
            ACL_ERROR_RT_MEMORY_ALLOCATION
        );
        assert_eq!(
            alloc(&mut ptr, 1 << 50, ACL_RT_MEM_ATTACH_GLOBAL),
            ACL_ERROR_RT_MEMORY_ALLOCATION
        );
        assert!(ptr.is_null(), "nothing written on failure");
    });
    without_device(|| {
        let mut ptr = null_mut();
        assert_eq!(alloc(&mut ptr, 64, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_CONTEXT_NULL);
        // The ACL layer's checks still come first.
        assert_eq!(alloc(&mut ptr, 64, 0), ACL_ERROR_INVALID_PARAM);
    });
}

#[test]
fn host_and_device_see_the_same_bytes() {
    on_dev(|| {
        let ptr = managed(100);
        assert!((ptr as usize).is_multiple_of(MIB2), "2 MiB aligned: {ptr:?}");

        // The host writes, the device reads.
        // SAFETY: managed memory is host-dereferenceable; 2 MiB long.
        let host_view = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), MIB2) };
        for (index, byte) in host_view.iter_mut().take(4096).enumerate() {
            *byte = index as u8;
        }
        let mut read = vec![0u8; 4096];
        // SAFETY: `read` holds 4096 bytes; the managed range is live.
        let code = unsafe { aclrtMemcpy(read.as_mut_ptr().cast(), 4096, ptr, 4096, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(code, ACL_SUCCESS);
        assert!(read.iter().enumerate().all(|(index, &byte)| byte == index as u8));

        // The device writes (a memset, a queued copy), the host reads.
        // SAFETY: live managed memory of 2 MiB.
        assert_eq!(unsafe { aclrtMemset(at(ptr, 8192), 100, 0xAB, 100) }, ACL_SUCCESS);
        assert!(host_view[8192..8292].iter().all(|&byte| byte == 0xAB));
        assert_eq!(host_view[8292], 0);
        let stream = create_stream();
        let source = vec![7u8; 1000];
        // SAFETY: `source` lives until the stream is synchronised.
        let code = unsafe {
            aclrtMemcpyAsync(
                at(ptr, MIB2 - 1000),
                1000,
                source.as_ptr().cast(),
                1000,
                ACL_MEMCPY_HOST_TO_DEVICE,
                stream,
            )
        };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert!(host_view[MIB2 - 1000..].iter().all(|&byte| byte == 7));
        // Device to device, between aclrtMalloc memory and managed memory.
        let plain = malloc(256);
        // SAFETY: both live, 256 bytes each.
        assert_eq!(
            unsafe { aclrtMemcpy(plain, 256, ptr, 256, ACL_MEMCPY_DEVICE_TO_DEVICE) },
            ACL_SUCCESS
        );
        // SAFETY: as above.
        assert_eq!(
            unsafe { aclrtMemcpy(at(ptr, 4096 * 4), 256, plain, 256, ACL_MEMCPY_DEVICE_TO_DEVICE) },
            ACL_SUCCESS
        );
        assert_eq!(&host_view[4096 * 4..4096 * 4 + 256], &host_view[..256]);
        free(plain);
        destroy_stream(stream);

        // Pointer attributes: MANAGED on device 0 with 2 MiB pages, inside
        // the allocation too.
        let mut attributes = aclrtPtrAttributes::default();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { aclrtPointerGetAttributes(at(ptr, 12345), &mut attributes) },
            ACL_SUCCESS
        );
        assert_eq!(attributes.location.type_, ACL_MEM_LOCATION_TYPE_MANAGED);
        assert_eq!(attributes.location.id, 0);
        assert_eq!(attributes.pageSize as usize, MIB2);
        // aclrtMemsetD32 takes aclrtMalloc or aclrtMallocHost memory only.
        // SAFETY: refused before any write.
        assert_eq!(unsafe { aclrtMemsetD32(ptr, 64, 1, 16) }, ACL_ERROR_INVALID_PARAM);

        // aclrtFree frees it, from its start only. (A second free is
        // refused too, but other tests may get the address meanwhile.)
        // SAFETY: inside the allocation: refused.
        assert_eq!(unsafe { aclrtFree(at(ptr, 64)) }, ACL_ERROR_RT_PARAM_INVALID);
        // SAFETY: the allocation's start.
        assert_eq!(unsafe { aclrtFree(ptr) }, ACL_SUCCESS);
    });
}

#[test]
fn a_size_is_rounded_up_to_whole_2_mib_granules() {
    on_dev(|| {
        let ptr = managed(MIB2 as u64 + 1);
        // The whole 4 MiB is managed and host-accessible.
        // SAFETY: 4 MiB of managed memory.
        unsafe { ptr.cast::<u8>().add(2 * MIB2 - 1).write(9) };
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, at(ptr, 2 * MIB2 - 1), 1), 0);
        // SAFETY: past the end: refused.
        let mut value = 0i32;
        let code = unsafe {
            aclrtMemManagedGetAttr(
                ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                at(ptr, 2 * MIB2 - 1),
                2,
                (&raw mut value).cast(),
                4,
            )
        };
        assert_eq!(code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("runs past the end"), "{}", recent());
        free(ptr);
    });
}

#[test]
fn advise_argument_rules() {
    on_dev(|| {
        let ptr = managed(4096);
        let count = device_count();
        assert_eq!(
            advise(null(), 64, ACL_MEM_ADVISE_SET_READ_MOSTLY, device(0)),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            advise(ptr, 0, ACL_MEM_ADVISE_SET_READ_MOSTLY, device(0)),
            ACL_ERROR_INVALID_PARAM
        );
        assert!(recent().contains("size must be positive"), "{}", recent());
        assert_eq!(advise(ptr, 64, 6, device(0)), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("advise 6"), "{}", recent());
        // A device location's id is checked for every advice.
        for id in [-1, count, 1000] {
            assert_eq!(
                advise(ptr, 64, ACL_MEM_ADVISE_SET_READ_MOSTLY, device(id)),
                ACL_ERROR_RT_PARAM_INVALID,
                "device {id}"
            );
        }
        // Advice that uses its location needs a valid one.
        for bad in [
            managed_location(ACL_MEM_LOCATIONTYPE_INVALID, 0),
            managed_location(9, 0),
            managed_location(ACL_MEM_LOCATIONTYPE_HOST_NUMA, 1),
        ] {
            assert_eq!(
                advise(ptr, 64, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, bad),
                ACL_ERROR_RT_PARAM_INVALID,
                "{bad:?}"
            );
            // Read-mostly ignores it.
            assert_eq!(advise(ptr, 64, ACL_MEM_ADVISE_SET_READ_MOSTLY, bad), ACL_SUCCESS);
        }
        // Only managed memory, inside one allocation.
        let plain = malloc(4096);
        assert_eq!(
            advise(plain, 64, ACL_MEM_ADVISE_SET_READ_MOSTLY, device(0)),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("not managed memory"), "{}", recent());
        assert_eq!(
            advise(ptr, MIB2 as u64 + 1, ACL_MEM_ADVISE_SET_READ_MOSTLY, device(0)),
            ACL_ERROR_RT_PARAM_INVALID
        );
        free(plain);
        free(ptr);
    });
    without_device(|| {
        let mut stack = 0u64;
        assert_eq!(
            advise((&raw mut stack).cast(), 8, ACL_MEM_ADVISE_SET_READ_MOSTLY, device(0)),
            ACL_ERROR_RT_CONTEXT_NULL
        );
    });
}

#[test]
fn advice_is_reported_by_the_attributes() {
    on_dev(|| {
        let ptr = managed(2 * MIB2 as u64);
        let whole = 2 * MIB2;
        // Nothing advised or prefetched yet.
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, whole), 0);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, whole), -2);
        assert_eq!(
            attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, whole),
            ACL_MEM_LOCATIONTYPE_INVALID as i32
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, ptr, whole), -2);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, whole), -2);

        // Read-mostly on the first granule only: the whole range is not.
        assert_eq!(advise(ptr, 10, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()), ACL_SUCCESS);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, MIB2), 1);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, whole), 0);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, at(ptr, MIB2), 4), 0);
        assert_eq!(advise(ptr, 10, ACL_MEM_ADVISE_UNSET_READ_MOSTLY, host()), ACL_SUCCESS);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, MIB2), 0);

        // Preferred location: the device, then the host.
        assert_eq!(
            advise(ptr, whole as u64, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device(0)),
            ACL_SUCCESS
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, whole), 0);
        assert_eq!(
            attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, whole),
            ACL_MEM_LOCATIONTYPE_DEVICE as i32
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, ptr, whole), 0);
        assert_eq!(
            advise(at(ptr, MIB2), 1, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, host()),
            ACL_SUCCESS
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, at(ptr, MIB2), 8), -1);
        assert_eq!(
            attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, at(ptr, MIB2), 8),
            ACL_MEM_LOCATIONTYPE_HOST as i32
        );
        // The granules differ: no common preferred location.
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, whole), -2);
        assert_eq!(
            advise(ptr, whole as u64, ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, host()),
            ACL_SUCCESS
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, whole), -2);
        // The calling thread's NUMA node is node 0.
        assert_eq!(
            advise(
                ptr,
                8,
                ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
                managed_location(ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT, 77)
            ),
            ACL_SUCCESS
        );
        assert_eq!(
            attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, 8),
            ACL_MEM_LOCATIONTYPE_HOST_NUMA as i32
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, ptr, 8), 0);

        // Accessed-by: an array, -2 after the ids.
        assert_eq!(advise(ptr, 8, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(0)), ACL_SUCCESS);
        assert_eq!(advise(ptr, 8, ACL_MEM_ADVISE_SET_ACCESSED_BY, host()), ACL_SUCCESS);
        assert_eq!(advise(ptr, 8, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(0)), ACL_SUCCESS);
        let mut ids = [0x7777_7777i32; 4];
        // SAFETY: `ids` holds 16 bytes.
        let code =
            unsafe { aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, 8, ids.as_mut_ptr().cast(), 16) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(ids, [0, -1, -2, -2]);
        // Only what the whole range has: the second granule has none.
        // SAFETY: as above.
        let code = unsafe {
            aclrtMemManagedGetAttr(
                ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                ptr,
                whole,
                ids.as_mut_ptr().cast(),
                16,
            )
        };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(ids, [-2; 4]);
        assert_eq!(advise(ptr, 8, ACL_MEM_ADVISE_UNSET_ACCESSED_BY, device(0)), ACL_SUCCESS);
        // SAFETY: as above.
        let code =
            unsafe { aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, 8, ids.as_mut_ptr().cast(), 16) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(ids, [-1, -2, -2, -2]);
        free(ptr);
    });
}

#[test]
fn get_attr_argument_rules() {
    on_dev(|| {
        let ptr = managed(64);
        let mut value = 0x1234i32;
        let data: *mut c_void = (&raw mut value).cast();
        let get = |attribute, ptr: *const c_void, size, data: *mut c_void, data_size| {
            // SAFETY: `data` is NULL (refused) or holds 4 bytes, and
            // `data_size` never says more.
            unsafe { aclrtMemManagedGetAttr(attribute, ptr, size, data, data_size) }
        };
        let read_mostly = ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY;
        assert_eq!(get(read_mostly, null(), 8, data, 4), ACL_ERROR_INVALID_PARAM);
        assert_eq!(get(read_mostly, ptr, 8, null_mut(), 4), ACL_ERROR_INVALID_PARAM);
        assert_eq!(get(read_mostly, ptr, 0, data, 4), ACL_ERROR_INVALID_PARAM);
        for bad in [0, 9, 100] {
            assert_eq!(get(bad, ptr, 8, data, 4), ACL_ERROR_RT_PARAM_INVALID, "attribute {bad}");
            assert!(recent().contains("out of range"), "{}", recent());
        }
        // One value takes exactly 4 bytes; accessed-by a multiple of 4.
        assert_eq!(get(read_mostly, ptr, 8, data, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(get(read_mostly, ptr, 8, data, 2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            get(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, 8, data, 3),
            ACL_ERROR_RT_PARAM_INVALID
        );
        // Not managed memory.
        let plain = malloc(64);
        assert_eq!(get(read_mostly, plain, 8, data, 4), ACL_ERROR_RT_PARAM_INVALID);
        free(plain);
        assert_eq!(value, 0x1234, "nothing written by a refused query");
        assert_eq!(get(read_mostly, ptr, 8, data, 4), ACL_SUCCESS);
        assert_eq!(value, 0);
        let address = ptr as usize;
        // No current device is needed.
        without_device(move || {
            let mut value = 5i32;
            // SAFETY: `value` holds 4 bytes.
            let code = unsafe {
                aclrtMemManagedGetAttr(
                    ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                    address as *const c_void,
                    8,
                    (&raw mut value).cast(),
                    4,
                )
            };
            assert_eq!(code, ACL_SUCCESS);
            assert_eq!(value, 0);
        });
        free(ptr);
    });
}

#[test]
// The arrays are changed between calls that read them through raw pointers.
#[allow(unused_assignments)]
fn get_attrs_answers_each_or_none() {
    on_dev(|| {
        let ptr = managed(64);
        assert_eq!(advise(ptr, 8, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()), ACL_SUCCESS);
        assert_eq!(
            advise(ptr, 8, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device(0)),
            ACL_SUCCESS
        );
        let mut values = [9i32; 3];
        let mut attributes = [
            ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
            ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
            ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
        ];
        let base = values.as_mut_ptr();
        // SAFETY: three elements.
        let mut data: [*mut c_void; 3] = unsafe { [base.cast(), base.add(1).cast(), base.add(2).cast()] };
        let mut sizes = [4usize; 3];
        let get = |attributes: *mut aclrtMemManagedRangeAttribute,
                   count: usize,
                   ptr: *const c_void,
                   size: usize,
                   data: *mut *mut c_void,
                   sizes: *mut usize| {
            // SAFETY: the arrays hold `count` entries or are NULL (refused).
            unsafe { aclrtMemManagedGetAttrs(attributes, count, ptr, size, data, sizes) }
        };
        let (a, d, s) = (attributes.as_mut_ptr(), data.as_mut_ptr(), sizes.as_mut_ptr());
        assert_eq!(get(a, 3, null(), 8, d, s), ACL_ERROR_INVALID_PARAM);
        assert_eq!(get(null_mut(), 3, ptr, 8, d, s), ACL_ERROR_INVALID_PARAM);
        assert_eq!(get(a, 3, ptr, 8, null_mut(), s), ACL_ERROR_INVALID_PARAM);
        assert_eq!(get(a, 3, ptr, 8, d, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(get(a, 3, ptr, 0, d, s), ACL_ERROR_INVALID_PARAM);
        // A bad attribute anywhere: nothing is written.
        attributes[2] = 42;
        assert_eq!(get(a, 3, ptr, 8, d, s), ACL_ERROR_RT_PARAM_INVALID);
        attributes[2] = ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE;
        // A bad size anywhere, or a NULL destination: nothing is written.
        sizes[2] = 8;
        assert_eq!(get(a, 3, ptr, 8, d, s), ACL_ERROR_RT_PARAM_INVALID);
        sizes[2] = 4;
        data[1] = null_mut();
        assert_eq!(get(a, 3, ptr, 8, d, s), ACL_ERROR_RT_PARAM_INVALID);
        // SAFETY: `base` has three elements.
        data[1] = unsafe { base.add(1) }.cast();
        assert_eq!(values, [9; 3]);
        assert_eq!(get(a, 3, ptr, 8, d, s), ACL_SUCCESS);
        assert_eq!(
            values,
            [
                1,
                ACL_MEM_LOCATIONTYPE_DEVICE as i32,
                ACL_MEM_LOCATIONTYPE_INVALID as i32
            ]
        );
        free(ptr);
    });
}

/// The largest allocation (or reallocation) made on this thread since
/// [`Largest::reset`]: the test binary's allocator, so a test can check
/// that a call makes no allocation as large as a caller-given size.
struct Largest;

thread_local! {
    static LARGEST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Largest {
    fn note(size: usize) {
        let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
    }

    fn reset() {
        LARGEST.with(|largest| largest.set(0));
    }

    fn get() -> usize {
        LARGEST.with(std::cell::Cell::get)
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl std::alloc::GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        Self::note(layout.size());
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        Self::note(layout.size());
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        Self::note(new_size);
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// A large accessed-by destination is padded in place: its size costs no
/// allocation of that size.
#[test]
fn a_large_accessed_by_destination_is_padded_in_place() {
    on_dev(|| {
        let ptr = managed(64);
        assert_eq!(advise(ptr, 8, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(0)), ACL_SUCCESS);
        const SIZE: usize = 1 << 20;
        let mut values = vec![0x5555_5555i32; SIZE / 4];
        Largest::reset();
        // SAFETY: `values` holds SIZE bytes.
        let code = unsafe {
            aclrtMemManagedGetAttr(
                ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                ptr,
                8,
                values.as_mut_ptr().cast(),
                SIZE,
            )
        };
        let largest = Largest::get();
        assert_eq!(code, ACL_SUCCESS, "{}", recent_or_none());
        assert_eq!(values[0], 0);
        assert!(values[1..].iter().all(|&value| value == -2), "padded with -2");
        assert!(
            largest < SIZE / 16,
            "aclrtMemManagedGetAttr allocated {largest} bytes for a {SIZE}-byte destination"
        );
        free(ptr);
    });
}

#[test]
fn prefetch_validates_and_moves_nothing() {
    on_dev(|| {
        let ptr = managed(64);
        let stream = create_stream();
        assert_eq!(prefetch(null(), 8, device(0), 0, stream), ACL_ERROR_INVALID_PARAM);
        assert_eq!(prefetch(ptr, 0, device(0), 0, stream), ACL_ERROR_INVALID_PARAM);
        assert_eq!(prefetch(ptr, 8, device(0), 1, stream), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("reserved"), "{}", recent());
        for bad in [
            device(-1),
            device(device_count()),
            managed_location(ACL_MEM_LOCATIONTYPE_INVALID, 0),
            managed_location(5, 0),
            managed_location(ACL_MEM_LOCATIONTYPE_HOST_NUMA, 3),
        ] {
            assert_eq!(prefetch(ptr, 8, bad, 0, stream), ACL_ERROR_RT_PARAM_INVALID, "{bad:?}");
        }
        let plain = malloc(64);
        assert_eq!(prefetch(plain, 8, device(0), 0, stream), ACL_ERROR_RT_PARAM_INVALID);
        free(plain);
        assert_eq!(
            prefetch(ptr, MIB2 + 1, device(0), 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, 8), -2);

        // Ordered on its stream between a memset and a copy; moves nothing.
        // SAFETY: 64 bytes of live managed memory.
        assert_eq!(unsafe { aclrtMemsetAsync(ptr, 64, 0x3C, 64, stream) }, ACL_SUCCESS);
        assert_eq!(prefetch(ptr, 64, device(0), 0, stream), ACL_SUCCESS);
        let mut out = [0u8; 64];
        // SAFETY: `out` lives until the stream is synchronised.
        let code = unsafe { aclrtMemcpyAsync(out.as_mut_ptr().cast(), 64, ptr, 64, ACL_MEMCPY_DEVICE_TO_HOST, stream) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(out, [0x3C; 64]);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, 8), 0);
        assert_eq!(
            attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, ptr, 8),
            ACL_MEM_LOCATIONTYPE_DEVICE as i32
        );
        // To the host, on the default stream.
        assert_eq!(prefetch(ptr, 64, host(), 0, null_mut()), ACL_SUCCESS);
        // SAFETY: the default stream.
        assert_eq!(unsafe { aclrtSynchronizeStream(null_mut()) }, ACL_SUCCESS);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, 8), -1);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, ptr, 8), 0);
        // SAFETY: host-dereferenceable managed memory.
        assert_eq!(unsafe { ptr.cast::<u8>().add(63).read() }, 0x3C);

        // A destroyed stream is an invalid handle, checked before the
        // runtime's argument checks.
        destroy_stream(stream);
        assert_eq!(prefetch(ptr, 8, device(-1), 0, stream), ACL_ERROR_RT_INVALID_HANDLE);
        free(ptr);
    });
}

/// `aclrtMemManagedPrefetchBatchAsync` with slices.
fn batch(
    ptrs: &mut [*const c_void],
    sizes: &mut [usize],
    locations: &mut [aclrtMemManagedLocation],
    indices: &mut [usize],
    flags: u64,
    stream: aclrtStream,
) -> aclError {
    assert_eq!(ptrs.len(), sizes.len());
    assert_eq!(locations.len(), indices.len());
    // SAFETY: each array holds the count passed with it.
    unsafe {
        aclrtMemManagedPrefetchBatchAsync(
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            ptrs.len(),
            locations.as_mut_ptr(),
            indices.as_mut_ptr(),
            locations.len(),
            flags,
            stream,
        )
    }
}

#[test]
fn batch_prefetch_is_all_or_nothing() {
    on_dev(|| {
        let one = managed(64);
        let two = managed(64);
        let stream = create_stream();
        let mut ptrs = [one.cast_const(), at(one, 8).cast_const(), two.cast_const()];
        let mut sizes = [8usize, 8, 8];
        let mut locations = [device(0), host()];
        let mut indices = [0usize, 2];
        let (p, s, l, i) = (
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            locations.as_mut_ptr(),
            indices.as_mut_ptr(),
        );
        let raw = |p, s, count, l, i, locs, flags| {
            // SAFETY: the arrays hold `count` and `locs` entries or are NULL
            // (refused).
            unsafe { aclrtMemManagedPrefetchBatchAsync(p, s, count, l, i, locs, flags, stream) }
        };
        // The ACL layer.
        assert_eq!(raw(null_mut(), s, 3, l, i, 2, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, null_mut(), 3, l, i, 2, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, s, 3, null_mut(), i, 2, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, s, 3, l, null_mut(), 2, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, s, 0, l, i, 2, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, s, 3, l, i, 0, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, s, 3, l, i, 2, 1), ACL_ERROR_INVALID_PARAM);
        assert_eq!(raw(p, s, 1, l, i, 2, 0), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("numPrefetchLocs"), "{}", recent());

        // The runtime: indices, NULL ranges, device ids, location types.
        indices[0] = 1;
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        indices = [0, 0];
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("must be greater than"), "{}", recent());
        indices = [0, 3];
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        indices = [0, 2];
        ptrs[1] = null();
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("ptrs[1] is NULL"), "{}", recent());
        ptrs[1] = at(one, 8).cast_const();
        locations[1] = device(99);
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        locations[1] = managed_location(ACL_MEM_LOCATIONTYPE_INVALID, 0);
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        locations[1] = host();
        // A bad range last (size 0, then not managed): nothing recorded for
        // the good ones before it.
        sizes[2] = 0;
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        sizes[2] = 8;
        let plain = malloc(64);
        ptrs[2] = plain.cast_const();
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, one, 8), -2);
        free(plain);
        ptrs[2] = two.cast_const();

        // Ranges 0 and 1 go to device 0, range 2 to the host.
        assert_eq!(
            batch(&mut ptrs, &mut sizes, &mut locations, &mut indices, 0, stream),
            ACL_SUCCESS
        );
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, one, 16), 0);
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, two, 8), -1);
        destroy_stream(stream);
        free(one);
        free(two);
    });
}

#[test]
fn the_sanitizer_sees_the_device_side_and_announced_host_accesses() {
    let output = soft_common::child_output("child_sanitized_managed_memory", &[(soft::ENV_SANITIZE, "all")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("child done"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "run by the_sanitizer_sees_the_device_side_and_announced_host_accesses in a child process"]
fn child_sanitized_managed_memory() {
    on_dev(|| {
        let watch = soft::MisuseWatch::start();
        let ptr = managed(4096);
        // The host writes unseen; a device read of those bytes is no
        // unwritten read (managed memory's contents are unknown, not unset).
        // SAFETY: 4096 bytes of managed memory.
        unsafe { ptr.cast::<u8>().write_bytes(3, 4096) };
        let mut out = [0u8; 64];
        // SAFETY: `out` holds 64 bytes.
        let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), 64, ptr, 64, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(out, [3; 64]);
        assert_eq!(watch.seen().len(), 0, "{:?}", watch.seen());
        // A queued device write, then an announced host read before the
        // stream is synchronised: a race; after it, none.
        let stream = create_stream();
        // SAFETY: live managed memory.
        assert_eq!(unsafe { aclrtMemsetAsync(ptr, 4096, 1, 4096, stream) }, ACL_SUCCESS);
        soft::sanitize_host_access("host_read", ptr, 64, false);
        assert_eq!(sync(stream), ACL_SUCCESS);
        soft::sanitize_host_access("host_read", ptr, 64, false);
        let seen = watch.seen();
        assert_eq!(
            seen.iter().filter(|misuse| misuse.api == "host_read").count(),
            1,
            "{seen:?}"
        );
        destroy_stream(stream);
        free(ptr);
    });
    println!("child done");
}

#[test]
fn a_device_reset_frees_managed_memory_too() {
    let output = soft_common::child_output("child_reset_with_managed_memory", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("child done"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "run by a_device_reset_frees_managed_memory_too in a child process (the reset must be the last)"]
fn child_reset_with_managed_memory() {
    software();
    std::thread::spawn(|| {
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let old = managed(64);
        // The last retain goes: the device's memory, managed memory too.
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let mut attributes = aclrtPtrAttributes::default();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtPointerGetAttributes(old, &mut attributes) }, ACL_SUCCESS);
        assert_ne!(attributes.location.type_, ACL_MEM_LOCATION_TYPE_MANAGED);
        assert_eq!(
            advise(old, 8, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()),
            ACL_ERROR_RT_PARAM_INVALID
        );
        // SAFETY: freed by the reset: refused.
        assert_eq!(unsafe { aclrtFree(old) }, ACL_ERROR_RT_PARAM_INVALID);
        // New managed memory (likely at the same address) works.
        let new = managed(64);
        // SAFETY: 64 bytes of managed memory.
        unsafe { new.cast::<u8>().write_bytes(0x42, 64) };
        assert_eq!(attr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, new, 64), 0);
        free(new);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
    })
    .join()
    .expect("the child's thread");
    println!("child done");
}

#[test]
fn a_device_reset_takes_managed_memory_away_from_the_host_at_once() {
    let output = soft_common::child_output("child_writes_managed_memory_after_a_reset", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("writing through the old managed address"),
        "the child did not get that far:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !stdout.contains("without a fault"),
        "the write did not fault:\n{stdout}"
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(11),
        "expected SIGSEGV, got {:?}",
        output.status
    );
}

#[test]
#[ignore = "run by a_device_reset_takes_managed_memory_away_from_the_host_at_once in a child process (it faults)"]
fn child_writes_managed_memory_after_a_reset() {
    use std::io::Write as _;
    software();
    std::thread::spawn(|| {
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let old = managed(MIB2 as u64);
        // The last retain goes, and with it the managed memory: its
        // physical bytes are handed out again by the next allocation.
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let new = malloc(MIB2);
        // SAFETY: `new` is device memory of MIB2 bytes.
        assert_eq!(unsafe { aclrtMemset(new, MIB2, 0, MIB2) }, ACL_SUCCESS);
        println!("writing through the old managed address {old:p} (new allocation at {new:p})");
        std::io::stdout().flush().expect("flush");
        // SAFETY: none: the address was freed by the reset, and this write
        // must fault (the parent checks the child died by SIGSEGV).
        unsafe { old.cast::<u8>().write_bytes(0xAB, MIB2) };
        let mut out = vec![0u8; MIB2];
        // SAFETY: `out` holds MIB2 bytes; `new` is device memory of MIB2.
        let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), MIB2, new, MIB2, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(code, ACL_SUCCESS);
        let changed = out.iter().filter(|&&byte| byte == 0xAB).count();
        println!("written without a fault; {changed} byte(s) of the new allocation changed");
    })
    .join()
    .expect("the child's thread");
    println!("child done");
}
