//! The library's own log, forwarded to the `log` crate.
//!
//! MemFabric 1.3.0 writes its log to stdout (measured), with lines at level
//! 5 that `smem_set_log_level` does not filter. Through
//! `smem_set_extern_logger` its lines go to `log` instead (target
//! `memfabric`), and the error lines a thread logs are kept on that thread,
//! so that an error can say what the library logged about it (the driver
//! check, for example, logs "the current version of ascend driver does not
//! support mf!" while `smem_get_last_err_msg` only says "init hybm failed").

use super::sys;
use core::ffi::{CStr, c_char, c_int};
use std::cell::RefCell;
use std::sync::OnceLock;

/// The `log` target of the library's lines.
const TARGET: &str = "memfabric";
/// How many error lines a thread keeps (the oldest are dropped).
const KEPT: usize = 32;

thread_local! {
    static ERROR_LINES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Receives one line of the library's log, on whichever thread logged it.
extern "C" fn forward(level: c_int, message: *const c_char) {
    // Nothing may unwind into the library.
    let _ = std::panic::catch_unwind(|| {
        if message.is_null() {
            return;
        }
        // SAFETY: the library passes a NUL-terminated line, valid for the
        // duration of this call; it is copied here.
        let line = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
        // Measured levels: 2 warnings, 3 errors, 5 progress ("TRACE").
        let level = match level {
            0 => log::Level::Debug,
            1 => log::Level::Info,
            2 => log::Level::Warn,
            3 | 4 => log::Level::Error,
            _ => log::Level::Trace,
        };
        log::log!(target: TARGET, level, "{line}");
        if level == log::Level::Error {
            let _ = ERROR_LINES.try_with(|lines| {
                if let Ok(mut lines) = lines.try_borrow_mut() {
                    if lines.len() == KEPT {
                        lines.remove(0);
                    }
                    lines.push(line);
                }
            });
        }
    });
}

/// Sends the library's log to the `log` crate (target `memfabric`) instead
/// of stdout, once per process; [`init`](super::init) does it. Returns
/// whether the library took the logger (`false` without a library).
pub(super) fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        sys::backend().is_ok()
            // SAFETY: `forward` has the logger's C signature, never unwinds
            // and lives for the whole process.
            && unsafe { sys::smem_set_extern_logger(Some(forward)) } == sys::SMEM_OK
    })
}

/// Forgets the error lines this thread logged.
pub(super) fn clear() {
    let _ = ERROR_LINES.try_with(|lines| {
        if let Ok(mut lines) = lines.try_borrow_mut() {
            lines.clear();
        }
    });
}

/// The last error line this thread logged that contains `word`, without
/// the library's `[MODULE file:line function] ` prefix.
pub(super) fn last_error_line_with(word: &str) -> Option<String> {
    ERROR_LINES
        .try_with(|lines| {
            let lines = lines.try_borrow().ok()?;
            let line = lines.iter().rev().find(|line| line.contains(word))?;
            let text = match line.strip_prefix('[').and_then(|rest| rest.split_once("] ")) {
                Some((_, text)) => text,
                None => line.as_str(),
            };
            Some(text.trim().to_string())
        })
        .ok()
        .flatten()
}
