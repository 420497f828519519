//! `aclrtMemcpyBatch`, `aclrtMemcpyBatchV2`, `aclrtMemcpyBatchAsync` and
//! `aclrtMemcpyBatchAsyncV2` on the software device: the ACL layer's rules
//! (`hicann/runtime` `src/acl/aclrt_impl/memory.cpp`, all
//! `ACL_ERROR_INVALID_PARAM`, failing index untouched), the runtime's
//! (`src/runtime/api/impl/api_error.cc`, `api_impl.cc`, all
//! `ACL_ERROR_RT_PARAM_INVALID`, failing index `SIZE_MAX` or the entry), the
//! all-or-nothing batch, the data of host-to-device and device-to-host
//! entries, the refused device-to-device and host-to-host entries, and the
//! asynchronous batch ordered by its stream. Then the other copies of the
//! family: `aclrtMemcpyAsyncWithOffset` (its rules, and the pointers read
//! when the copy runs), the descriptors (`aclrtGetMemcpyDescSize`,
//! `aclrtSetMemcpyDesc`'s layout, `aclrtMemcpyAsyncWithDesc` reading the
//! descriptor when it runs) and `aclrtMemcpyAsyncWithCondition` (an
//! `aclrtMemcpyAsync`). Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{
    create_stream, destroy_event, destroy_stream, event_with_flag, free, malloc, record, sync, wait_event,
};
use soft_common::{on_device, recent};
use std::ffi::c_void;
use std::ptr::null_mut;

/// What `failIndex` holds before a call: a value no call writes.
const UNTOUCHED: usize = 0xFA11;

fn location(kind: aclrtMemLocationType, id: u32) -> aclrtMemLocation {
    aclrtMemLocation { id, type_: kind }
}

fn attr(dst: aclrtMemLocation, src: aclrtMemLocation) -> aclrtMemcpyBatchAttr {
    aclrtMemcpyBatchAttr {
        dstLoc: dst,
        srcLoc: src,
        rsv: [0; 16],
    }
}

fn device0() -> aclrtMemLocation {
    location(ACL_MEM_LOCATION_TYPE_DEVICE, 0)
}

fn host() -> aclrtMemLocation {
    location(ACL_MEM_LOCATION_TYPE_HOST, 0)
}

fn h2d() -> aclrtMemcpyBatchAttr {
    attr(device0(), host())
}

fn d2h() -> aclrtMemcpyBatchAttr {
    attr(host(), device0())
}

/// Which of the four calls.
#[derive(Clone, Copy, Debug)]
enum Call {
    Sync,
    SyncV2,
    Async(aclrtStream),
    AsyncV2(aclrtStream),
}

impl Call {
    fn has_index(self) -> bool {
        matches!(self, Call::Sync | Call::Async(_))
    }
}

/// The arrays of one call.
#[derive(Default)]
struct Batch {
    dsts: Vec<*mut c_void>,
    dest_maxs: Vec<usize>,
    srcs: Vec<*mut c_void>,
    sizes: Vec<usize>,
    attrs: Vec<aclrtMemcpyBatchAttr>,
    starts: Vec<usize>,
}

impl Batch {
    fn with_attr(attr: aclrtMemcpyBatchAttr) -> Self {
        Batch {
            attrs: vec![attr],
            starts: vec![0],
            ..Batch::default()
        }
    }

    fn entry(mut self, dst: *mut c_void, src: *mut c_void, size: usize) -> Self {
        self.dsts.push(dst);
        self.dest_maxs.push(size);
        self.srcs.push(src);
        self.sizes.push(size);
        self
    }

    /// Calls with these arrays; the code and what `failIndex` holds after.
    fn call(&mut self, call: Call) -> (aclError, usize) {
        let (count, attrs) = (self.sizes.len(), self.attrs.len());
        self.call_raw(call, count, attrs, false)
    }

    /// As [`Batch::call`], with the counts given, and the option to pass a
    /// NULL `failIndex`.
    fn call_raw(&mut self, call: Call, count: usize, attrs: usize, null_index: bool) -> (aclError, usize) {
        let ptr = |vector: &mut Vec<usize>| {
            if vector.is_empty() {
                null_mut()
            } else {
                vector.as_mut_ptr()
            }
        };
        let dsts = if self.dsts.is_empty() {
            null_mut()
        } else {
            self.dsts.as_mut_ptr()
        };
        let srcs = if self.srcs.is_empty() {
            null_mut()
        } else {
            self.srcs.as_mut_ptr()
        };
        let attr_ptr = if self.attrs.is_empty() {
            null_mut()
        } else {
            self.attrs.as_mut_ptr()
        };
        let (dest_maxs, sizes, starts) = (ptr(&mut self.dest_maxs), ptr(&mut self.sizes), ptr(&mut self.starts));
        let mut index = UNTOUCHED;
        let index_ptr = if null_index { null_mut() } else { &raw mut index };
        // SAFETY: every array holds at least `count` (or `attrs`) elements or
        // is NULL; the pointers in them are live memory of their sizes, or
        // refused before use.
        let code = unsafe {
            match call {
                Call::Sync => aclrtMemcpyBatch(dsts, dest_maxs, srcs, sizes, count, attr_ptr, starts, attrs, index_ptr),
                Call::SyncV2 => aclrtMemcpyBatchV2(dsts, dest_maxs, srcs, sizes, count, attr_ptr, starts, attrs),
                Call::Async(stream) => aclrtMemcpyBatchAsync(
                    dsts, dest_maxs, srcs, sizes, count, attr_ptr, starts, attrs, index_ptr, stream,
                ),
                Call::AsyncV2(stream) => {
                    aclrtMemcpyBatchAsyncV2(dsts, dest_maxs, srcs, sizes, count, attr_ptr, starts, attrs, stream)
                }
            }
        };
        (code, index)
    }
}

