//! The software device's data path when raw callers alias device memory.
//!
//! Two streams copy into the same bytes at once: one whole copy forward on
//! one stream, the same bytes piece by piece from the end on the other, so
//! the two writers cross if they run together. The software device moves
//! bytes in steps inside one 2 MiB chunk per side and never lets two steps
//! on the same chunk run at once, so every 512-byte block (all buffers here
//! are 512-byte aligned, so no step boundary falls inside a block) ends as
//! one copy wrote it, never a mixture. Two stream workers `memcpy`-ing the
//! same bytes at once would instead be a data race inside the library.
//! Software device only: on hardware the result of such a race is
//! unspecified. The race is planted on purpose: the stream-hazard
//! sanitizer, when on, reports every piece copy, and the test checks that
//! it does.

mod soft_common;

use ascend_sys::*;
use soft_common::{on_device, physical};
use std::ffi::c_void;
use std::ptr::null_mut;

/// Bytes written by each copy (four 2 MiB granules).
const SIZE: usize = 8 << 20;

/// Pieces of the second writer.
const PIECES: usize = 8;

/// The unit that must come whole from one writer.
const BLOCK: usize = 512;

const ROUNDS: usize = 12;

fn ok(code: aclError, what: &str) {
    assert_eq!(code, ACL_SUCCESS, "{what}");
}

/// Pinned host memory holding `pattern` at a [`BLOCK`]-aligned address
/// (returned second; the first is the allocation, to free), so that copies
/// from it are asynchronous (run by the stream's worker).
fn pinned(pattern: impl Fn(usize) -> u8) -> (*mut c_void, *mut c_void) {
    let mut host = null_mut();
    // SAFETY: a valid out-pointer; the new buffer holds SIZE + BLOCK bytes,
    // so SIZE bytes fit after the aligned start.
    unsafe {
        ok(aclrtMallocHost(&mut host, SIZE + BLOCK), "aclrtMallocHost");
        let aligned = host.byte_add(host.align_offset(BLOCK));
        let bytes = std::slice::from_raw_parts_mut(aligned.cast::<u8>(), SIZE);
        bytes
            .iter_mut()
            .enumerate()
            .for_each(|(index, byte)| *byte = pattern(index));
        (host, aligned)
    }
}

fn first_writer(index: usize) -> u8 {
    (index % 251) as u8
}

fn second_writer(index: usize) -> u8 {
    !first_writer(index)
}

/// Races the two writers into `one` and `other` (the same bytes, through
/// the same or two addresses) and checks that each piece is whole.
fn race(one: *mut c_void, other: *mut c_void) {
    let piece = SIZE / PIECES;
    let ((a_base, a), (b_base, b)) = (pinned(first_writer), pinned(second_writer));
    for address in [one, other, a, b] {
        assert_eq!(address as usize % BLOCK, 0, "{address:?} is not {BLOCK}-byte aligned");
    }
    // SAFETY: device addresses of SIZE live bytes, pinned host buffers of
    // SIZE bytes, live streams; every pointer outlives its use.
    unsafe {
        let (mut s1, mut s2) = (null_mut(), null_mut());
        ok(aclrtCreateStream(&mut s1), "create stream 1");
        ok(aclrtCreateStream(&mut s2), "create stream 2");
        let mut back = vec![0u8; SIZE];
        let mut mixes = Vec::new();
        let watch = soft::MisuseWatch::start();
        for round in 0..ROUNDS {
            ok(
                aclrtMemcpyAsync(one, SIZE, a, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, s1),
                "whole copy",
            );
            // Nothing orders these copies after the whole copy on `s1`:
            // the race is the point of the test, and the sanitizer, when
            // on, reports each piece (checked below).
            for index in (0..PIECES).rev() {
                let at = index * piece;
                ok(
                    aclrtMemcpyAsync(
                        other.byte_add(at),
                        piece,
                        b.byte_add(at),
                        piece,
                        ACL_MEMCPY_HOST_TO_DEVICE,
                        s2,
                    ),
                    "piece copy",
                );
            }
            ok(aclrtSynchronizeStream(s1), "sync 1");
            ok(aclrtSynchronizeStream(s2), "sync 2");
            ok(
                aclrtMemcpy(back.as_mut_ptr().cast(), SIZE, one, SIZE, ACL_MEMCPY_DEVICE_TO_HOST),
                "read back",
            );
            for (index, bytes) in back.chunks(BLOCK).enumerate() {
                let from = |writer: fn(usize) -> u8| {
                    bytes
                        .iter()
                        .enumerate()
                        .all(|(offset, byte)| *byte == writer(index * BLOCK + offset))
                };
                if !from(first_writer) && !from(second_writer) {
                    mixes.push((round, index));
                }
            }
        }
        if soft::sanitizer_checks().contains(soft::Checks::RACE) {
            let planted = format!(
                "race (write after write): aclrtMemcpyAsync on stream {:#x} ",
                s2 as usize
            );
            let seen = watch.seen();
            let reported = seen
                .iter()
                .filter(|misuse| misuse.description.starts_with(&planted))
                .count();
            assert_eq!(
                reported,
                PIECES * ROUNDS,
                "the sanitizer reports each piece copy racing the whole copy: {seen:#?}"
            );
        }
        drop(watch);
        ok(aclrtDestroyStream(s1), "destroy stream 1");
        ok(aclrtDestroyStream(s2), "destroy stream 2");
        ok(aclrtFreeHost(a_base), "free host a");
        ok(aclrtFreeHost(b_base), "free host b");
        assert!(mixes.is_empty(), "blocks mixing both writers (round, block): {mixes:?}");
    }
}

#[test]
fn copies_into_two_mappings_of_one_allocation_leave_whole_blocks() {
    on_device(|| {
        // SAFETY: valid out-pointers; the reservations are SIZE bytes and
        // the handle is mapped whole into each, then unmapped and freed.
        unsafe {
            let handle = physical(SIZE);
            let (mut first, mut second) = (null_mut(), null_mut());
            ok(aclrtReserveMemAddress(&mut first, SIZE, 0, null_mut(), 0), "reserve 1");
            ok(aclrtReserveMemAddress(&mut second, SIZE, 0, null_mut(), 0), "reserve 2");
            ok(aclrtMapMem(first, SIZE, 0, handle, 0), "map 1");
            ok(aclrtMapMem(second, SIZE, 0, handle, 0), "map 2");
            race(first, second);
            ok(aclrtUnmapMem(first), "unmap 1");
            ok(aclrtUnmapMem(second), "unmap 2");
            ok(aclrtFreePhysical(handle), "free physical");
            ok(aclrtReleaseMemAddress(first), "release 1");
            ok(aclrtReleaseMemAddress(second), "release 2");
        }
    });
}

#[test]
fn copies_into_one_buffer_from_two_streams_leave_whole_blocks() {
    on_device(|| {
        let mut buffer = null_mut();
        // SAFETY: a valid out-pointer; the buffer is freed after the race.
        unsafe {
            ok(aclrtMalloc(&mut buffer, SIZE, ACL_MEM_MALLOC_HUGE_FIRST), "malloc");
            race(buffer, buffer);
            ok(aclrtFree(buffer), "free");
        }
    });
}
