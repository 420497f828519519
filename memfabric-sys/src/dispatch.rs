//! Expands the signature list in `api.rs` into the C-named functions at the
//! crate root and routes each call to the loaded library.

use crate::types::*;

/// What a bound function returns when it fails without reaching the library.
pub(crate) trait FailureValue: Sized {
    /// The value for a failure with `code` (this crate's
    /// `MEMFABRIC_SYS_NOT_SUPPORTED` or `MEMFABRIC_SYS_NO_BACKEND`).
    fn failure(code: i32) -> Self;
}

impl FailureValue for i32 {
    fn failure(code: i32) -> Self {
        code
    }
}

/// `UINT32_MAX`: the library's own failure value of its `uint32_t` returns
/// (rank ids); `smem_get_abi_version` returns it too, which no release is.
impl FailureValue for u32 {
    fn failure(_: i32) -> Self {
        u32::MAX
    }
}

/// 0 bytes.
impl FailureValue for u64 {
    fn failure(_: i32) -> Self {
        0
    }
}

impl FailureValue for *mut c_void {
    fn failure(_: i32) -> Self {
        core::ptr::null_mut()
    }
}

impl FailureValue for *const c_char {
    fn failure(_: i32) -> Self {
        core::ptr::null()
    }
}

impl FailureValue for () {
    fn failure(_: i32) -> Self {}
}

/// The result of calling `api` when the loaded library lacks its symbol.
#[cold]
pub(crate) fn missing_symbol<R: FailureValue>(api: &'static str) -> R {
    crate::error_msg::set(
        format!(
            "{api}: the loaded MemFabric library does not export the symbol `{api}` (this MemFabric version \
             does not support it)"
        ),
        MEMFABRIC_SYS_NOT_SUPPORTED,
    );
    crate::error_msg::set_missing_symbol(api);
    R::failure(MEMFABRIC_SYS_NOT_SUPPORTED)
}

/// The result of calling `api` when no library is loaded.
#[cold]
pub(crate) fn no_backend<R: FailureValue>(api: &'static str, why: &str) -> R {
    crate::error_msg::set(
        format!("{api}: no MemFabric library is available: {why}"),
        MEMFABRIC_SYS_NO_BACKEND,
    );
    R::failure(MEMFABRIC_SYS_NO_BACKEND)
}

/// What the three error queries return when this crate has an error of its
/// own pending on this thread; `None` for every other function, and when
/// nothing is pending.
pub(crate) trait PendingError: Sized {
    fn pending(_api: &'static str) -> Option<Self> {
        None
    }
}

impl PendingError for i32 {
    fn pending(api: &'static str) -> Option<Self> {
        (api == "smem_get_last_err_code")
            .then(crate::error_msg::pending_code)
            .flatten()
    }
}

impl PendingError for *const c_char {
    fn pending(api: &'static str) -> Option<Self> {
        match api {
            "smem_get_last_err_msg" => crate::error_msg::pending_ptr(false),
            "smem_get_and_clear_last_err_msg" => crate::error_msg::pending_ptr(true),
            _ => None,
        }
    }
}

impl PendingError for u32 {}
impl PendingError for u64 {}
impl PendingError for *mut c_void {}
impl PendingError for () {}

/// Declares the bound functions: for each entry, `pub unsafe fn NAME(args)
/// -> ret` at the crate root, which calls the lazily resolved symbol of the
/// loaded library, or returns the failure value with this crate's message
/// when the symbol is missing or no library is loaded.
macro_rules! smem_functions {
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
        /// must satisfy MemFabric's contract for this call (valid for the
        /// reads and writes the call performs, for as long as it performs
        /// them; strings NUL-terminated; handles live).
        #[allow(non_snake_case, clippy::too_many_arguments, clippy::unused_unit)]
        #[inline]
        pub unsafe fn $name($($arg: $ty),*) -> $ret {
            if let Some(value) = <$ret as crate::dispatch::PendingError>::pending(stringify!($name)) {
                return value;
            }
            match crate::backend::route() {
                Ok(crate::backend::Route::Software) => {
                    crate::error_msg::clear();
                    if let Some(value) = crate::soft::faults::injected::<$ret>(stringify!($name)) {
                        return value;
                    }
                    // SAFETY: the software fabric implements this function
                    // with the same C contract; the caller upholds it.
                    unsafe { crate::soft::entry::$name($($arg),*) }
                }
                Ok(crate::backend::Route::Library(library)) => {
                    static SYMBOL: crate::loader::LazySymbol<unsafe extern "C" fn($($ty),*) -> $ret> =
                        crate::loader::LazySymbol::new(concat!(stringify!($name), "\0"));
                    match SYMBOL.get(library) {
                        Some(function) => {
                            crate::error_msg::clear();
                            // SAFETY: the symbol comes from the loaded
                            // MemFabric library, whose ABI version is 1.3
                            // (checked when it was loaded), and this is its
                            // C signature in ABI 1.3; the caller upholds
                            // the call's contract.
                            unsafe { function($($arg),*) }
                        }
                        None => crate::dispatch::missing_symbol(stringify!($name)),
                    }
                }
                Err(why) => {
                    let value: $ret = crate::dispatch::no_backend(stringify!($name), why);
                    // The error queries report the reason just recorded.
                    <$ret as crate::dispatch::PendingError>::pending(stringify!($name)).unwrap_or(value)
                }
            }
        }
    )*
    };
}
pub(crate) use smem_functions;