/// Pinned host memory (`aclrtMallocHost`), zeroed.
fn pinned(size: usize) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: `ptr` is a valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut ptr, size) }, ACL_SUCCESS);
    // SAFETY: `size` bytes of live pinned memory.
    unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, size) };
    ptr
}

fn free_pinned(ptr: *mut c_void) {
    // SAFETY: from aclrtMallocHost, freed once.
    assert_eq!(unsafe { aclrtFreeHost(ptr) }, ACL_SUCCESS);
}

fn host_bytes(ptr: *mut c_void, size: usize) -> Vec<u8> {
    // SAFETY: live host memory of `size` bytes.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) }.to_vec()
}

fn set_device(ptr: *mut c_void, value: i32, size: usize) {
    // SAFETY: live device memory of `size` bytes.
    assert_eq!(unsafe { aclrtMemset(ptr, size, value, size) }, ACL_SUCCESS);
}

fn device_bytes(ptr: *mut c_void, size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    // SAFETY: `out` and `ptr` hold `size` bytes.
    let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(code, ACL_SUCCESS);
    out
}

/// The calls, with a stream for the asynchronous ones.
fn each_call(body: impl Fn(Call) + Sync) {
    on_device(|| {
        let stream = create_stream();
        for call in [Call::Sync, Call::SyncV2, Call::Async(stream), Call::AsyncV2(stream)] {
            body(call);
        }
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

#[test]
fn acl_layer_rules_leave_the_index_alone_and_move_nothing() {
    each_call(|call| {
        let device = malloc(64);
        set_device(device, 0, 64);
        let source = pinned(64);
        // SAFETY: 64 bytes of live pinned memory.
        unsafe { std::ptr::write_bytes(source.cast::<u8>(), 7, 64) };
        let good = || Batch::with_attr(h2d()).entry(device, source, 32);
        // failIndex NULL (the calls that have one): refused first.
        if call.has_index() {
            let mut batch = good();
            assert_eq!(batch.call_raw(call, 1, 1, true).0, ACL_ERROR_INVALID_PARAM, "{call:?}");
            assert!(recent().contains("failIndex is NULL"), "{}", recent());
        }
        // sizes NULL, numBatches 0.
        let mut batch = good();
        batch.sizes.clear();
        assert_eq!(batch.call_raw(call, 1, 1, false), (ACL_ERROR_INVALID_PARAM, UNTOUCHED));
        assert!(recent().contains("sizes is NULL"), "{}", recent());
        assert_eq!(good().call_raw(call, 0, 1, false), (ACL_ERROR_INVALID_PARAM, UNTOUCHED));
        assert!(recent().contains("numBatches must be positive"), "{}", recent());
        // Every size 0: success with nothing else checked (NULL arrays,
        // no attributes), failing index SIZE_MAX.
        let mut zero = Batch {
            sizes: vec![0, 0],
            ..Batch::default()
        };
        let (code, index) = zero.call_raw(call, 2, 0, false);
        assert_eq!(code, ACL_SUCCESS, "{call:?}");
        assert_eq!(index, if call.has_index() { usize::MAX } else { UNTOUCHED });
        // Each array NULL, in the ACL layer's order.
        for (which, clear) in [
            ("dsts", 0),
            ("destMaxs", 1),
            ("srcs", 2),
            ("attrs", 3),
            ("attrsIndexes", 4),
        ] {
            let mut batch = good();
            match clear {
                0 => batch.dsts.clear(),
                1 => batch.dest_maxs.clear(),
                2 => batch.srcs.clear(),
                3 => batch.attrs.clear(),
                _ => batch.starts.clear(),
            }
            assert_eq!(
                batch.call_raw(call, 1, 1, false),
                (ACL_ERROR_INVALID_PARAM, UNTOUCHED),
                "{which}"
            );
            assert!(recent().contains(&format!("{which} is NULL")), "{}", recent());
        }
        // destMaxs[1] < sizes[1]: the ACL layer, before any copy.
        let mut batch = good().entry(device, source, 16);
        batch.dest_maxs[1] = 15;
        assert_eq!(batch.call(call), (ACL_ERROR_INVALID_PARAM, UNTOUCHED));
        assert!(recent().contains("at index 1"), "{}", recent());
        // A reserved byte set.
        let mut batch = good();
        batch.attrs[0].rsv[15] = 1;
        assert_eq!(batch.call(call), (ACL_ERROR_INVALID_PARAM, UNTOUCHED));
        assert!(recent().contains("rsv field of attrs[0]"), "{}", recent());
        // Nothing was copied by any of them.
        assert_eq!(device_bytes(device, 64), [0; 64]);
        free_pinned(source);
        free(device);
    });
}

#[test]
fn runtime_index_rules_set_size_max() {
    each_call(|call| {
        let device = malloc(64);
        let source = pinned(64);
        let expect_index = if call.has_index() { usize::MAX } else { UNTOUCHED };
        let three = || {
            Batch::with_attr(h2d())
                .entry(device, source, 8)
                .entry(device, source, 8)
                .entry(device, source, 8)
        };
        // numAttrs 0.
        assert_eq!(
            three().call_raw(call, 3, 0, false),
            (ACL_ERROR_RT_PARAM_INVALID, expect_index)
        );
        assert!(recent().contains("numAttrs must be greater than 0"), "{}", recent());
        // numAttrs > numBatches.
        let mut batch = Batch::with_attr(h2d()).entry(device, source, 8);
        batch.attrs.push(h2d());
        batch.starts.push(1);
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, expect_index));
        assert!(recent().contains("less than or equal to numBatches"), "{}", recent());
        // attrsIndexes[0] not 0.
        let mut batch = three();
        batch.starts[0] = 1;
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, expect_index));
        assert!(recent().contains("attrsIndexes[0] is 1"), "{}", recent());
        // Not increasing; past the count.
        for (second, words) in [(0, "greater than attrsIndexes[0]"), (3, "less than numBatches")] {
            let mut batch = three();
            batch.attrs.push(d2h());
            batch.starts.push(second);
            assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, expect_index));
            assert!(recent().contains(words), "{}", recent());
        }
        free_pinned(source);
        free(device);
    });
}

