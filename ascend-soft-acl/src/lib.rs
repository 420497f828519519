//! The ascend-rs software device as a drop-in `libascendcl.so`: every
//! AscendCL function `ascend-sys` binds, exported under its C name with its
//! C signature, always on the software device (it never looks for, nor
//! loads, a real runtime — nor itself).
//!
//! Install a CANN-shaped tree with `ascend-soft-acl/install.sh PREFIX`
//! (`include/acl/acl.h`, `lib64/libascendcl.so`, `lib64/libacl_rt.so`,
//! `set_env.sh`), then build C and C++ programs against it unchanged; see
//! `docs/c-and-cpp.md`. With `ASCEND_SOFT_REPORT=1`, `aclFinalize` prints
//! the software device's leak and misuse report to standard error.
#![deny(unsafe_op_in_unsafe_fn)]

use ascend_sys::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

/// Tells `ascend-sys`'s loader what this library is, so that a Rust
/// program whose search finds it refuses it rather than run a second
/// software device behind its own.
#[unsafe(no_mangle)]
#[used]
pub static ascend_rs_software_device: u8 = 1;

/// The environment variable that makes `aclFinalize` print the report.
const ENV_REPORT: &str = "ASCEND_SOFT_REPORT";

/// What an export returns when the library itself fails (a panic, which
/// must not unwind into C).
trait OnPanic {
    fn on_panic() -> Self;
}

impl OnPanic for aclError {
    fn on_panic() -> Self {
        ACL_ERROR_RT_INTERNAL_ERROR
    }
}

impl OnPanic for *const core::ffi::c_char {
    fn on_panic() -> Self {
        std::ptr::null()
    }
}

impl OnPanic for *mut core::ffi::c_void {
    fn on_panic() -> Self {
        std::ptr::null_mut()
    }
}

/// Selects the software device once, before the first call of any export.
fn software() {
    static SELECT: Once = Once::new();
    SELECT.call_once(|| {
        if let Err(error) = select_backend(BackendRequest::Software) {
            eprintln!("libascendcl (ascend-rs software device): {error}");
        }
    });
}

/// Runs an export's body; a panic becomes the function's failure value.
fn guard<R: OnPanic>(api: &str, body: impl FnOnce() -> R) -> R {
    software();
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        eprintln!("libascendcl (ascend-rs software device): {api} panicked; returning its failure value");
        R::on_panic()
    })
}

/// Prints the leak and misuse report when [`ENV_REPORT`] is set (to
/// anything but `0` or empty).
fn report_if_asked() {
    match std::env::var(ENV_REPORT) {
        Ok(value) if !value.is_empty() && value != "0" => {
            let leaks = soft::leak_report();
            let misuse = soft::misuse();
            eprintln!("ascend-rs software device report at aclFinalize:");
            if leaks.is_empty() {
                eprintln!("  leaks: none");
            } else {
                eprintln!("  leaks (resources still live):");
                leaks.lines().for_each(|line| eprintln!("    {line}"));
            }
            if misuse.is_empty() {
                eprintln!("  misuse: none");
            } else {
                eprintln!("  misuse:");
                for entry in misuse {
                    eprintln!("    {}: {}", entry.api, entry.description);
                }
            }
        }
        _ => {}
    }
}

/// Exports each function of the list as `extern "C"` under its C name.
macro_rules! export_all {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {$(
        $(#[$meta])*
        ///
        /// # Safety
        ///
        /// The C function's contract (see the AscendCL reference).
        #[unsafe(no_mangle)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            guard(stringify!($name), || {
                // SAFETY: the caller upholds the C function's contract,
                // which the software device's implementation has too.
                let result = unsafe { ascend_sys::$name($($arg),*) };
                if stringify!($name) == "aclFinalize" {
                    report_if_asked();
                }
                result
            })
        }
    )*};
}

ascend_sys::for_each_acl_function!(export_all);
