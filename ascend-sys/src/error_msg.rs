//! The per-thread "most recent error" text behind `aclGetRecentErrMsg`.
//!
//! The software device records every failure here, and so does the loader
//! (a missing symbol, no backend). The returned pointer stays valid until the
//! next AscendCL call on the same thread that records or clears a message.

use core::cell::RefCell;
use core::ffi::c_char;
use std::ffi::CString;

thread_local! {
    static RECENT: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records `message` as this thread's most recent error.
pub(crate) fn set(message: String) {
    log::debug!("{message}");
    // An interior NUL cannot come from our own messages; strip it anyway
    // rather than lose the message.
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; nothing to keep.
    let _ = RECENT.try_with(|slot| *slot.borrow_mut() = Some(text));
}

/// Forgets this thread's recorded message.
pub(crate) fn clear() {
    let _ = RECENT.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = None;
        }
    });
}

/// This thread's recorded message, as the C string `aclGetRecentErrMsg`
/// returns, or `None` when there is none.
pub(crate) fn pending_ptr() -> Option<*const c_char> {
    RECENT
        .try_with(|slot| slot.borrow().as_ref().map(|text| text.as_ptr()))
        .ok()
        .flatten()
}

/// A copy of this thread's recorded message (for the software device's
/// introspection and for tests).
pub(crate) fn pending_text() -> Option<String> {
    RECENT
        .try_with(|slot| slot.borrow().as_ref().map(|text| text.to_string_lossy().into_owned()))
        .ok()
        .flatten()
}