#[test]
fn a_huge_numattrs_is_refused_by_the_count_check_before_any_attribute_is_read() {
    each_call(|call| {
        let device = malloc(64);
        let source = pinned(64);
        let expect_index = if call.has_index() { usize::MAX } else { UNTOUCHED };
        // One attribute in the arrays, numAttrs SIZE_MAX (and numBatches + 1):
        // the runtime's `numAttrs <= numBatches`, nothing read past the
        // arrays, nothing copied.
        for num_attrs in [usize::MAX, 2] {
            let mut batch = Batch::with_attr(h2d()).entry(device, source, 8);
            assert_eq!(
                batch.call_raw(call, 1, num_attrs, false),
                (ACL_ERROR_RT_PARAM_INVALID, expect_index),
                "{call:?} {num_attrs}"
            );
            assert!(recent().contains("less than or equal to numBatches 1"), "{}", recent());
        }
        free_pinned(source);
        free(device);
    });
}

#[test]
fn synchronous_batches_take_at_most_4096_entries() {
    on_device(|| {
        let device = malloc(64);
        let source = pinned(64);
        let mut batch = Batch::with_attr(h2d());
        for _ in 0..4097 {
            batch = batch.entry(device, source, 1);
        }
        assert_eq!(batch.call(Call::Sync), (ACL_ERROR_RT_PARAM_INVALID, usize::MAX));
        assert!(recent().contains("4096"), "{}", recent());
        batch.sizes.pop();
        batch.dsts.pop();
        batch.srcs.pop();
        batch.dest_maxs.pop();
        assert_eq!(batch.call(Call::Sync), (ACL_SUCCESS, usize::MAX));
        free_pinned(source);
        free(device);
    });
}

#[test]
fn an_entry_that_fails_names_its_index_and_nothing_moves() {
    each_call(|call| {
        let device = malloc(64);
        set_device(device, 0, 64);
        let other = malloc(64);
        let source = pinned(64);
        // SAFETY: 64 bytes of live pinned memory.
        unsafe { std::ptr::write_bytes(source.cast::<u8>(), 9, 64) };
        let at = |index: usize| if call.has_index() { index } else { UNTOUCHED };
        let two_good = || {
            Batch::with_attr(h2d())
                .entry(device, source, 8)
                .entry(device, source, 8)
        };
        // Entry 2: the attribute names device 1, the memory is on device 0.
        let mut batch = two_good().entry(device, source, 8);
        batch
            .attrs
            .push(attr(location(ACL_MEM_LOCATION_TYPE_DEVICE, 1), host()));
        batch.starts.push(2);
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, at(2)));
        assert!(recent().contains("dst"), "{}", recent());
        // Entry 1: device to device is not a batch direction.
        let mut batch = Batch::with_attr(h2d()).entry(device, source, 8).entry(device, other, 8);
        batch.attrs.push(attr(device0(), device0()));
        batch.starts.push(1);
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, at(1)));
        assert!(recent().contains("device to device"), "{}", recent());
        // Host to host neither (pageable or pinned: both are host).
        let mut plain = vec![0u8; 8];
        let mut batch = two_good().entry(plain.as_mut_ptr().cast(), source, 8);
        batch.attrs.push(attr(host(), host()));
        batch.starts.push(2);
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, at(2)));
        assert!(recent().contains("host to host"), "{}", recent());
        // The source said to be UNREGISTERED: the runtime compares HOST.
        let mut batch = two_good();
        batch.attrs[0].srcLoc = location(ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0);
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, at(0)));
        // A range that runs past the end of the device allocation.
        let mut batch = two_good().entry(device, source, 8);
        batch.dest_maxs[2] = 1 << 20;
        batch.sizes[2] = 1 << 20;
        let (code, index) = batch.call(call);
        assert_ne!(code, ACL_SUCCESS);
        assert_eq!(index, at(2));
        // A NULL entry pointer.
        let mut batch = two_good();
        batch.srcs[1] = null_mut();
        assert_eq!(batch.call(call), (ACL_ERROR_RT_PARAM_INVALID, at(1)));
        assert!(recent().contains("entry 1: src is NULL"), "{}", recent());
        // None of the good entries before the failing one moved a byte.
        assert_eq!(device_bytes(device, 64), [0; 64], "{call:?}");
        assert_eq!(plain, [0; 8]);
        free_pinned(source);
        free(other);
        free(device);
    });
}

