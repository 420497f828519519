//! The software fabric's last error, per thread, as the real library keeps
//! it: a failure sets the code and the message, a success resets neither,
//! and `smem_get_and_clear_last_err_msg` clears the message only.

use super::result::SoftError;
use core::ffi::c_char;
use std::cell::RefCell;
use std::ffi::CString;

struct LastError {
    code: i32,
    message: CString,
    /// The message handed out by the last `get_and_clear`, kept alive until
    /// the next one so that the pointer returned stays valid.
    retired: CString,
}

thread_local! {
    static LAST: RefCell<LastError> = RefCell::new(LastError {
        code: 0,
        message: CString::default(),
        retired: CString::default(),
    });
}

/// Records `error` as this thread's last error, and logs it.
pub(crate) fn record(api: &str, error: &SoftError) {
    log::debug!("{api}: {error}");
    let text = CString::new(format!("{api}: {}", error.message).replace('\0', " ")).unwrap_or_default();
    let _ = LAST.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.code = error.code;
            slot.message = text;
        }
    });
}

/// The last code (0 when none).
pub(crate) fn code() -> i32 {
    LAST.try_with(|slot| slot.try_borrow().map(|slot| slot.code).unwrap_or(0))
        .unwrap_or(0)
}

/// The last message, valid until the next failure or clear on this thread.
pub(crate) fn message(clear: bool) -> *const c_char {
    LAST.try_with(|slot| match slot.try_borrow_mut() {
        Ok(mut slot) => {
            if clear {
                let taken = std::mem::take(&mut slot.message);
                slot.retired = taken;
                slot.retired.as_ptr()
            } else {
                slot.message.as_ptr()
            }
        }
        Err(_) => c"".as_ptr(),
    })
    .unwrap_or(c"".as_ptr())
}
