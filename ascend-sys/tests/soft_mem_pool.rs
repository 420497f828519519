//! Stream-ordered memory pools (`aclrtMemPool*`) on the software device:
//! the argument rules with the codes of `hicann/runtime`
//! (`src/acl/aclrt_impl/memory.cpp` `aclrtMemPool*Impl`,
//! `src/runtime/api/impl/api_impl_soma.cc`, `src/runtime/feature/soma/soma.cc`
//! and `stream_mem_pool.cc`), reuse ordered by streams, attributes, trimming,
//! `maxSize`, and teardown. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{create_stream, destroy_stream, free, malloc, plain_event, record, wait_event};
use soft_common::{on_device, on_device_id, recent};
use std::ffi::c_void;
use std::ptr::null_mut;

const MIB2: usize = 2 << 20;

fn props(max_size: usize) -> aclrtMemPoolProps {
    // SAFETY: a plain C struct; all zeros is a valid value.
    let mut props: aclrtMemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = max_size;
    props
}

fn create_with(props: &aclrtMemPoolProps) -> (aclError, aclrtMemPool) {
    let mut pool = null_mut();
    // SAFETY: valid pointers.
    let code = unsafe { aclrtMemPoolCreate(&mut pool, props) };
    (code, pool)
}

fn create(max_size: usize) -> aclrtMemPool {
    let (code, pool) = create_with(&props(max_size));
    assert_eq!(code, ACL_SUCCESS, "{}", recent());
    pool
}

fn destroy(pool: aclrtMemPool) -> aclError {
    // SAFETY: the runtime validates the handle.
    unsafe { aclrtMemPoolDestroy(pool) }
}

fn alloc_code(size: usize, pool: aclrtMemPool, stream: aclrtStream) -> (aclError, *mut c_void) {
    let mut ptr = null_mut();
    // SAFETY: a valid out-pointer; handles are validated.
    let code = unsafe { aclrtMemPoolMallocAsync(&mut ptr, size, pool, stream) };
    (code, ptr)
}

fn alloc(size: usize, pool: aclrtMemPool, stream: aclrtStream) -> *mut c_void {
    let (code, ptr) = alloc_code(size, pool, stream);
    assert_eq!(code, ACL_SUCCESS, "{}", recent());
    assert!(!ptr.is_null());
    ptr
}

fn free_async(ptr: *mut c_void, stream: aclrtStream) -> aclError {
    // SAFETY: the runtime validates the pointer and the handle.
    unsafe { aclrtMemPoolFreeAsync(ptr, stream) }
}

fn get_u64(pool: aclrtMemPool, attr: aclrtMemPoolAttr) -> u64 {
    let mut value = 0u64;
    // SAFETY: a u64 for a size attribute.
    let code = unsafe { aclrtMemPoolGetAttr(pool, attr, (&raw mut value).cast()) };
    assert_eq!(code, ACL_SUCCESS, "{}", recent());
    value
}

fn get_u32(pool: aclrtMemPool, attr: aclrtMemPoolAttr) -> u32 {
    let mut value = 7u32;
    // SAFETY: a u32 for a reuse flag.
    let code = unsafe { aclrtMemPoolGetAttr(pool, attr, (&raw mut value).cast()) };
    assert_eq!(code, ACL_SUCCESS, "{}", recent());
    value
}

fn set_u64(pool: aclrtMemPool, attr: aclrtMemPoolAttr, mut value: u64) -> aclError {
    // SAFETY: a u64.
    unsafe { aclrtMemPoolSetAttr(pool, attr, (&raw mut value).cast()) }
}

fn set_u32(pool: aclrtMemPool, attr: aclrtMemPoolAttr, mut value: u32) -> aclError {
    // SAFETY: a u32.
    unsafe { aclrtMemPoolSetAttr(pool, attr, (&raw mut value).cast()) }
}

fn trim(pool: aclrtMemPool, keep: usize) -> aclError {
    // SAFETY: the runtime validates the handle.
    unsafe { aclrtMemPoolTrimTo(pool, keep) }
}

