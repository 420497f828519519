//! Expands the signature list in `api.rs` into the C-named functions at the
//! crate root and routes each call to the active backend.
//!
//! This is the top layer: it uses the software device, the loader and the
//! failure values below it, and nothing below uses it (see the layering in
//! `lib.rs`).

use crate::failure_value::FailureValue;

/// The result of calling `api` when no backend could be selected.
#[cold]
pub(crate) fn no_backend<R: FailureValue>(api: &'static str, why: &str) -> R {
    crate::error_msg::set(format!("{api}: no AscendCL backend is available: {why}"));
    R::no_backend()
}

/// Declares the bound functions. For each entry it generates:
///
/// - `pub unsafe fn NAME(args) -> ret` at the crate root, which routes the
///   call to the software device or to the lazily resolved library symbol;
/// - a compile-time check that the signature is exactly the one bindgen
///   generated from the C header (a never-instantiated generic function
///   coerces the declaration to the listed function-pointer type, so a
///   wrong type fails to compile and nothing is linked).
macro_rules! acl_functions {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        $(
        $(#[$meta])*
        ///
        /// # Safety
        ///
        /// This is the C function under its C name: every pointer argument
        /// must satisfy the AscendCL contract for this call (valid for the
        /// reads and writes the call performs, for as long as it performs
        /// them). See `docs/` and the AscendCL reference.
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #[inline]
        pub unsafe fn $name($($arg: $ty),*) -> $ret {
            const _: () = {
                #[allow(dead_code, clippy::extra_unused_type_parameters)]
                fn signature_matches_header<T>() {
                    let _: unsafe extern "C" fn($($ty),*) -> $ret =
                        crate::bindings::c_functions::$name;
                }
            };
            match crate::backend::route() {
                crate::backend::Route::Software => {
                    // SAFETY: the software device implements this function
                    // with the same contract; the caller upholds it.
                    unsafe { crate::soft::direct::$name($($arg),*) }
                }
                crate::backend::Route::Hardware(library) => {
                    static SYMBOL: crate::loader::LazySymbol<unsafe extern "C" fn($($ty),*) -> $ret> =
                        crate::loader::LazySymbol::new(concat!(stringify!($name), "\0"));
                    if stringify!($name) == "aclGetRecentErrMsg" {
                        if let Some(message) =
                            <$ret as crate::failure_value::FailureValue>::pending_message()
                        {
                            return message;
                        }
                    }
                    match SYMBOL.get(library) {
                        Some(function) => {
                            crate::error_msg::clear();
                            // SAFETY: the symbol comes from the loaded
                            // AscendCL library and has this C signature
                            // (checked against the header above); the caller
                            // upholds the call's contract.
                            unsafe { function($($arg),*) }
                        }
                        None => crate::failure_value::missing_symbol(stringify!($name)),
                    }
                }
                crate::backend::Route::Unavailable(why) => {
                    if stringify!($name) == "aclGetRecentErrMsg" {
                        if crate::error_msg::pending_ptr().is_none() {
                            crate::error_msg::set(format!("no AscendCL backend is available: {why}"));
                        }
                        if let Some(message) =
                            <$ret as crate::failure_value::FailureValue>::pending_message()
                        {
                            return message;
                        }
                    }
                    crate::dispatch::no_backend(stringify!($name), why)
                }
            }
        }
    )*
    };
}
pub(crate) use acl_functions;
