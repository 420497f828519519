//! The C types, constants and structs of the bound API, under their C names.
//!
//! Everything here comes from the generated `bindings` module; the C scalar
//! types it uses are re-exported beside them.

pub use crate::bindings::c_types::*;
pub use core::ffi::{c_char, c_int, c_uint, c_void};
