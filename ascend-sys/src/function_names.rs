//! The table of the C names of every bound function, [`FUNCTION_NAMES`].
//!
//! It lives here, in a module of its own below both the software device and
//! the routing layer, because both need it: the crate root re-exports it,
//! and the software device's fault injection (`soft::check::fault_injection`) checks the
//! function a fault names against it. Generating it beside the crate-root
//! functions (`dispatch.rs`), as it once was, made `soft/` reach up into the
//! layer that routes calls to it. The table is still generated from the
//! single list of signatures, [`for_each_acl_function!`](crate::for_each_acl_function):
//! invoking that macro is a compile-time expansion of the list, not a use of
//! anything in `api.rs` or `dispatch.rs`.

/// Expands the list into the table (names only; the types are not used).
macro_rules! function_names {
    ($(
        $(#[$meta:meta])*
        fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty;
    )*) => {
        /// The C name of every bound function, in the order of the
        /// reference (for example, to sweep fault injection over them).
        pub const FUNCTION_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

crate::for_each_acl_function!(function_names);
