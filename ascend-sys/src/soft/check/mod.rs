//! The checks the families report into, above the core and below the
//! families: fault injection ([`faults`]), the misuse list ([`misuse`]) and
//! the sanitizer's state with its raw-byte hooks ([`sanitize`]). Nothing
//! here names a family.

pub(super) mod faults;
pub(super) mod misuse;
pub(super) mod sanitize;
