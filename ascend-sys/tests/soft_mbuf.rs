//! The software device's mbuf rules (3.13): the ACL layer's argument checks
//! of hicann/runtime `src/acl/aclrt_impl/memory.cpp` with their codes,
//! reference counting, data length, user data, chains, misuse and the leak
//! report. Software device only: these tests select it explicitly.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{alloc_buf, buf_data, chain_get, chain_num, copy_buf_ref, free_buf};
use soft_common::{recent, software};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// Keeps this file's tests from running at once: they count live
/// resources, which are process-wide.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    software();
    SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A handle that was never allocated (never dereferenced).
const BOGUS: usize = 0x1234_5600;

fn set_len(buf: aclrtMbuf, len: usize) -> aclError {
    // SAFETY: handle only looked up.
    unsafe { aclrtSetBufDataLen(buf, len) }
}

fn get_len(buf: aclrtMbuf) -> Result<usize, aclError> {
    let mut len = 0usize;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetBufDataLen(buf, &mut len) } {
        ACL_SUCCESS => Ok(len),
        code => Err(code),
    }
}

fn set_user(buf: aclrtMbuf, bytes: &[u8], offset: usize) -> aclError {
    // SAFETY: `bytes` is valid for its length.
    unsafe { aclrtSetBufUserData(buf, bytes.as_ptr().cast(), bytes.len(), offset) }
}

fn get_user(buf: aclrtMbuf, out: &mut [u8], offset: usize) -> aclError {
    // SAFETY: `out` is valid for its length.
    unsafe { aclrtGetBufUserData(buf, out.as_mut_ptr().cast(), out.len(), offset) }
}

fn append(head: aclrtMbuf, buf: aclrtMbuf) -> aclError {
    // SAFETY: handles only looked up.
    unsafe { aclrtAppendBufChain(head, buf) }
}

#[test]
fn alloc_checks_null_and_zero_size_then_gives_a_zeroed_area() {
    let _serial = serial();
    // SAFETY: NULL out-pointer is refused before any write.
    assert_eq!(unsafe { aclrtAllocBuf(null_mut(), 16) }, ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("buf"), "{}", recent());
    let mut buf = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtAllocBuf(&mut buf, 0) }, ACL_ERROR_INVALID_PARAM);
    assert!(buf.is_null(), "a refused allocation writes nothing");

    let buf = alloc_buf(100);
    let (data, size) = buf_data(buf);
    assert_eq!(size, 100);
    assert!(!data.is_null());
    assert_eq!(data as usize % 64, 0, "data areas are 64-byte aligned");
    // SAFETY: the area has 100 bytes, host-visible.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), 100) };
    assert!(bytes.iter().all(|&b| b == 0));
    assert_eq!(get_len(buf), Ok(0), "the data length starts at 0");
    assert_eq!(free_buf(buf), ACL_SUCCESS);
}