fn sync(stream: aclrtStream) {
    assert_eq!(soft_common::raw::sync(stream), ACL_SUCCESS);
}

/// A stream blocked until [`unblock`]: it waits for a device word to be 1.
fn blocked_stream() -> (aclrtStream, *mut c_void) {
    let word = malloc(8);
    // SAFETY: 8 bytes of live device memory.
    assert_eq!(unsafe { aclrtMemset(word, 8, 0, 8) }, ACL_SUCCESS);
    let stream = create_stream();
    // SAFETY: a live device word and stream.
    let code = unsafe { aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream) };
    assert_eq!(code, ACL_SUCCESS, "{}", recent());
    (stream, word)
}

fn unblock(stream: aclrtStream, word: *mut c_void) {
    let one = 1u64;
    // SAFETY: 8 bytes each side.
    let code = unsafe { aclrtMemcpy(word, 8, (&raw const one).cast(), 8, ACL_MEMCPY_HOST_TO_DEVICE) };
    assert_eq!(code, ACL_SUCCESS);
    sync(stream);
    free(word);
}

// ---- argument rules ------------------------------------------------------------

/// ACL layer (100000): NULL memPool / poolProps, allocType not PINNED,
/// location.type not DEVICE, reserved bytes not zero; runtime: a device id
/// that does not exist → 107001, maxSize above the device's memory after
/// 2 MiB rounding → 107000.
#[test]
fn create_argument_rules() {
    on_device(|| {
        let good = props(MIB2);
        // SAFETY: NULL out-pointer, refused.
        assert_eq!(
            unsafe { aclrtMemPoolCreate(null_mut(), &good) },
            ACL_ERROR_INVALID_PARAM
        );
        let mut pool = null_mut();
        // SAFETY: NULL props, refused.
        assert_eq!(
            unsafe { aclrtMemPoolCreate(&mut pool, std::ptr::null()) },
            ACL_ERROR_INVALID_PARAM
        );
        let mut bad = good;
        bad.allocType = 1;
        assert_eq!(create_with(&bad).0, ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("allocType"), "{}", recent());
        let mut bad = good;
        bad.location.type_ = ACL_MEM_LOCATION_TYPE_HOST;
        assert_eq!(create_with(&bad).0, ACL_ERROR_INVALID_PARAM);
        let mut bad = good;
        bad.reserved[31] = 1;
        assert_eq!(create_with(&bad).0, ACL_ERROR_INVALID_PARAM);
        let mut elsewhere = good;
        elsewhere.location.id = 99;
        assert_eq!(create_with(&elsewhere).0, ACL_ERROR_RT_INVALID_DEVICEID);
        let huge = props(1 << 50);
        assert_eq!(create_with(&huge).0, ACL_ERROR_RT_PARAM_INVALID);
        // maxSize 0: the device's memory.
        let whole = create(0);
        let (mut total, mut free_bytes) = (0, 0);
        // SAFETY: valid out-pointers.
        assert_eq!(
            unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free_bytes, &mut total) },
            ACL_SUCCESS
        );
        let stream = create_stream();
        let (code, _) = alloc_code(total + 1, whole, stream);
        assert_eq!(code, ACL_ERROR_RT_INTERNAL_ERROR);
        assert_eq!(destroy(whole), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

/// Destroy: NULL → 100000; an unknown or destroyed pool → the runtime's
/// `RT_ERROR_MEM_POOL_NULL`, 507000.
#[test]
fn destroy_argument_rules() {
    on_device(|| {
        assert_eq!(destroy(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(destroy(0x1234 as aclrtMemPool), ACL_ERROR_RT_INTERNAL_ERROR);
        let pool = create(MIB2);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        assert_eq!(destroy(pool), ACL_ERROR_RT_INTERNAL_ERROR);
    });
}

/// Set/get: NULL pool → 100000; NULL value → 107000; unknown pool → 107000;
/// the current sizes are read-only (107000); a release threshold above the
/// pool's size, a high-water mark other than 0 and an unknown attribute →
/// 507000.
#[test]
fn attribute_argument_rules() {
    on_device(|| {
        let pool = create(4 * MIB2);
        let mut value = 0u64;
        let v: *mut c_void = (&raw mut value).cast();
        // SAFETY: the runtime checks each argument before use.
        unsafe {
            assert_eq!(
                aclrtMemPoolSetAttr(null_mut(), ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, v),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemPoolGetAttr(null_mut(), ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, v),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, null_mut()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, null_mut()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemPoolSetAttr(0x40 as aclrtMemPool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, v),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemPoolGetAttr(0x40 as aclrtMemPool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, v),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert_eq!(
            set_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, 0),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            set_u64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, 0),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            set_u64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, 4 * MIB2 as u64 + 1),
            ACL_ERROR_RT_INTERNAL_ERROR
        );
        assert_eq!(
            set_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, 1),
            ACL_ERROR_RT_INTERNAL_ERROR
        );
        assert_eq!(
            set_u64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, 5),
            ACL_ERROR_RT_INTERNAL_ERROR
        );
        assert_eq!(set_u64(pool, 0, 0), ACL_ERROR_RT_INTERNAL_ERROR);
        assert_eq!(set_u64(pool, 9, 0), ACL_ERROR_RT_INTERNAL_ERROR);
        // SAFETY: a u64 out-pointer.
        assert_eq!(unsafe { aclrtMemPoolGetAttr(pool, 9, v) }, ACL_ERROR_RT_INTERNAL_ERROR);
        assert_eq!(destroy(pool), ACL_SUCCESS);
    });
}

/// MallocAsync: NULL ptr / pool / stream → 100000; size 0 succeeds and
/// writes nothing; a stale stream → 107017; an unknown pool → 507000.
/// FreeAsync: NULL → 100000; not a live pool allocation (never one, or
/// freed already) → 107000. TrimTo: NULL → 100000; unknown → 507000.
#[test]
fn malloc_free_trim_argument_rules() {
    on_device(|| {
        let pool = create(4 * MIB2);
        let stream = create_stream();
        let mut ptr = null_mut();
        // SAFETY: the ACL layer checks each pointer before use.
        unsafe {
            assert_eq!(
                aclrtMemPoolMallocAsync(null_mut(), 8, pool, stream),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemPoolMallocAsync(&mut ptr, 8, null_mut(), stream),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemPoolMallocAsync(&mut ptr, 8, pool, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
        }
        let marker = 0x77 as *mut c_void;
        ptr = marker;
        // SAFETY: a valid out-pointer.
        assert_eq!(
            unsafe { aclrtMemPoolMallocAsync(&mut ptr, 0, pool, stream) },
            ACL_SUCCESS
        );
        assert_eq!(ptr, marker, "size 0 writes nothing");
        assert_eq!(
            alloc_code(8, pool, 0xdead_0000 as aclrtStream).0,
            ACL_ERROR_RT_INVALID_HANDLE
        );
        assert_eq!(
            alloc_code(8, 0x40 as aclrtMemPool, stream).0,
            ACL_ERROR_RT_INTERNAL_ERROR
        );
        assert_eq!(free_async(null_mut(), stream), ACL_ERROR_INVALID_PARAM);
        let plain = malloc(64);
        assert_eq!(free_async(plain, stream), ACL_ERROR_RT_PARAM_INVALID);
        free(plain);
        let block = alloc(100, pool, stream);
        assert_eq!(
            free_async((block as usize + 64) as *mut c_void, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(free_async(block, stream), ACL_SUCCESS);
        assert_eq!(free_async(block, stream), ACL_ERROR_RT_PARAM_INVALID, "a second free");
        assert_eq!(trim(null_mut(), 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(trim(0x40 as aclrtMemPool, 0), ACL_ERROR_RT_INTERNAL_ERROR);
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

// ---- reuse ordered by streams ----------------------------------------------------

/// A block freed on a stream is reused at once by the next allocation on the
/// same stream, even while the free is still queued.
#[test]
fn same_stream_reuses_at_once() {
    on_device(|| {
        let pool = create(64 * MIB2);
        let (stream, word) = blocked_stream();
        let first = alloc(1000, pool, stream);
        assert_eq!(free_async(first, stream), ACL_SUCCESS);
        let again = alloc(1000, pool, stream);
        assert_eq!(again, first);
        assert_eq!(free_async(again, stream), ACL_SUCCESS);
        unblock(stream, word);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

/// On another stream a block is not reused while its free has not run; once
/// the stream that freed it is synchronised, it is.
#[test]
fn other_stream_waits_for_the_free() {
    on_device(|| {
        let pool = create(64 * MIB2);
        let (first_stream, word) = blocked_stream();
        let other = create_stream();
        let first = alloc(MIB2, pool, first_stream);
        assert_eq!(free_async(first, first_stream), ACL_SUCCESS);
        let second = alloc(MIB2, pool, other);
        assert_ne!(second, first, "reused before its free ran");
        assert_eq!(
            get_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT),
            2 * MIB2 as u64
        );
        unblock(first_stream, word);
        let third = alloc(MIB2, pool, other);
        assert_eq!(third, first, "the free has run: reusable");
        for ptr in [second, third] {
            assert_eq!(free_async(ptr, other), ACL_SUCCESS);
        }
        sync(other);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(first_stream);
        destroy_stream(other);
    });
}

/// An event recorded after the free, waited for by the other stream and
/// synchronised: the block is reused there.
#[test]
fn event_after_the_free_allows_reuse() {
    on_device(|| {
        let pool = create(64 * MIB2);
        let (one, two) = (create_stream(), create_stream());
        for flag in [
            ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES,
            ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC,
        ] {
            assert_eq!(set_u32(pool, flag, 1), ACL_SUCCESS);
        }
        let block = alloc(4096, pool, one);
        // SAFETY: 4096 bytes of pool memory.
        assert_eq!(unsafe { aclrtMemsetAsync(block, 4096, 0x5a, 4096, one) }, ACL_SUCCESS);
        assert_eq!(free_async(block, one), ACL_SUCCESS);
        let event = plain_event();
        assert_eq!(record(event, one), ACL_SUCCESS);
        assert_eq!(wait_event(two, event), ACL_SUCCESS);
        // SAFETY: a live event.
        assert_eq!(unsafe { aclrtSynchronizeEvent(event) }, ACL_SUCCESS);
        let again = alloc(4096, pool, two);
        assert_eq!(again, block);
        assert_eq!(free_async(again, two), ACL_SUCCESS);
        sync(two);
        soft_common::raw::destroy_event(event);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(one);
        destroy_stream(two);
    });
}

/// Pool memory is device memory: copies and memsets reach it.
#[test]
fn pool_memory_holds_data() {
    on_device(|| {
        let pool = create(8 * MIB2);
        let stream = create_stream();
        let block = alloc(256, pool, stream);
        let data: Vec<u8> = (0..=255).collect();
        // SAFETY: 256 bytes each side; synchronised before `data` goes.
        unsafe {
            assert_eq!(
                aclrtMemcpyAsync(block, 256, data.as_ptr().cast(), 256, ACL_MEMCPY_HOST_TO_DEVICE, stream),
                ACL_SUCCESS
            );
            assert_eq!(
                aclrtMemsetAsync((block as usize + 16) as *mut c_void, 4, 0, 4, stream),
                ACL_SUCCESS
            );
        }
        sync(stream);
        let mut back = vec![0u8; 256];
        // SAFETY: 256 bytes each side.
        let code = unsafe { aclrtMemcpy(back.as_mut_ptr().cast(), 256, block, 256, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(code, ACL_SUCCESS);
        let mut want = data.clone();
        want[16..20].fill(0);
        assert_eq!(back, want);
        assert_eq!(free_async(block, stream), ACL_SUCCESS);
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

// ---- attributes, trimming, maxSize ------------------------------------------------

/// Reuse flags default to 0 and read back as u32 0/1; the threshold is a
/// u64; reserved and used, current and high, follow allocations; the high
/// marks reset to 0.
#[test]
fn attributes_follow_the_pool() {
    on_device(|| {
        let pool = create(16 * MIB2);
        for flag in [
            ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES,
            ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC,
            ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
        ] {
            assert_eq!(get_u32(pool, flag), 0);
            assert_eq!(set_u32(pool, flag, 5), ACL_SUCCESS);
            assert_eq!(get_u32(pool, flag), 1);
            assert_eq!(set_u32(pool, flag, 0), ACL_SUCCESS);
            assert_eq!(get_u32(pool, flag), 0);
        }
        assert_eq!(
            set_u64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, 3 << 20),
            ACL_SUCCESS
        );
        assert_eq!(get_u64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 3 << 20);
        let stream = create_stream();
        let a = alloc(1, pool, stream);
        let b = alloc(MIB2 + 1, pool, stream);
        let size = |attr| get_u64(pool, attr);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 3 * MIB2 as u64);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 3 * MIB2 as u64);
        assert_eq!(free_async(b, stream), ACL_SUCCESS);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), MIB2 as u64);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 3 * MIB2 as u64);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 3 * MIB2 as u64);
        assert_eq!(set_u64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, 0), ACL_SUCCESS);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 0);
        assert_eq!(set_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, 0), ACL_SUCCESS);
        assert_eq!(size(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 0);
        assert_eq!(free_async(a, stream), ACL_SUCCESS);
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

/// TrimTo releases idle blocks down to the target; a target above the
/// pool's size or below its used bytes → 507000; at or above the reserved
/// bytes it does nothing.
#[test]
fn trim_releases_idle_memory() {
    on_device(|| {
        let pool = create(8 * MIB2);
        let stream = create_stream();
        let blocks: Vec<_> = (0..3).map(|_| alloc(MIB2, pool, stream)).collect();
        assert_eq!(trim(pool, 8 * MIB2 + 1), ACL_ERROR_RT_INTERNAL_ERROR);
        assert_eq!(trim(pool, MIB2), ACL_ERROR_RT_INTERNAL_ERROR, "below the used bytes");
        assert_eq!(trim(pool, 3 * MIB2), ACL_SUCCESS);
        for &block in &blocks {
            assert_eq!(free_async(block, stream), ACL_SUCCESS);
        }
        sync(stream);
        let reserved = || get_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT);
        assert_eq!(reserved(), 3 * MIB2 as u64);
        assert_eq!(trim(pool, MIB2), ACL_SUCCESS);
        assert_eq!(reserved(), MIB2 as u64);
        assert_eq!(trim(pool, 0), ACL_SUCCESS);
        assert_eq!(reserved(), 0);
        assert_eq!(get_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 3 * MIB2 as u64);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

/// Past `maxSize` an allocation fails with the runtime's
/// `RT_ERROR_MEM_POOL_ALLOC` (507000); freeing makes room again.
#[test]
fn max_size_is_the_limit() {
    on_device(|| {
        let pool = create(3 << 20); // rounded up to 4 MiB
        let stream = create_stream();
        let a = alloc(MIB2, pool, stream);
        let b = alloc(MIB2, pool, stream);
        assert_eq!(alloc_code(1, pool, stream).0, ACL_ERROR_RT_INTERNAL_ERROR);
        assert!(recent().contains("maxSize"), "{}", recent());
        assert_eq!(free_async(b, stream), ACL_SUCCESS);
        assert_eq!(alloc(16, pool, stream), b);
        // A cached 2 MiB block whose free ran is released to make room for
        // a 4 MiB one.
        assert_eq!(free_async(a, stream), ACL_SUCCESS);
        assert_eq!(free_async(b, stream), ACL_SUCCESS);
        sync(stream);
        let big = alloc(2 * MIB2, pool, stream);
        assert_eq!(free_async(big, stream), ACL_SUCCESS);
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

/// `maxSize` within 2 MiB of `SIZE_MAX` wraps to 0 when rounded, as in the
/// runtime: the pool is created and holds nothing (507000 on allocation).
#[test]
fn max_size_near_size_max_wraps_to_zero() {
    on_device(|| {
        let pool = create(usize::MAX);
        assert_eq!(get_u64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 0);
        let stream = create_stream();
        assert_eq!(alloc_code(1, pool, stream).0, ACL_ERROR_RT_INTERNAL_ERROR);
        assert!(recent().contains("maxSize"), "{}", recent());
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

/// A size that passes the 2 MiB rounding but not `maxSize`, asked after a
/// small allocation: 507000, no overflow, and the pool keeps working.
#[test]
fn huge_malloc_after_a_small_one() {
    on_device(|| {
        let pool = create(8 * MIB2);
        let stream = create_stream();
        let small = alloc(1, pool, stream);
        for huge in [0xFFFF_FFFF_FFE0_0000usize, usize::MAX - (4 << 20)] {
            assert_eq!(alloc_code(huge, pool, stream).0, ACL_ERROR_RT_INTERNAL_ERROR);
            assert!(recent().contains("maxSize"), "{}", recent());
        }
        let other = alloc(MIB2, pool, stream);
        for ptr in [small, other] {
            assert_eq!(free_async(ptr, stream), ACL_SUCCESS);
        }
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

// ---- pool memory is the pool's ---------------------------------------------------

/// `aclrtFree` / `aclrtFreeWithDevSync` of a pool block → 107000 and a
/// misuse record; the block stays the pool's, `aclrtMalloc` does not hand
/// it out, and the pool keeps using it.
#[test]
fn aclrt_free_refuses_pool_memory() {
    on_device(|| {
        let pool = create(64 * MIB2);
        let stream = create_stream();
        let block = alloc(1 << 20, pool, stream);
        let watch = soft::MisuseWatch::start();
        // SAFETY: the runtime validates the pointer.
        assert_eq!(unsafe { aclrtFree(block) }, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("memory pool"), "{}", recent());
        // SAFETY: as above.
        assert_eq!(unsafe { aclrtFreeWithDevSync(block) }, ACL_ERROR_RT_PARAM_INVALID);
        let seen = watch.seen();
        assert_eq!(
            seen.iter().map(|m| m.api).collect::<Vec<_>>(),
            ["aclrtFree", "aclrtFreeWithDevSync"]
        );
        let plain = malloc(2 << 20);
        assert_ne!(plain, block);
        assert_eq!(free_async(block, stream), ACL_SUCCESS);
        let again = alloc(1 << 20, pool, stream);
        assert_eq!(again, block, "still the pool's block");
        assert_eq!(free_async(again, stream), ACL_SUCCESS);
        // Cached blocks are the pool's too.
        // SAFETY: as above.
        assert_eq!(unsafe { aclrtFree(again) }, ACL_ERROR_RT_PARAM_INVALID);
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        free(plain);
        destroy_stream(stream);
    });
}

/// An allocation from a device other than the pool's → 107003, also when a
/// cached block whose free has run would fit.
#[test]
fn reuse_checks_the_device() {
    on_device_id(1, || {
        let mut on_one = props(8 * MIB2);
        on_one.location.id = 1;
        let (code, pool) = create_with(&on_one);
        assert_eq!(code, ACL_SUCCESS, "{}", recent());
        let stream = create_stream();
        let block = alloc(MIB2, pool, stream);
        assert_eq!(free_async(block, stream), ACL_SUCCESS);
        sync(stream);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let on_zero = create_stream();
        assert_eq!(alloc_code(MIB2, pool, on_zero).0, ACL_ERROR_RT_STREAM_CONTEXT);
        destroy_stream(on_zero);
        // SAFETY: no pointer arguments; balances the retain above.
        assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(1) }, ACL_SUCCESS);
        assert_eq!(alloc(MIB2, pool, stream), block, "reused on its own device");
        assert_eq!(free_async(block, stream), ACL_SUCCESS);
        sync(stream);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(stream);
        // SAFETY: no pointer arguments; balances the second retain.
        assert_eq!(unsafe { aclrtResetDevice(1) }, ACL_SUCCESS);
    });
}

/// A free whose marker is skipped because an earlier task of its stream
/// failed (`ACL_STOP_ON_FAILURE`) counts as run: the block is reused on
/// another stream and trimmed.
#[test]
fn free_skipped_after_a_failure_counts_as_run() {
    // On device 1: a synchronisation of all of device 0 by another test
    // (`aclrtFreeWithDevSync` in `aclrt_free_refuses_pool_memory`) would
    // report this stream's deliberate failure, and its own synchronisation
    // would then not (tests are threads of one process).
    on_device_id(1, || {
        let mut on_one = props(8 * MIB2);
        on_one.location.id = 1;
        let (code, pool) = create_with(&on_one);
        assert_eq!(code, ACL_SUCCESS, "{}", recent());
        let (failing, other) = (create_stream(), create_stream());
        // SAFETY: a handle (validated) and a value.
        let code = unsafe { aclrtSetStreamFailureMode(failing, u64::from(ACL_STOP_ON_FAILURE)) };
        assert_eq!(code, ACL_SUCCESS);
        let block = alloc(MIB2, pool, failing);
        let never = soft_common::raw::event_with_flag(ACL_EVENT_SYNC);
        // SAFETY: handles only.
        let code = unsafe { aclrtStreamWaitEventWithTimeout(failing, never, 1) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(free_async(block, failing), ACL_SUCCESS);
        assert_eq!(soft_common::raw::sync(failing), ACL_ERROR_RT_WAIT_TIMEOUT);
        let again = alloc(MIB2, pool, other);
        assert_eq!(again, block, "the skipped free counts as run");
        assert_eq!(free_async(again, other), ACL_SUCCESS);
        sync(other);
        assert_eq!(trim(pool, 0), ACL_SUCCESS);
        assert_eq!(get_u64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
        assert_eq!(destroy(pool), ACL_SUCCESS);
        destroy_stream(failing);
        destroy_stream(other);
        soft_common::raw::destroy_event(never);
    });
}

/// Destroying a pool with a live allocation succeeds (the runtime does not
/// check); the memory goes with it.
#[test]
fn destroy_with_live_allocations() {
    on_device(|| {
        let since = soft::sequence_now();
        let pool = create(4 * MIB2);
        let stream = create_stream();
        let block = alloc(64, pool, stream);
        sync(stream);
        let pool_live = || {
            soft::live_since(since)
                .iter()
                .any(|r| r.kind == soft::ResourceKind::MemPool && r.id == pool as u64)
        };
        assert!(pool_live());
        assert!(soft::leak_report().contains(&format!("memory pool {:#x}", pool as usize)));
        // The block, by address and creation (other tests may reuse the
        // address once it is freed).
        let created = soft::live_since(since)
            .iter()
            .find(|r| r.kind == soft::ResourceKind::DeviceMemory && r.id == block as u64)
            .map(|r| r.created)
            .expect("the pool's block is device memory");
        assert_eq!(destroy(pool), ACL_SUCCESS);
        assert!(!pool_live());
        let block_live = soft::live_since(since)
            .iter()
            .any(|r| r.id == block as u64 && r.created == created);
        assert!(!block_live, "the pool's block went with it");
        destroy_stream(stream);
    });
}

/// The last `aclrtResetDevice` releases the device's pools and their memory
/// (in a child process: no other test may hold the device).
#[test]
fn reset_device_releases_pools() {
    let output = soft_common::child_output("reset_device_releases_pools_child", &[]);
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 passed"));
}

#[test]
#[ignore = "run alone by reset_device_releases_pools"]
fn reset_device_releases_pools_child() {
    let since = std::sync::Mutex::new(0);
    let pool = on_device(|| {
        *since.lock().unwrap() = soft::sequence_now();
        let pool = create(4 * MIB2);
        let stream = create_stream();
        let block = alloc(64, pool, stream);
        sync(stream);
        destroy_stream(stream);
        assert!(
            soft::live_since(*since.lock().unwrap())
                .iter()
                .any(|r| r.id == block as u64)
        );
        pool as usize
    });
    let since = *since.lock().unwrap();
    let left = soft::live_since(since);
    assert!(left.is_empty(), "{left:?}");
    assert!(!soft::leak_report().contains(&format!("memory pool {pool:#x}")));
}
