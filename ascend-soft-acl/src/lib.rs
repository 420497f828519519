//! The ascend-rs software device as a drop-in C library: `libascendcl.so`.
//!
//! Every AscendCL function that `ascend-sys` binds is exported here under its
//! C name with its C signature, and always runs on the software device
//! ([`ascend_sys::soft::direct`]): the library never searches for, nor
//! loads, another AscendCL library. C and C++ programs written for CANN's
//! memory API link it with `-lascendcl` and run unchanged, on a machine with
//! no NPU and no CANN toolkit. `install.sh` lays out a CANN-shaped tree
//! (`include/acl/acl.h`, `lib64/libascendcl.so`, `libacl_rt.so`,
//! `set_env.sh`); see `docs/c-and-cpp.md`.
//!
//! - A panic inside the software device never unwinds into C: the call
//!   returns `ACL_ERROR_RT_INTERNAL_ERROR` (NULL for the functions that
//!   return a pointer) and says so on stderr.
//! - With `ASCEND_SOFT_REPORT=1`, `aclFinalize` prints the software
//!   device's leak report (every resource still live) and the misuse it
//!   detected to stderr.
//! - With `ASCEND_SOFT_SANITIZE=race,init,sync` (or `all`), the
//!   stream-hazard sanitizer runs ([`ascend_sys::soft::ENV_SANITIZE`]): each
//!   race, read of unwritten device memory and synchronisation that orders
//!   nothing is printed to stderr as it is found (a line starting
//!   `ascend-rs sanitizer: in <api>: `), and every `aclFinalize` prints a
//!   summary (`ascend-rs sanitizer: summary at aclFinalize: N hazard(s):
//!   ...`). With `ASCEND_SOFT_SANITIZE_EXITCODE=N` (1 to 255) as well,
//!   `aclFinalize` ends the process with exit code `N` when the sanitizer
//!   reported anything ([`ascend_sys::soft::ENV_SANITIZE_EXITCODE`]), after
//!   flushing stdout and stderr; `exit` runs the program's `atexit`
//!   handlers and flushes its C stdio.
//! - The library exports [`ascend_rs_software_device`], named by
//!   [`ascend_sys::SOFTWARE_LIBRARY_MARKER`]: the `ascend-sys` loader refuses
//!   a library that exports it, so a Rust program that finds this library
//!   (through `ASCEND_ACL_LIB` or `LD_LIBRARY_PATH`) runs its own in-process
//!   software device instead of going through it.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_snake_case, clippy::too_many_arguments)]

use ascend_sys::*;
use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The marker that says "this is ascend-rs's software-device library", under
/// the name [`ascend_sys::SOFTWARE_LIBRARY_MARKER`]. Its value means
/// nothing; only its presence is looked for.
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static ascend_rs_software_device: u8 = 1;

// The exported name and the loader's constant are the same text.
const _: () = assert!(same(ascend_sys::SOFTWARE_LIBRARY_MARKER, "ascend_rs_software_device"));

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Environment variable: when set to anything but empty or `0`,
/// `aclFinalize` prints the leak and misuse report to stderr.
pub const ENV_REPORT: &str = "ASCEND_SOFT_REPORT";

/// What a call returns when the software device panicked inside it.
trait PanicValue {
    fn after_panic() -> Self;
}

impl PanicValue for aclError {
    fn after_panic() -> Self {
        ACL_ERROR_RT_INTERNAL_ERROR
    }
}

impl PanicValue for *const c_char {
    fn after_panic() -> Self {
        std::ptr::null()
    }
}

impl PanicValue for *mut c_void {
    fn after_panic() -> Self {
        std::ptr::null_mut()
    }
}

/// Says on stderr that `api` panicked (the panic hook has printed the
/// message already). Never panics itself: a failed write is ignored.
#[cold]
fn report_panic(api: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "libascendcl (ascend-rs software device): {api} panicked; it returns a failure instead of unwinding into C"
    );
}

/// Whether [`ENV_REPORT`] asks for the report.
fn report_requested() -> bool {
    std::env::var_os(ENV_REPORT).is_some_and(|value| !value.is_empty() && value != "0")
}

/// The report `aclFinalize` prints under [`ENV_REPORT`]: every live
/// resource (leaks) and every misuse detected, one per line.
fn finalize_report() -> String {
    let leaks = soft::leak_report();
    let misuse = soft::misuse();
    let mut text = String::from("ascend-rs software device report at aclFinalize\n");
    if leaks.is_empty() {
        text.push_str("leaks: none\n");
    } else {
        text.push_str(&format!("leaks: {} resource(s) still live\n", leaks.lines().count()));
        for line in leaks.lines() {
            text.push_str(&format!("  leak: {line}\n"));
        }
    }
    if misuse.is_empty() {
        text.push_str("misuse: none\n");
    } else {
        text.push_str(&format!("misuse: {} detected\n", misuse.len()));
        for record in &misuse {
            text.push_str(&format!("  misuse in {}: {}\n", record.api, record.description));
        }
    }
    text
}

/// Runs after every `aclFinalize`: the report under [`ENV_REPORT`], then
/// the sanitizer's summary and exit code ([`sanitizer_verdict`]).
fn after_finalize() {
    if report_requested() {
        let _ = std::io::stderr().write_all(finalize_report().as_bytes());
    }
    if let Some(code) = sanitizer_verdict() {
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // `exit` runs the C program's atexit handlers and flushes its stdio.
        std::process::exit(code);
    }
}

/// When the sanitizer is on ([`soft::ENV_SANITIZE`]): prints its summary
/// to stderr, and returns the exit code of [`soft::ENV_SANITIZE_EXITCODE`]
/// when it reported anything (the process must end with it).
fn sanitizer_verdict() -> Option<i32> {
    if soft::sanitizer_checks().is_empty() {
        return None;
    }
    let summary = soft::sanitizer_summary();
    let _ = writeln!(
        std::io::stderr(),
        "ascend-rs sanitizer: summary at aclFinalize: {summary}"
    );
    soft::sanitizer_exit_code().filter(|_| summary.total() > 0)
}

/// Generates one exported C function per function of the list.
macro_rules! export_functions {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        $(
        $(#[$meta])*
        ///
        /// Runs on the software device. A panic inside it returns a failure
        /// (`ACL_ERROR_RT_INTERNAL_ERROR` or NULL) instead of unwinding.
        ///
        /// # Safety
        ///
        /// The AscendCL contract of this C function: every pointer argument
        /// must be valid for the reads and writes the call performs.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: the same function, with the same contract, which
                // the C caller upholds.
                let result = unsafe { soft::direct::$name($($arg),*) };
                if stringify!($name) == "aclFinalize" {
                    after_finalize();
                }
                result
            }));
            match outcome {
                Ok(result) => result,
                Err(_) => {
                    report_panic(stringify!($name));
                    <$ret as PanicValue>::after_panic()
                }
            }
        }
        )*
    };
}

ascend_sys::for_each_acl_function!(export_functions);