#[test]
fn getters_check_null_pointers_in_the_runtime_order() {
    let _serial = serial();
    let buf = alloc_buf(8);
    let (mut data, mut size) = (null_mut::<c_void>(), 0usize);
    // SAFETY: NULL arguments are refused before any write.
    unsafe {
        assert_eq!(
            aclrtGetBufData(null_mut(), &mut data, &mut size),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(aclrtGetBufData(buf, null_mut(), &mut size), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufData(buf, &mut data, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufDataLen(null_mut(), &mut size), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufDataLen(buf, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtSetBufDataLen(null_mut(), 1), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtFreeBuf(null_mut()), ACL_ERROR_INVALID_PARAM);
        let mut other = null_mut();
        assert_eq!(aclrtCopyBufRef(null_mut(), &mut other), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtCopyBufRef(buf, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtAppendBufChain(null_mut(), buf), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtAppendBufChain(buf, null_mut()), ACL_ERROR_INVALID_PARAM);
        let mut num = 0u32;
        assert_eq!(aclrtGetBufChainNum(null_mut(), &mut num), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufChainNum(buf, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufFromChain(null_mut(), 0, &mut other), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufFromChain(buf, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(free_buf(buf), ACL_SUCCESS);
}

#[test]
fn data_length_is_at_most_the_capacity() {
    let _serial = serial();
    let buf = alloc_buf(32);
    assert_eq!(set_len(buf, 32), ACL_SUCCESS);
    assert_eq!(get_len(buf), Ok(32));
    assert_eq!(set_len(buf, 33), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(get_len(buf), Ok(32), "a refused length changes nothing");
    assert_eq!(set_len(buf, 0), ACL_SUCCESS);
    assert_eq!(get_len(buf), Ok(0));
    assert_eq!(free_buf(buf), ACL_SUCCESS);
}

#[test]
fn user_data_is_96_bytes_and_the_range_check_comes_first() {
    let _serial = serial();
    let buf = alloc_buf(8);
    let mut out = [0u8; 96];
    // size + offset above 96: INVALID_PARAM even before the NULL checks.
    // SAFETY: refused before any access.
    unsafe {
        assert_eq!(aclrtSetBufUserData(null_mut(), null(), 90, 7), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("greater than 96"), "{}", recent());
        assert_eq!(
            aclrtGetBufUserData(null_mut(), null_mut(), 97, 0),
            ACL_ERROR_INVALID_PARAM
        );
        // A sum that wraps is compared wrapped, as in C.
        assert_eq!(
            aclrtGetBufUserData(null_mut(), null_mut(), usize::MAX, 2),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            aclrtSetBufUserData(null_mut(), out.as_ptr().cast(), 4, 0),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(aclrtSetBufUserData(buf, null(), 4, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetBufUserData(buf, null_mut(), 4, 0), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(get_user(buf, &mut out, 0), ACL_SUCCESS);
    assert!(out.iter().all(|&b| b == 0), "user data starts zeroed");
    assert_eq!(set_user(buf, &[1, 2, 3, 4], 92), ACL_SUCCESS);
    let mut four = [0u8; 4];
    assert_eq!(get_user(buf, &mut four, 92), ACL_SUCCESS);
    assert_eq!(four, [1, 2, 3, 4]);
    assert_eq!(set_user(buf, &[9; 5], 92), ACL_ERROR_INVALID_PARAM);
    // The bounded copy of 0 bytes: a 0-byte destination fails.
    assert_eq!(get_user(buf, &mut [], 10), ACL_ERROR_FAILURE);
    assert_eq!(set_user(buf, &[], 96), ACL_ERROR_FAILURE);
    assert_eq!(set_user(buf, &[], 10), ACL_SUCCESS);
    // A wrapped sum passes the range check; the bounded copy then refuses.
    // SAFETY: refused before any access.
    unsafe {
        assert_eq!(
            aclrtGetBufUserData(buf, out.as_mut_ptr().cast(), usize::MAX, 2),
            ACL_ERROR_FAILURE
        );
        assert_eq!(
            aclrtSetBufUserData(buf, out.as_ptr().cast(), 2, usize::MAX),
            ACL_ERROR_FAILURE
        );
    }
    assert_eq!(free_buf(buf), ACL_SUCCESS);
}

#[test]
fn copy_buf_ref_shares_the_data_and_free_drops_one_reference() {
    let _serial = serial();
    let since = soft::sequence_now();
    let buf = alloc_buf(64);
    assert_eq!(set_len(buf, 10), ACL_SUCCESS);
    assert_eq!(set_user(buf, &[7; 8], 0), ACL_SUCCESS);
    let copy = copy_buf_ref(buf);
    assert_ne!(copy, buf);
    let (data, size) = buf_data(buf);
    assert_eq!(buf_data(copy), (data, size), "one data area, two headers");
    assert_eq!(get_len(copy), Ok(10), "the copy starts with the data length");
    let mut user = [0u8; 8];
    assert_eq!(get_user(copy, &mut user, 0), ACL_SUCCESS);
    assert_eq!(user, [7; 8], "and with a copy of the user data");
    // The headers are separate: lengths and user data diverge.
    assert_eq!(set_len(copy, 3), ACL_SUCCESS);
    assert_eq!(get_len(buf), Ok(10));
    // Writes through one header are seen through the other.
    // SAFETY: 64-byte host-visible area.
    unsafe { data.cast::<u8>().write(0xab) };
    let mine: Vec<_> = soft::live_since(since);
    assert_eq!(mine.len(), 2);
    assert!(mine.iter().all(|r| r.kind == soft::ResourceKind::Mbuf && r.bytes == 64));
    assert!(mine[0].detail.contains("2 reference(s)"), "{}", mine[0].detail);
    assert_eq!(free_buf(buf), ACL_SUCCESS);
    // The area lives on with the copy.
    let (still, _) = buf_data(copy);
    // SAFETY: the area is still live (one reference left).
    assert_eq!(unsafe { still.cast::<u8>().read() }, 0xab);
    let left = soft::live_since(since);
    assert_eq!(left.len(), 1);
    assert!(left[0].detail.contains("1 reference(s)"), "{}", left[0].detail);
    assert_eq!(free_buf(copy), ACL_SUCCESS);
    assert!(soft::live_since(since).is_empty());
}

#[test]
fn double_free_and_use_after_free_are_refused_and_recorded() {
    let _serial = serial();
    let watch = soft::MisuseWatch::start();
    let buf = alloc_buf(8);
    assert_eq!(free_buf(buf), ACL_SUCCESS);
    assert_eq!(free_buf(buf), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(set_len(buf, 1), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(get_len(buf), Err(ACL_ERROR_RT_PARAM_INVALID));
    assert_eq!(chain_num(buf), Err(ACL_ERROR_RT_PARAM_INVALID));
    assert_eq!(free_buf(BOGUS as aclrtMbuf), ACL_ERROR_RT_PARAM_INVALID);
    let seen = watch.seen();
    let mine: Vec<_> = seen
        .iter()
        .filter(|m| m.description.contains(&format!("{:#x}", buf as usize)))
        .collect();
    assert_eq!(mine.len(), 4, "{seen:?}");
    assert!(mine.iter().any(|m| m.api == "aclrtFreeBuf"));
    assert!(seen.iter().any(|m| m.description.contains(&format!("{BOGUS:#x}"))));
    // A new allocation never reuses a freed handle.
    let again = alloc_buf(8);
    assert_ne!(again, buf);
    assert_eq!(free_buf(again), ACL_SUCCESS);
}

#[test]
fn chains_append_count_index_and_free_with_their_head() {
    let _serial = serial();
    let since = soft::sequence_now();
    let (a, b, c, d) = (alloc_buf(4), alloc_buf(8), alloc_buf(16), alloc_buf(32));
    assert_eq!(chain_num(a), Ok(1), "a lone mbuf is a chain of one");
    assert_eq!(chain_get(a, 0), Ok(a));
    assert_eq!(chain_get(a, 1), Err(ACL_ERROR_RT_PARAM_INVALID));
    assert_eq!(append(a, b), ACL_SUCCESS);
    // c heads its own chain c -> d; appending c brings d along.
    assert_eq!(append(c, d), ACL_SUCCESS);
    assert_eq!(append(a, c), ACL_SUCCESS);
    assert_eq!(chain_num(a), Ok(4));
    for (index, member) in [a, b, c, d].into_iter().enumerate() {
        assert_eq!(chain_get(a, index as u32), Ok(member));
    }
    assert_eq!(chain_get(a, 4), Err(ACL_ERROR_RT_PARAM_INVALID));
    assert_eq!(chain_get(a, u32::MAX), Err(ACL_ERROR_RT_PARAM_INVALID));
    // Counting from a member counts from there on.
    assert_eq!(chain_num(c), Ok(2));
    // A member is owned by its head: freeing it alone is refused.
    let watch = soft::MisuseWatch::start();
    assert_eq!(free_buf(c), ACL_ERROR_RT_PARAM_INVALID);
    assert!(watch.seen().iter().any(|m| m.api == "aclrtFreeBuf"));
    assert_eq!(soft::live_since(since).len(), 4);
    assert_eq!(free_buf(a), ACL_SUCCESS);
    assert!(soft::live_since(since).is_empty(), "freeing the head frees the chain");
    assert_eq!(free_buf(d), ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn cycles_and_double_links_are_refused_and_recorded() {
    let _serial = serial();
    let watch = soft::MisuseWatch::start();
    let (a, b, c) = (alloc_buf(4), alloc_buf(4), alloc_buf(4));
    assert_eq!(append(a, a), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(append(a, b), ACL_SUCCESS);
    assert_eq!(append(b, a), ACL_ERROR_RT_PARAM_INVALID, "a -> b -> a");
    assert_eq!(append(a, b), ACL_ERROR_RT_PARAM_INVALID, "b is already in a's chain");
    assert_eq!(append(c, b), ACL_ERROR_RT_PARAM_INVALID, "b is already linked");
    let cycles = watch.seen().iter().filter(|m| m.api == "aclrtAppendBufChain").count();
    assert_eq!(cycles, 4);
    assert_eq!(chain_num(a), Ok(2), "refused appends change nothing");
    assert_eq!(chain_num(c), Ok(1));
    assert_eq!(append(b, c), ACL_SUCCESS, "appending through a member reaches the end");
    assert_eq!(chain_num(a), Ok(3));
    assert_eq!(free_buf(a), ACL_SUCCESS);
}

#[test]
fn live_counts_and_the_leak_report_show_mbufs() {
    let _serial = serial();
    let buf = alloc_buf(4096);
    let copy = copy_buf_ref(buf);
    let live = soft::live();
    assert!(live.mbufs >= 2);
    assert!(live.mbuf_bytes >= 4096);
    let report = soft::leak_report();
    assert!(report.contains(&format!("mbuf {:#x}", buf as usize)), "{report}");
    assert!(report.contains(&format!("mbuf {:#x}", copy as usize)), "{report}");
    assert!(report.contains("4096 bytes (2 reference(s))"), "{report}");
    assert_eq!(free_buf(buf), ACL_SUCCESS);
    assert_eq!(free_buf(copy), ACL_SUCCESS);
    let report = soft::leak_report();
    assert!(!report.contains(&format!("mbuf {:#x}", buf as usize)), "{report}");
}
