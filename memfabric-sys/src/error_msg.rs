//! This crate's own per-thread error, recorded when a call fails without
//! reaching the library (a missing symbol, no library loaded). While one is
//! pending, `smem_get_last_err_msg`, `smem_get_and_clear_last_err_msg` and
//! `smem_get_last_err_code` report it instead of asking the library; any
//! call that reaches the library forgets it.

use core::cell::{Cell, RefCell};
use core::ffi::c_char;
use std::ffi::CString;

struct Pending {
    text: CString,
    code: i32,
    /// Taken by `smem_get_and_clear_last_err_msg`: no longer reported, but
    /// kept alive so that the pointer it returned stays valid until the next
    /// call on this thread.
    taken: bool,
}

thread_local! {
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
    static MISSING: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Records `message` with `code` as this thread's most recent error.
pub(crate) fn set(message: String, code: i32) {
    log::debug!("{message}");
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; nothing to keep.
    let _ = PENDING.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = Some(Pending {
                text,
                code,
                taken: false,
            });
        }
    });
    let _ = MISSING.try_with(|slot| slot.set(None));
}

/// Records that the most recent call on this thread failed because the
/// loaded library lacks `symbol` (after [`set`], which clears it).
pub(crate) fn set_missing_symbol(symbol: &'static str) {
    let _ = MISSING.try_with(|slot| slot.set(Some(symbol)));
}

/// Forgets this thread's recorded error (a call that reaches the library).
pub(crate) fn clear() {
    let _ = MISSING.try_with(|slot| slot.set(None));
    let _ = PENDING.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = None;
        }
    });
}

/// The pending message as a C string, marking it taken when `take`.
pub(crate) fn pending_ptr(take: bool) -> Option<*const c_char> {
    PENDING
        .try_with(|slot| {
            let mut slot = slot.try_borrow_mut().ok()?;
            let pending = slot.as_mut().filter(|pending| !pending.taken)?;
            pending.taken |= take;
            Some(pending.text.as_ptr())
        })
        .ok()
        .flatten()
}

/// The pending code.
pub(crate) fn pending_code() -> Option<i32> {
    PENDING
        .try_with(|slot| {
            let slot = slot.try_borrow().ok()?;
            slot.as_ref()
                .filter(|pending| !pending.taken)
                .map(|pending| pending.code)
        })
        .ok()
        .flatten()
}

/// The symbol whose absence made the most recent MemFabric call on this
/// thread return [`MEMFABRIC_SYS_NOT_SUPPORTED`](crate::MEMFABRIC_SYS_NOT_SUPPORTED)
/// (or its failure value), if that is why it failed. Any later call on the
/// thread clears it.
///
/// ```
/// // No call failed for a missing symbol on this thread.
/// assert_eq!(memfabric_sys::missing_symbol(), None);
/// ```
pub fn missing_symbol() -> Option<&'static str> {
    MISSING.try_with(Cell::get).ok().flatten()
}
