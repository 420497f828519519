//! Entry points of 3.13 Mbuf (message buffers): the ACL layer's checks of
//! hicann/runtime `src/acl/aclrt_impl/memory.cpp` (NULL pointers, a zero
//! size, `size + offset` above 96 for the user data: all
//! `ACL_ERROR_INVALID_PARAM`), then the buffer state (`soft::mbuf`). No
//! context is needed.
#![allow(non_snake_case)]

use super::*;
use crate::soft::mbuf::{self, USER_DATA_SIZE};

pub(crate) unsafe fn aclrtAllocBuf(buf: *mut aclrtMbuf, size: usize) -> aclError {
    let outcome = non_null(buf, "buf").and_then(|()| {
        if size == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0 (must be positive)");
        }
        let handle = mbuf::alloc(size)?;
        // SAFETY: `buf` was checked non-NULL; the caller passes a writable slot.
        unsafe { put(buf, handle as aclrtMbuf) };
        Ok(())
    });
    finish("aclrtAllocBuf", outcome)
}

pub(crate) unsafe fn aclrtFreeBuf(buf: aclrtMbuf) -> aclError {
    finish(
        "aclrtFreeBuf",
        non_null(buf, "buf").and_then(|()| mbuf::free(buf as usize)),
    )
}

pub(crate) unsafe fn aclrtGetBufData(buf: aclrtMbuf, dataPtr: *mut *mut c_void, size: *mut usize) -> aclError {
    let outcome = non_null(buf, "buf")
        .and(non_null(dataPtr, "dataPtr"))
        .and(non_null(size, "size"))
        .and_then(|()| {
            let (address, capacity) = mbuf::data(buf as usize)?;
            // SAFETY: both out-pointers were checked non-NULL.
            unsafe {
                put(dataPtr, address as *mut c_void);
                put(size, capacity);
            }
            Ok(())
        });
    finish("aclrtGetBufData", outcome)
}

pub(crate) unsafe fn aclrtGetBufDataLen(buf: aclrtMbuf, len: *mut usize) -> aclError {
    let outcome = non_null(buf, "buf").and(non_null(len, "len")).and_then(|()| {
        let value = mbuf::data_len(buf as usize)?;
        // SAFETY: `len` was checked non-NULL.
        unsafe { put(len, value) };
        Ok(())
    });
    finish("aclrtGetBufDataLen", outcome)
}

pub(crate) unsafe fn aclrtSetBufDataLen(buf: aclrtMbuf, len: usize) -> aclError {
    finish(
        "aclrtSetBufDataLen",
        non_null(buf, "buf").and_then(|()| mbuf::set_data_len(buf as usize, len)),
    )
}

/// The user-data calls' first check, before the NULL checks as in the
/// runtime: `size + offset` (wrapping, as the C sum does) at most 96.
fn user_data_range(size: usize, offset: usize) -> SoftResult {
    let end = size.wrapping_add(offset);
    if end > USER_DATA_SIZE {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("the sum of size and offset is greater than {USER_DATA_SIZE}, size={size}, offset={offset}"),
        );
    }
    Ok(())
}

/// After the NULL checks: a wrapped sum passes the range check, but then
/// `size` or `offset` alone is above 96 and the runtime's bounded copy
/// refuses it (`ACL_ERROR_FAILURE`).
fn user_data_parts(size: usize, offset: usize) -> SoftResult {
    if size > USER_DATA_SIZE || offset > USER_DATA_SIZE {
        return fail(
            ACL_ERROR_FAILURE,
            format!("the bounded copy of the user data refused size={size}, offset={offset}"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtGetBufUserData(buf: aclrtMbuf, dataPtr: *mut c_void, size: usize, offset: usize) -> aclError {
    let outcome = user_data_range(size, offset)
        .and(non_null(buf, "buf"))
        .and(non_null(dataPtr, "dataPtr"))
        .and_then(|()| user_data_parts(size, offset))
        .and_then(|()| {
            let mut bytes = [0u8; USER_DATA_SIZE];
            let out = &mut bytes[..size];
            mbuf::get_user_data(buf as usize, out, offset)?;
            // SAFETY: `dataPtr` is non-NULL and, as the runtime requires,
            // valid for `size` bytes (`out.len() == size` after the range check).
            unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), dataPtr.cast::<u8>(), out.len()) };
            Ok(())
        });
    finish("aclrtGetBufUserData", outcome)
}

pub(crate) unsafe fn aclrtSetBufUserData(
    buf: aclrtMbuf,
    dataPtr: *const c_void,
    size: usize,
    offset: usize,
) -> aclError {
    let outcome = user_data_range(size, offset)
        .and(non_null(buf, "buf"))
        .and(non_null(dataPtr, "dataPtr"))
        .and_then(|()| user_data_parts(size, offset))
        .and_then(|()| {
            // SAFETY: `dataPtr` is non-NULL and, as the runtime requires,
            // valid for reads of `size` (at most 96) bytes.
            let bytes = unsafe { std::slice::from_raw_parts(dataPtr.cast::<u8>(), size) };
            mbuf::set_user_data(buf as usize, bytes, offset)
        });
    finish("aclrtSetBufUserData", outcome)
}

pub(crate) unsafe fn aclrtCopyBufRef(buf: aclrtMbuf, newBuf: *mut aclrtMbuf) -> aclError {
    let outcome = non_null(buf, "buf").and(non_null(newBuf, "newBuf")).and_then(|()| {
        let handle = mbuf::copy_ref(buf as usize)?;
        // SAFETY: `newBuf` was checked non-NULL.
        unsafe { put(newBuf, handle as aclrtMbuf) };
        Ok(())
    });
    finish("aclrtCopyBufRef", outcome)
}

pub(crate) unsafe fn aclrtAppendBufChain(headBuf: aclrtMbuf, buf: aclrtMbuf) -> aclError {
    finish(
        "aclrtAppendBufChain",
        non_null(headBuf, "headBuf")
            .and(non_null(buf, "buf"))
            .and_then(|()| mbuf::append(headBuf as usize, buf as usize)),
    )
}

pub(crate) unsafe fn aclrtGetBufChainNum(headBuf: aclrtMbuf, num: *mut u32) -> aclError {
    let outcome = non_null(headBuf, "headBuf").and(non_null(num, "num")).and_then(|()| {
        let count = mbuf::chain_num(headBuf as usize)?;
        // SAFETY: `num` was checked non-NULL.
        unsafe { put(num, count) };
        Ok(())
    });
    finish("aclrtGetBufChainNum", outcome)
}

pub(crate) unsafe fn aclrtGetBufFromChain(headBuf: aclrtMbuf, index: u32, buf: *mut aclrtMbuf) -> aclError {
    let outcome = non_null(headBuf, "headBuf").and(non_null(buf, "buf")).and_then(|()| {
        let member = mbuf::chain_get(headBuf as usize, index)?;
        // SAFETY: `buf` was checked non-NULL.
        unsafe { put(buf, member as aclrtMbuf) };
        Ok(())
    });
    finish("aclrtGetBufFromChain", outcome)
}
