//! The software fabric's C entry points, one per bound function under its C
//! name and signature; the crate-root functions route here when the
//! software backend is active. Each reads its arguments, calls the layers
//! below, and turns a failure into the C result and the thread's last
//! error.
#![allow(non_snake_case, clippy::too_many_arguments)]

mod bm;
mod common;
mod unsupported;

pub(crate) use bm::*;
pub(crate) use common::*;
pub(crate) use unsupported::*;

use crate::soft::core::last_error;
use crate::soft::core::result::{SoftResult, fail};
use crate::types::{SMEM_INVALID_PARAM, SMEM_OK, c_char};
use std::ffi::CStr;

/// The C code of `result`, recording a failure as the last error of `api`.
fn finish(api: &'static str, result: SoftResult) -> i32 {
    match result {
        Ok(()) => SMEM_OK,
        Err(error) => {
            last_error::record(api, &error);
            error.code
        }
    }
}

/// `value`, or `failed` after recording the error of `api`.
fn finish_or<T>(api: &'static str, result: SoftResult<T>, failed: T) -> T {
    result.unwrap_or_else(|error| {
        last_error::record(api, &error);
        failed
    })
}

/// The text of a C string argument.
///
/// # Safety
///
/// `text` is NULL or a NUL-terminated string.
unsafe fn text<'a>(text: *const c_char, name: &str) -> SoftResult<&'a str> {
    if text.is_null() {
        return fail(SMEM_INVALID_PARAM, format!("{name} is NULL"));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    match unsafe { CStr::from_ptr(text) }.to_str() {
        Ok(text) => Ok(text),
        Err(_) => fail(SMEM_INVALID_PARAM, format!("{name} is not UTF-8")),
    }
}