#[test]
fn asynchronous_entries_must_have_a_size() {
    on_device(|| {
        let stream = create_stream();
        let device = malloc(64);
        let source = pinned(64);
        let mut batch = Batch::with_attr(h2d())
            .entry(device, source, 8)
            .entry(device, source, 0);
        assert_eq!(batch.call(Call::Async(stream)), (ACL_ERROR_RT_PARAM_INVALID, 1));
        assert!(recent().contains("size 0 must be greater than 0"), "{}", recent());
        // The synchronous call copies nothing for it and succeeds.
        assert_eq!(batch.call(Call::Sync), (ACL_SUCCESS, usize::MAX));
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        free_pinned(source);
        free(device);
    });
}

#[test]
fn host_to_device_and_device_to_host_entries_move_their_bytes() {
    each_call(|call| {
        let device = malloc(256);
        set_device(device, 0, 256);
        let source = pinned(64);
        let back = pinned(64);
        let pattern: Vec<u8> = (0..64u8).collect();
        // SAFETY: 64 bytes of live pinned memory.
        unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), source.cast::<u8>(), 64) };
        // SAFETY: inside the allocation.
        let upper = unsafe { device.cast::<u8>().add(128) }.cast::<c_void>();
        // SAFETY: inside the pinned allocation.
        let source_tail = unsafe { source.cast::<u8>().add(32) }.cast::<c_void>();
        // Entries 0 and 1 host to device, entry 2 device to host (attrs[1]
        // from index 2); HOST_NUMA counts as HOST.
        let mut batch = Batch::with_attr(attr(device0(), location(ACL_MEM_LOCATION_TYPE_HOST_NUMA, 0)))
            .entry(device, source, 32)
            .entry(upper, source_tail, 32)
            .entry(back, device, 32);
        batch.attrs.push(d2h());
        batch.starts.push(2);
        let (code, index) = batch.call(call);
        assert_eq!(code, ACL_SUCCESS, "{call:?} {}", recent());
        assert_eq!(index, if call.has_index() { usize::MAX } else { UNTOUCHED });
        if let Call::Async(stream) | Call::AsyncV2(stream) = call {
            assert_eq!(sync(stream), ACL_SUCCESS);
        }
        let seen = device_bytes(device, 256);
        assert_eq!(&seen[..32], &pattern[..32]);
        assert_eq!(&seen[32..128], [0; 96]);
        assert_eq!(&seen[128..160], &pattern[32..]);
        assert_eq!(&seen[160..], [0; 96]);
        // Entry 2 read entry 0's bytes: the entries ran in order.
        assert_eq!(&host_bytes(back, 64)[..32], &pattern[..32]);
        free_pinned(back);
        free_pinned(source);
        free(device);
    });
}

