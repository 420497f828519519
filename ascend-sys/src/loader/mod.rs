//! Finding and opening `libascendcl.so`, and resolving its symbols lazily.

mod search;
mod symbol;

pub(crate) use search::{Candidate, candidates};
pub(crate) use symbol::LazySymbol;

use crate::backend::LibraryAttempt;
use libloading::Library;
use std::path::{Path, PathBuf};

/// A library that opened, with the path it was opened from.
pub(crate) struct Loaded {
    pub(crate) library: Library,
    pub(crate) path: PathBuf,
}

/// Tries each candidate in order; returns the first that opens and is not
/// the software-device library, and every attempt made (successful or not)
/// for the report.
pub(crate) fn open_first(candidates: &[Candidate]) -> (Option<Loaded>, Vec<LibraryAttempt>) {
    let mut attempts = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        // SAFETY: opening a shared library runs its initialisers. The
        // candidates are AscendCL runtime libraries named by the user's
        // environment or by the documented install locations; running their
        // initialisers is what linking against them would do too.
        match unsafe { Library::new(&candidate.path) } {
            Ok(library) if is_software_library(&library) => {
                // Closing it runs nothing of it: no function of it was called.
                drop(library);
                attempts.push(LibraryAttempt {
                    path: candidate.path.clone(),
                    source: candidate.source,
                    error: Some(format!(
                        "refused: this is ascend-rs's own software-device library (ascend-soft-acl; it exports \
                         `{}`), not an AscendCL runtime; the software device runs in process instead of \
                         through it",
                        crate::SOFTWARE_LIBRARY_MARKER
                    )),
                });
            }
            Ok(library) => {
                attempts.push(LibraryAttempt {
                    path: candidate.path.clone(),
                    source: candidate.source,
                    error: None,
                });
                return (
                    Some(Loaded {
                        library,
                        path: candidate.path.clone(),
                    }),
                    attempts,
                );
            }
            Err(error) => attempts.push(LibraryAttempt {
                path: candidate.path.clone(),
                source: candidate.source,
                error: Some(describe(&error, &candidate.path)),
            }),
        }
    }
    (None, attempts)
}

/// Whether `library` is the drop-in C library built from this crate's
/// software device (`ascend-soft-acl`), which exports
/// [`SOFTWARE_LIBRARY_MARKER`](crate::SOFTWARE_LIBRARY_MARKER). Loading it as
/// the hardware backend would run a second software device behind the
/// dispatch (and, were it ever to search for a library itself, recurse), so
/// the loader refuses it and goes on searching.
fn is_software_library(library: &Library) -> bool {
    // SAFETY: the symbol is only looked up, never read or called; the type
    // given is a plain address, valid for any symbol.
    unsafe { library.get::<*const core::ffi::c_void>(crate::SOFTWARE_LIBRARY_MARKER.as_bytes()) }.is_ok()
}

/// Why `path` did not open: the `dlerror` text without libloading's
/// "dlopen failed: " and without the path, which the attempt names already
/// ("/x/libascendcl.so: cannot open shared object file" becomes "cannot open
/// shared object file").
fn describe(error: &libloading::Error, path: &Path) -> String {
    use std::error::Error as _;
    let full = match error.source() {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    };
    let text = full.strip_prefix("dlopen failed: ").unwrap_or(&full);
    let path = path.to_string_lossy();
    let text = text
        .strip_prefix(&*path)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(text);
    text.to_string()
}
