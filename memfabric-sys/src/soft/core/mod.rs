//! The leaf layer of the software fabric: per-thread last error, store URL
//! parsing, the GVA layout arithmetic, memory shared between processes and
//! the results the layers above return. Nothing here calls upward.

pub(crate) mod gva;
pub(crate) mod last_error;
pub(crate) mod result;
pub(crate) mod shared_memory;
pub(crate) mod url;