#[test]
fn the_asynchronous_batch_is_ordered_by_its_stream() {
    on_device(|| {
        let device = malloc(64);
        set_device(device, 0, 64);
        let source = pinned(64);
        let back = pinned(64);
        // SAFETY: 64 bytes of live pinned memory.
        unsafe { std::ptr::write_bytes(source.cast::<u8>(), 5, 64) };
        let stream = create_stream();
        let gate = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(wait_event(stream, gate), ACL_SUCCESS);
        // SAFETY: live device memory.
        assert_eq!(unsafe { aclrtMemsetAsync(device, 64, 1, 64, stream) }, ACL_SUCCESS);
        let mut up = Batch::with_attr(h2d()).entry(device, source, 16);
        assert_eq!(up.call(Call::Async(stream)), (ACL_SUCCESS, usize::MAX));
        let mut down = Batch::with_attr(d2h()).entry(back, device, 64);
        assert_eq!(down.call(Call::AsyncV2(stream)).0, ACL_SUCCESS);
        // The stream waits: nothing ran.
        assert_eq!(device_bytes(device, 64), [0; 64]);
        assert_eq!(host_bytes(back, 64), [0; 64]);
        let opener = create_stream();
        assert_eq!(record(gate, opener), ACL_SUCCESS);
        assert_eq!(sync(opener), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        // The memset, then the batch over part of it, then the read back.
        let mut want = vec![5u8; 16];
        want.extend([1u8; 48]);
        assert_eq!(host_bytes(back, 64), want);
        destroy_stream(opener);
        destroy_stream(stream);
        destroy_event(gate);
        free_pinned(back);
        free_pinned(source);
        free(device);
    });
}

#[test]
fn an_asynchronous_batch_with_pageable_memory_copies_during_the_call() {
    on_device(|| {
        let device = malloc(64);
        set_device(device, 0, 64);
        let stream = create_stream();
        let source = [3u8; 16];
        let mut batch = Batch::with_attr(h2d()).entry(device, source.as_ptr().cast_mut().cast(), 16);
        assert_eq!(batch.call(Call::Async(stream)), (ACL_SUCCESS, usize::MAX));
        // Done without a synchronisation.
        assert_eq!(&device_bytes(device, 64)[..16], [3; 16]);
        destroy_stream(stream);
        free(device);
    });
}

#[test]
fn the_stream_handle_is_checked_before_the_index_is_set() {
    on_device(|| {
        let device = malloc(64);
        let source = pinned(64);
        let stream = create_stream();
        destroy_stream(stream);
        let mut batch = Batch::with_attr(h2d()).entry(device, source, 8);
        assert_eq!(
            batch.call(Call::Async(stream)),
            (ACL_ERROR_RT_INVALID_HANDLE, UNTOUCHED)
        );
        // NULL: the default stream.
        assert_eq!(batch.call(Call::Async(null_mut())), (ACL_SUCCESS, usize::MAX));
        // SAFETY: NULL names the default stream.
        assert_eq!(unsafe { aclrtSynchronizeStream(null_mut()) }, ACL_SUCCESS);
        free_pinned(source);
        free(device);
    });
}

// ---- aclrtMemcpyAsyncWithOffset ---------------------------------------------

/// Writes `bytes` to device memory at `ptr`.
fn put_device(ptr: *mut c_void, bytes: &[u8]) {
    // SAFETY: `bytes` and `ptr` hold `bytes.len()` bytes.
    let code = unsafe {
        aclrtMemcpy(
            ptr,
            bytes.len(),
            bytes.as_ptr().cast(),
            bytes.len(),
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    };
    assert_eq!(code, ACL_SUCCESS);
}

/// Stores the address `target` in the 8 bytes of device memory at `slot`.
fn point(slot: *mut c_void, target: *mut c_void) {
    put_device(slot, &(target as u64).to_ne_bytes());
}

#[allow(clippy::too_many_arguments)]
fn with_offset(
    dst: *mut c_void,
    dest_max: usize,
    dst_offset: usize,
    src: *mut c_void,
    count: usize,
    src_offset: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: the slots are device memory or refused before use.
    unsafe {
        aclrtMemcpyAsyncWithOffset(
            dst.cast(),
            dest_max,
            dst_offset,
            src.cast(),
            count,
            src_offset,
            kind,
            stream,
        )
    }
}

#[test]
fn offset_copy_rules() {
    on_device(|| {
        let stream = create_stream();
        let (dst_slot, src_slot, data) = (malloc(8), malloc(8), malloc(64));
        point(dst_slot, data);
        point(src_slot, data);
        const INNER: aclrtMemcpyKind = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
        // count 0: success before anything is looked at.
        assert_eq!(with_offset(null_mut(), 0, 0, null_mut(), 0, 0, 99, stream), ACL_SUCCESS);
        // Only the inner device-to-device kind.
        assert_eq!(
            with_offset(dst_slot, 64, 0, src_slot, 8, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("ACL_MEMCPY_INNER_DEVICE_TO_DEVICE"), "{}", recent());
        let refused: [(&dyn Fn() -> aclError, &str); 6] = [
            (
                &|| with_offset(null_mut(), 64, 0, src_slot, 8, 0, INNER, stream),
                "dst is NULL",
            ),
            (
                &|| with_offset(dst_slot, 64, 0, null_mut(), 8, 0, INNER, stream),
                "src is NULL",
            ),
            (
                &|| with_offset(dst_slot, 8, 0, src_slot, 9, 0, INNER, stream),
                "larger than destMax",
            ),
            (
                &|| with_offset(dst_slot, 64, 0, src_slot, 8, 1 << 48, INNER, stream),
                "srcDataOffset",
            ),
            (
                &|| with_offset(dst_slot, 64, 64, src_slot, 8, 0, INNER, stream),
                "must be less than destMax",
            ),
            (
                &|| with_offset(dst_slot, 64, 60, src_slot, 8, 0, INNER, stream),
                "destMax - dstDataOffset",
            ),
        ];
        for (call, words) in refused {
            assert_eq!(call(), ACL_ERROR_RT_PARAM_INVALID, "{words}");
            assert!(recent().contains(words), "{words}: {}", recent());
        }
        // The pointers must be held in device memory.
        let host_slot = pinned(8);
        assert_eq!(
            with_offset(host_slot, 64, 0, src_slot, 8, 0, INNER, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("not device memory"), "{}", recent());
        // A destroyed stream: the handle check comes before the others.
        let gone = create_stream();
        destroy_stream(gone);
        assert_eq!(
            with_offset(null_mut(), 64, 0, src_slot, 8, 0, INNER, gone),
            ACL_ERROR_RT_INVALID_HANDLE
        );
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        free_pinned(host_slot);
        for ptr in [dst_slot, src_slot, data] {
            free(ptr);
        }
    });
}

#[test]
fn offset_copy_reads_its_pointers_when_it_runs() {
    on_device(|| {
        let (dst_slot, src_slot) = (malloc(8), malloc(8));
        let (from, first, second) = (malloc(64), malloc(64), malloc(64));
        let pattern: Vec<u8> = (100..164u8).collect();
        put_device(from, &pattern);
        set_device(first, 0, 64);
        set_device(second, 0, 64);
        point(src_slot, from);
        point(dst_slot, first);
        let stream = create_stream();
        let gate = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(wait_event(stream, gate), ACL_SUCCESS);
        let code = with_offset(
            dst_slot,
            32,
            8,
            src_slot,
            16,
            4,
            ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
            stream,
        );
        assert_eq!(code, ACL_SUCCESS, "{}", recent());
        // Repoint the destination before the copy runs.
        point(dst_slot, second);
        let opener = create_stream();
        assert_eq!(record(gate, opener), ACL_SUCCESS);
        assert_eq!(sync(opener), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(device_bytes(first, 64), [0; 64]);
        let seen = device_bytes(second, 64);
        assert_eq!(&seen[..8], [0; 8]);
        assert_eq!(&seen[8..24], &pattern[4..20]);
        assert_eq!(&seen[24..], [0; 40]);
        destroy_stream(opener);
        destroy_stream(stream);
        destroy_event(gate);
        for ptr in [dst_slot, src_slot, from, first, second] {
            free(ptr);
        }
    });
}

#[test]
fn offset_copy_through_addresses_that_are_not_device_memory_fails_the_task() {
    on_device(|| {
        const INNER: aclrtMemcpyKind = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
        // Two zeroed slots: the copy would write host address 0x40 and read
        // host address 0. The task fails; the process lives.
        let slots = malloc(16);
        set_device(slots, 0, 16);
        // SAFETY: inside the allocation.
        let second = unsafe { slots.cast::<u8>().add(8) }.cast::<c_void>();
        let stream = create_stream();
        let code = with_offset(slots, 128, 0x40, second, 8, 0, INNER, stream);
        assert_eq!(code, ACL_SUCCESS, "{}", recent());
        assert_eq!(sync(stream), ACL_ERROR_RT_SYS_DMA);
        assert!(recent().contains("0x40 is not device memory"), "{}", recent());
        // Real host memory in a slot, as destination or source (pageable or
        // pinned): the task fails and the host bytes are neither written
        // nor read.
        let data = malloc(64);
        let pattern: Vec<u8> = (1..=64u8).collect();
        put_device(data, &pattern);
        let mut host = vec![0xEEu8; 64];
        let host_ptr = host.as_mut_ptr().cast::<c_void>();
        let pinned_source = pinned(64);
        // SAFETY: 64 bytes of live pinned memory.
        unsafe { std::ptr::write_bytes(pinned_source.cast::<u8>(), 0x77, 64) };
        for (to, from) in [(host_ptr, data), (data, host_ptr), (data, pinned_source)] {
            point(slots, to);
            point(second, from);
            let code = with_offset(slots, 64, 0, second, 16, 0, INNER, stream);
            assert_eq!(code, ACL_SUCCESS, "{}", recent());
            assert_eq!(sync(stream), ACL_ERROR_RT_SYS_DMA);
            assert!(recent().contains("is not device memory"), "{}", recent());
        }
        assert_eq!(host, [0xEE; 64]);
        assert_eq!(device_bytes(data, 64), pattern);
        // Device memory in both slots still copies.
        let other = malloc(64);
        set_device(other, 0, 64);
        point(slots, other);
        point(second, data);
        assert_eq!(with_offset(slots, 64, 0, second, 16, 0, INNER, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS, "{}", recent());
        assert_eq!(&device_bytes(other, 64)[..16], &pattern[..16]);
        destroy_stream(stream);
        free_pinned(pinned_source);
        for ptr in [slots, data, other] {
            free(ptr);
        }
    });
}

// ---- memory-copy descriptors --------------------------------------------------

fn desc_size(kind: aclrtMemcpyKind) -> (aclError, usize) {
    let mut size = 0;
    // SAFETY: `size` is a valid out-pointer.
    let code = unsafe { aclrtGetMemcpyDescSize(kind, &mut size) };
    (code, size)
}

fn set_desc(desc: *mut c_void, kind: aclrtMemcpyKind, src: *mut c_void, dst: *mut c_void, count: usize) -> aclError {
    // SAFETY: device pointers or refused before use.
    unsafe { aclrtSetMemcpyDesc(desc, kind, src, dst, count, null_mut()) }
}

fn with_desc(desc: *mut c_void, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError {
    // SAFETY: a device pointer or refused before use.
    unsafe { aclrtMemcpyAsyncWithDesc(desc, kind, stream) }
}

#[test]
fn descriptor_size_rules() {
    on_device(|| {
        assert_eq!(desc_size(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE), (ACL_SUCCESS, 32));
        assert_eq!(
            desc_size(ACL_MEMCPY_DEVICE_TO_DEVICE).0,
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );
        assert_eq!(desc_size(8).0, ACL_ERROR_INVALID_PARAM);
        // SAFETY: NULL is refused before use.
        let code = unsafe { aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, null_mut()) };
        assert_eq!(code, ACL_ERROR_INVALID_PARAM);
    });
}

#[test]
fn descriptor_round_trip_and_rules() {
    on_device(|| {
        const INNER: aclrtMemcpyKind = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
        let desc = malloc(128);
        assert_eq!(desc as usize % 64, 0, "aclrtMalloc memory is 64-byte aligned");
        let (from, to) = (malloc(64), malloc(64));
        let pattern: Vec<u8> = (1..=64u8).collect();
        put_device(from, &pattern);
        set_device(to, 0, 64);
        // The ACL layer: NULLs, kind range, count 0, config.
        assert_eq!(set_desc(null_mut(), INNER, from, to, 8), ACL_ERROR_INVALID_PARAM);
        assert_eq!(set_desc(desc, 8, from, to, 8), ACL_ERROR_INVALID_PARAM);
        assert_eq!(set_desc(desc, INNER, null_mut(), to, 8), ACL_ERROR_INVALID_PARAM);
        assert_eq!(set_desc(desc, INNER, from, null_mut(), 8), ACL_ERROR_INVALID_PARAM);
        assert_eq!(set_desc(desc, INNER, from, to, 0), ACL_ERROR_INVALID_PARAM);
        // SAFETY: the config is refused before use.
        let code = unsafe { aclrtSetMemcpyDesc(desc, INNER, from, to, 8, desc) };
        assert_eq!(code, ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("config"), "{}", recent());
        // The runtime: kind, alignment, device memory.
        assert_eq!(
            set_desc(desc, ACL_MEMCPY_DEVICE_TO_DEVICE, from, to, 8),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );
        // SAFETY: inside the allocation.
        let odd = unsafe { desc.cast::<u8>().add(32) }.cast::<c_void>();
        assert_eq!(set_desc(odd, INNER, from, to, 8), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("64-byte aligned"), "{}", recent());
        let host = pinned(64);
        assert_eq!(set_desc(desc, INNER, host, to, 8), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(set_desc(host, INNER, from, to, 8), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not device memory"), "{}", recent());
        // 4 GiB passes the runtime's limit but not the 32-bit length field
        // (the runtime would store 0): refused; more than 4 GiB too.
        set_device(desc, 0xA5, 128);
        for count in [4usize << 30, (4usize << 30) + 1] {
            assert_eq!(set_desc(desc, INNER, from, to, count), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains(&format!("count {count}")), "{}", recent());
        }
        assert_eq!(device_bytes(desc, 128), [0xA5; 128]);
        // Nothing was written into the descriptor so far.
        set_device(desc, 0, 128);
        // The round trip: the runtime's rtMemcpyAddrInfo layout.
        // SAFETY: inside the allocation.
        let from_tail = unsafe { from.cast::<u8>().add(16) }.cast::<c_void>();
        assert_eq!(set_desc(desc, INNER, from_tail, to, 24), ACL_SUCCESS, "{}", recent());
        let stored = device_bytes(desc, 32);
        assert_eq!(&stored[..12], [0; 12]);
        assert_eq!(&stored[12..16], 24u32.to_ne_bytes());
        assert_eq!(&stored[16..24], (from_tail as u64).to_ne_bytes());
        assert_eq!(&stored[24..32], (to as u64).to_ne_bytes());
        // The asynchronous copy: its ACL checks, then the runtime's.
        let stream = create_stream();
        assert_eq!(with_desc(null_mut(), INNER, stream), ACL_ERROR_INVALID_PARAM);
        assert_eq!(with_desc(desc, 8, stream), ACL_ERROR_INVALID_PARAM);
        assert_eq!(with_desc(desc, INNER, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("stream is NULL"), "{}", recent());
        assert_eq!(
            with_desc(desc, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );
        assert_eq!(with_desc(odd, INNER, stream), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(with_desc(host, INNER, stream), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(device_bytes(to, 64), [0; 64]);
        // Queued behind a gate: the descriptor is read when the copy runs.
        let gate = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(wait_event(stream, gate), ACL_SUCCESS);
        assert_eq!(with_desc(desc, INNER, stream), ACL_SUCCESS, "{}", recent());
        assert_eq!(set_desc(desc, INNER, from, to, 8), ACL_SUCCESS);
        let opener = create_stream();
        assert_eq!(record(gate, opener), ACL_SUCCESS);
        assert_eq!(sync(opener), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        let seen = device_bytes(to, 64);
        assert_eq!(&seen[..8], &pattern[..8]);
        assert_eq!(&seen[8..], [0; 56]);
        destroy_stream(opener);
        destroy_stream(stream);
        destroy_event(gate);
        free_pinned(host);
        for ptr in [desc, from, to] {
            free(ptr);
        }
    });
}

#[test]
fn descriptor_naming_addresses_that_are_not_device_memory_fails_the_task() {
    on_device(|| {
        const INNER: aclrtMemcpyKind = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
        let (desc, from, to) = (malloc(64), malloc(64), malloc(64));
        let pattern: Vec<u8> = (1..=64u8).collect();
        put_device(from, &pattern);
        set_device(to, 0, 64);
        let mut host = vec![0xEEu8; 64];
        let host_ptr = host.as_mut_ptr().cast::<c_void>();
        let host_source = vec![0x77u8; 64];
        let host_source_ptr = host_source.as_ptr().cast_mut().cast::<c_void>();
        // SAFETY: inside the descriptor's allocation.
        let addresses = unsafe { desc.cast::<u8>().add(16) }.cast::<c_void>();
        let stream = create_stream();
        let cases = [
            (0x40 as *mut c_void, from),
            (to, std::ptr::dangling_mut::<c_void>()),
            (host_ptr, from),
            (to, host_source_ptr),
        ];
        for (dst, src) in cases {
            // A valid descriptor, whose addresses are then overwritten by a
            // plain copy (the runtime reads them when the task runs).
            assert_eq!(set_desc(desc, INNER, from, to, 16), ACL_SUCCESS, "{}", recent());
            let mut bytes = (src as u64).to_ne_bytes().to_vec();
            bytes.extend((dst as u64).to_ne_bytes());
            put_device(addresses, &bytes);
            assert_eq!(with_desc(desc, INNER, stream), ACL_SUCCESS, "{}", recent());
            assert_eq!(sync(stream), ACL_ERROR_RT_SYS_DMA, "{dst:?} <- {src:?}");
            assert!(recent().contains("is not device memory"), "{}", recent());
        }
        assert_eq!(host, [0xEE; 64]);
        assert_eq!(device_bytes(to, 64), [0; 64]);
        // Restored, the descriptor copies again.
        assert_eq!(set_desc(desc, INNER, from, to, 16), ACL_SUCCESS);
        assert_eq!(with_desc(desc, INNER, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS, "{}", recent());
        assert_eq!(&device_bytes(to, 64)[..16], &pattern[..16]);
        destroy_stream(stream);
        drop(host_source);
        for ptr in [desc, from, to] {
            free(ptr);
        }
    });
}

// ---- aclrtMemcpyAsyncWithCondition --------------------------------------------

fn with_condition(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: live memory of `count` bytes, or refused before use.
    unsafe { aclrtMemcpyAsyncWithCondition(dst, count, src, count, kind, stream) }
}

#[test]
fn condition_copy_is_an_asynchronous_copy_with_the_pinned_check() {
    on_device(|| {
        let device = malloc(64);
        set_device(device, 0, 64);
        let source = pinned(64);
        // SAFETY: 64 bytes of live pinned memory.
        unsafe { std::ptr::write_bytes(source.cast::<u8>(), 4, 64) };
        let stream = create_stream();
        // aclrtMemcpyAsync's ACL rules.
        assert_eq!(with_condition(null_mut(), null_mut(), 0, 99, stream), ACL_SUCCESS);
        assert_eq!(
            with_condition(null_mut(), source, 8, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            with_condition(device, source, 8, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream),
            ACL_ERROR_INVALID_PARAM
        );
        // Pinned memory: a task ordered by the stream.
        let gate = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(wait_event(stream, gate), ACL_SUCCESS);
        assert_eq!(
            with_condition(device, source, 16, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS
        );
        assert_eq!(device_bytes(device, 64), [0; 64]);
        let opener = create_stream();
        assert_eq!(record(gate, opener), ACL_SUCCESS);
        assert_eq!(sync(opener), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(
            &device_bytes(device, 64)[..17],
            [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0]
        );
        // Pageable memory: copied during the call, as aclrtMemcpyAsync does.
        let plain = [6u8; 8];
        assert_eq!(
            with_condition(device, plain.as_ptr().cast(), 8, ACL_MEMCPY_DEFAULT, stream),
            ACL_SUCCESS
        );
        assert_eq!(&device_bytes(device, 64)[..9], [6, 6, 6, 6, 6, 6, 6, 6, 4]);
        // A pinned/device pair forces its kind, as in aclrtMemcpyAsync.
        assert_eq!(
            with_condition(device, source, 8, ACL_MEMCPY_DEVICE_TO_HOST, stream),
            ACL_SUCCESS,
            "a pinned/device pair forces its kind"
        );
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(opener);
        destroy_stream(stream);
        destroy_event(gate);
        free_pinned(source);
        free(device);
    });
}
