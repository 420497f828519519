//! The per-thread "most recent error" text behind `aclGetRecentErrMsg`.
//!
//! The software device records every failure here, and so does the loader
//! (a missing symbol, no backend). The returned pointer stays valid until the
//! next AscendCL call on the same thread that records or clears a message.

use core::cell::{Cell, RefCell};
use core::ffi::c_char;
use std::ffi::CString;

thread_local! {
    static RECENT: RefCell<Option<CString>> = const { RefCell::new(None) };
    static MISSING: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Records that the most recent call on this thread failed because the
/// loaded library lacks `symbol` (after [`set`], which clears it).
pub(crate) fn set_missing_symbol(symbol: &'static str) {
    let _ = MISSING.try_with(|slot| slot.set(Some(symbol)));
}

/// The symbol whose absence made the most recent AscendCL call on this
/// thread return `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, if that is why it
/// failed.
///
/// The safe crate uses this to turn that code into a typed "unsupported"
/// error naming the function. Any later call on the thread clears it.
pub fn missing_symbol() -> Option<&'static str> {
    MISSING.try_with(Cell::get).ok().flatten()
}

/// Records `message` as this thread's most recent error.
pub(crate) fn set(message: String) {
    log::debug!("{message}");
    // An interior NUL cannot come from our own messages; strip it anyway
    // rather than lose the message.
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; nothing to keep.
    let _ = RECENT.try_with(|slot| *slot.borrow_mut() = Some(text));
    let _ = MISSING.try_with(|slot| slot.set(None));
}

/// Forgets that this thread's most recent call lacked its symbol (a call
/// that goes on to do its work).
pub(crate) fn forget_missing_symbol() {
    let _ = MISSING.try_with(|slot| slot.set(None));
}

/// Forgets this thread's recorded message.
pub(crate) fn clear() {
    let _ = MISSING.try_with(|slot| slot.set(None));
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
