//! Expands the signature list in `api.rs` into the C-named functions at the
//! crate root and routes each call to the active backend.

use crate::types::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_NO_DEVICE, aclError};
use core::ffi::{c_char, c_void};

/// What a function returns when it cannot run at all.
///
/// Functions returning `aclError` return a code; the few returning a pointer
/// (`aclGetRecentErrMsg`, `aclrtGetSocName`, `aclrtAllocatorCreateDesc`)
/// return NULL, which is their documented failure value.
pub(crate) trait FailureValue: Sized {
    /// The value for a symbol the loaded library does not export.
    fn feature_not_supported() -> Self;
    /// The value when no backend is available (hardware requested, no library).
    fn no_backend() -> Self;
    /// For `aclGetRecentErrMsg` only: the message this crate itself recorded
    /// on this thread (a missing symbol), which takes precedence over the
    /// library's own.
    fn pending_message() -> Option<Self> {
        None
    }
    /// The value for an injected fault with `code` (NULL for pointers).
    fn injected(code: aclError) -> Self;
}

impl FailureValue for aclError {
    fn feature_not_supported() -> Self {
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    }
    fn no_backend() -> Self {
        ACL_ERROR_RT_NO_DEVICE
    }
    fn injected(code: aclError) -> Self {
        code
    }
}

impl FailureValue for *const c_char {
    fn feature_not_supported() -> Self {
        core::ptr::null()
    }
    fn no_backend() -> Self {
        core::ptr::null()
    }
    fn injected(_: aclError) -> Self {
        core::ptr::null()
    }
    fn pending_message() -> Option<Self> {
        crate::error_msg::pending_ptr()
    }
}

impl FailureValue for *mut c_void {
    fn feature_not_supported() -> Self {
        core::ptr::null_mut()
    }
    fn no_backend() -> Self {
        core::ptr::null_mut()
    }
    fn injected(_: aclError) -> Self {
        core::ptr::null_mut()
    }
}

/// The result of calling `api` when the loaded library lacks its symbol.
#[cold]
pub(crate) fn missing_symbol<R: FailureValue>(api: &'static str) -> R {
    crate::error_msg::set(format!(
        "{api}: the loaded AscendCL library does not export the symbol `{api}` \
         (this CANN version or driver does not support it)"
    ));
    crate::error_msg::set_missing_symbol(api);
    R::feature_not_supported()
}

/// The result of calling `api` when no backend could be selected.
#[cold]
pub(crate) fn no_backend<R: FailureValue>(api: &'static str, why: &str) -> R {
    crate::error_msg::set(format!("{api}: no AscendCL backend is available: {why}"));
    R::no_backend()
}

/// The result of a call failed by an injected fault (software device).
#[cold]
pub(crate) fn injected_fault<R: FailureValue>(api: &'static str, fault: crate::soft::Fault) -> R {
    match fault {
        crate::soft::Fault::Code(code) => {
            crate::error_msg::set(format!("{api}: injected fault (error {code})"));
            R::injected(code)
        }
        crate::soft::Fault::MissingSymbol => missing_symbol(api),
    }
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
        /// The C name of every bound function, in the order of the
        /// reference (for example, to sweep fault injection over them).
        pub const FUNCTION_NAMES: &[&str] = &[$(stringify!($name)),*];
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
                            <$ret as crate::dispatch::FailureValue>::pending_message()
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
                        None => crate::dispatch::missing_symbol(stringify!($name)),
                    }
                }
                crate::backend::Route::Unavailable(why) => {
                    if stringify!($name) == "aclGetRecentErrMsg" {
                        if crate::error_msg::pending_ptr().is_none() {
                            crate::error_msg::set(format!("no AscendCL backend is available: {why}"));
                        }
                        if let Some(message) =
                            <$ret as crate::dispatch::FailureValue>::pending_message()
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
