//! The ascend-rs software fabric as a drop-in C library: `libmf_smem.so`.
//!
//! Every MemFabric function that `memfabric-sys` binds (ABI 1.3: the common
//! `smem_*` calls, BM and TRANS) is exported here under its C name with its
//! C signature, and always runs on the software fabric
//! ([`memfabric_sys::soft::direct`]): the library never searches for, nor
//! loads, MemFabric. C programs written for MemFabric's BM API compile
//! against MemFabric's own headers (those of the `memfabric-hybrid`
//! package, `include/smem/host/`), link this library with `-lmf_smem`, and
//! run on one machine without an NPU: ranks are processes, the config
//! store a loopback TCP server, HBM comes from the software device of
//! `ascend-sys` and DRAM from shared memory (see `memfabric-sys`'s
//! `soft` module for what is emulated and how).
//!
//! - A panic inside the software fabric never unwinds into C: the call
//!   returns the function's failure value (`SMEM_ERROR`, NULL,
//!   `UINT32_MAX`, 0) and says so on stderr.
//! - The library exports [`memfabric_rs_software_fabric`], named by
//!   [`memfabric_sys::SOFTWARE_LIBRARY_MARKER`]: the `memfabric-sys` loader
//!   refuses a library that exports it, so a Rust program that finds this
//!   library runs its own in-process software fabric instead of going
//!   through it.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_snake_case, clippy::too_many_arguments)]

use memfabric_sys::*;
use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The marker that says "this is ascend-rs's software-fabric library",
/// under the name [`memfabric_sys::SOFTWARE_LIBRARY_MARKER`]. Its value
/// means nothing; only its presence is looked for.
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static memfabric_rs_software_fabric: u8 = 1;

// Its name is the loader's constant: tests/exports.rs looks it up by that
// constant.

/// What a call returns when the software fabric panicked inside it: the
/// function's own failure value.
trait PanicValue {
    fn after_panic() -> Self;
}

impl PanicValue for i32 {
    fn after_panic() -> Self {
        SMEM_ERROR
    }
}

impl PanicValue for u32 {
    fn after_panic() -> Self {
        u32::MAX
    }
}

impl PanicValue for u64 {
    fn after_panic() -> Self {
        0
    }
}

impl PanicValue for *mut c_void {
    fn after_panic() -> Self {
        std::ptr::null_mut()
    }
}

impl PanicValue for *const c_char {
    fn after_panic() -> Self {
        std::ptr::null()
    }
}

impl PanicValue for () {
    fn after_panic() -> Self {}
}

/// Runs `call`; a panic becomes the failure value and a line on stderr.
fn guarded<R: PanicValue>(api: &str, call: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(value) => value,
        Err(_) => {
            let _ = writeln!(
                std::io::stderr(),
                "memfabric-soft-smem: {api}: the software fabric panicked; returning its failure value"
            );
            R::after_panic()
        }
    }
}

/// Exports one C function per entry of the list.
macro_rules! exports {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        $(
        $(#[$meta])*
        ///
        /// Exported under its C name; runs on the software fabric.
        ///
        /// # Safety
        ///
        /// MemFabric's contract for this call: every pointer valid for the
        /// reads and writes the call performs, strings NUL-terminated,
        /// handles live.
        #[unsafe(no_mangle)]
        #[allow(clippy::unused_unit)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            // SAFETY: the caller upholds the C contract, which is the
            // direct entry point's own.
            guarded(stringify!($name), || unsafe { memfabric_sys::soft::direct::$name($($arg),*) })
        }
        )*
    };
}

memfabric_sys::for_each_smem_function!(exports);
