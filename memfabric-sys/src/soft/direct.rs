//! The software fabric's implementation of every bound function, under its
//! C name, called directly: no backend selection, no library search.
//!
//! The crate-root functions route here when the software backend is
//! active. Calling these instead always uses the software fabric, whatever
//! `MEMFABRIC_BACKEND` says and whether or not a `libmf_smem.so` is
//! installed; this is what the drop-in C library `memfabric-soft-smem`
//! exports. Injected faults ([`inject_fault`](crate::soft::inject_fault))
//! apply here too.
//!
//! ```
//! use memfabric_sys::*;
//! // SAFETY: no arguments.
//! assert_eq!(unsafe { soft::direct::smem_get_abi_version() }, SMEM_ABI_VERSION_SUPPORTED);
//! // SAFETY: `flags` is 0.
//! assert_eq!(unsafe { soft::direct::smem_init(0) }, SMEM_OK);
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
        /// Always on the software fabric (see the [module](self) docs).
        ///
        /// # Safety
        ///
        /// This is the C function under its C name: every pointer argument
        /// must satisfy MemFabric's contract for this call (valid for the
        /// reads and writes the call performs, for as long as it performs
        /// them; strings NUL-terminated; handles live).
        #[allow(clippy::unused_unit)]
        #[inline]
        pub unsafe fn $name($($arg: $ty),*) -> $ret {
            crate::error_msg::clear();
            if let Some(value) = crate::soft::faults::injected::<$ret>(stringify!($name)) {
                return value;
            }
            // SAFETY: the software fabric implements this function with
            // the same C contract; the caller upholds it.
            unsafe { crate::soft::entry::$name($($arg),*) }
        }
        )*
    };
}

crate::for_each_smem_function!(direct_functions);
