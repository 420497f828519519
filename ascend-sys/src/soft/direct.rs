//! The software device's implementation of every bound function, under its
//! C name, called directly: no backend selection, no library search.
//!
//! The crate-root functions route here when the software device is the
//! active backend. Calling these instead always uses the software device,
//! whatever `ASCEND_BACKEND` says and whether or not a `libascendcl.so` is
//! installed; this is what the drop-in C library `ascend-soft-acl` exports.
//! Injected faults ([`inject_fault`](crate::soft::inject_fault)) apply here
//! too.
//!
//! ```
//! use ascend_sys::*;
//! let mut count = 0u32;
//! // SAFETY: `count` is a valid out-pointer for the duration of the call.
//! assert_eq!(unsafe { soft::direct::aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
//! assert!(count >= 1);
//! ```
#![allow(non_snake_case, clippy::too_many_arguments)]

use crate::types::*;

/// Generates one direct entry point per function of the list.
macro_rules! direct_functions {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        $(
        $(#[$meta])*
        ///
        /// Always on the software device (see the [module](self) docs).
        ///
        /// # Safety
        ///
        /// This is the C function under its C name: every pointer argument
        /// must satisfy the AscendCL contract for this call (valid for the
        /// reads and writes the call performs, for as long as it performs
        /// them).
        #[inline]
        pub unsafe fn $name($($arg: $ty),*) -> $ret {
            if let Some(fault) = crate::soft::take_fault(stringify!($name)) {
                return crate::soft::injected_fault(stringify!($name), fault);
            }
            // SAFETY: the software device implements this function with the
            // same contract; the caller upholds it.
            unsafe { crate::soft::entry::$name($($arg),*) }
        }
        )*
    };
}

crate::for_each_acl_function!(direct_functions);
