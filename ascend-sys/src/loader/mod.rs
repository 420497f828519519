//! Finding and opening `libascendcl.so`, and resolving its symbols lazily.

mod search;
mod symbol;

pub(crate) use search::{Candidate, candidates};
pub(crate) use symbol::LazySymbol;

use crate::backend::LibraryAttempt;
use libloading::Library;
use std::path::PathBuf;

/// A library that opened, with the path it was opened from.
pub(crate) struct Loaded {
    pub(crate) library: Library,
    pub(crate) path: PathBuf,
}

/// Tries each candidate in order; returns the first that opens, and every
/// attempt made (successful or not) for the report.
pub(crate) fn open_first(candidates: &[Candidate]) -> (Option<Loaded>, Vec<LibraryAttempt>) {
    let mut attempts = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        // SAFETY: opening a shared library runs its initialisers. The
        // candidates are AscendCL runtime libraries named by the user's
        // environment or by the documented install locations; running their
        // initialisers is what linking against them would do too.
        match unsafe { Library::new(&candidate.path) } {
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
                error: Some(describe(&error)),
            }),
        }
    }
    (None, attempts)
}

/// The loader's message with its cause (`dlerror` text), which libloading
/// keeps as the error's source.
fn describe(error: &libloading::Error) -> String {
    use std::error::Error as _;
    match error.source() {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}
