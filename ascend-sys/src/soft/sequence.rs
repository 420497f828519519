//! Creation order: one process-wide counter that numbers every resource the
//! software device creates and every misuse it records, so that a test can
//! ask what appeared after a given moment ([`super::live_since`],
//! [`super::MisuseWatch`]).
//!
//! Part of the core: the families call [`next`] when they create a
//! resource; it takes no lock.

use std::sync::atomic::{AtomicU64, Ordering};

/// The number the next resource or misuse gets. Starts at 1, so that 0
/// means "before anything".
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A fresh sequence number (never reused in the process).
pub(crate) fn next() -> u64 {
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// The sequence number the next resource created (or misuse recorded) will
/// get: everything made from now on has a number at least this one, and
/// everything live now has a smaller one.
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// let start = soft::sequence_now();
/// let mut ptr = std::ptr::null_mut();
/// unsafe {
///     assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
///     assert_eq!(aclrtMalloc(&mut ptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
///     let made = soft::live_since(start);
///     assert!(made.iter().any(|r| r.id == ptr as u64 && r.created >= start));
///     assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
///     assert!(!soft::live_since(start).iter().any(|r| r.id == ptr as u64));
///     assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
/// }
/// ```
pub fn sequence_now() -> u64 {
    NEXT.load(Ordering::SeqCst)
}
