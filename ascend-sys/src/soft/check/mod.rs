//! The checks the families report into, above the core and below the
//! families: fault injection ([`fault_injection`]), the misuse list ([`misuse_log`]) and
//! the sanitizer's state with its raw-byte hooks ([`sanitize`]). Nothing
//! here names a family.

pub(super) mod fault_injection;
pub(super) mod misuse_log;
pub(super) mod sanitize;
