//! The table of the C names of every bound function, [`FUNCTION_NAMES`].

/// Expands the list into the table (names only).
macro_rules! function_names {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        /// The C name of every bound function: the common `smem_*` calls, then
        /// BM, then TRANS (for example, to build a table of what is bound).
        ///
        /// ```
        /// assert!(memfabric_sys::FUNCTION_NAMES.contains(&"smem_bm_create2"));
        /// ```
        pub const FUNCTION_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

crate::for_each_smem_function!(function_names);
