//! The checks the families report into, above the core and below the
//! families: fault injection ([`faults`]), the misuse list ([`misuse`]) and
//! the sanitizer's state with its raw-byte hooks ([`sanitize`]). Nothing
//! here names a family.

pub(super) mod fault_injection;
pub(super) mod misuse_log;
pub(super) mod sanitize;
