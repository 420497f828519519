//! Finding and opening `libmf_smem.so` (after `libmf_hybm_core.so`, with
//! `RTLD_GLOBAL`), checking its ABI version, and resolving its symbols
//! lazily.

mod search;
mod symbol;

pub(crate) use search::{Candidate, candidates};
pub use search::{ENV_HOME, ENV_LIBRARY};
use search::{PYTHON_QUERY, resolve_python_query};
pub(crate) use symbol::LazySymbol;

use crate::backend::LibraryAttempt;
use libloading::Library;
use libloading::os::unix::{Library as UnixLibrary, RTLD_GLOBAL, RTLD_NOW};
use std::path::{Path, PathBuf};

/// Libraries beside `libmf_smem.so` that `libmf_hybm_core.so` may `dlopen`
/// later by name: the host transport `libhcom.so` (host RDMA/TCP), which
/// itself needs `libboundscheck.so`. Neither has an RPATH, so they are
/// opened first with `RTLD_GLOBAL`, as MemFabric's own Python package does.
/// Optional: the control plane (config store, init) works without them.
///
/// Measured with wheel 1.3.0: `libboundscheck.so` opens, but `libhcom.so`
/// then still fails ("libboundscheck.so: cannot open shared object file"),
/// because `libboundscheck.so` has no SONAME, so a library opened by path
/// never satisfies another's `DT_NEEDED` on it. The host transports need
/// the `lib/` folder on `LD_LIBRARY_PATH` (set before the process starts).
const OPTIONAL_COMPANIONS: [&str; 2] = ["libboundscheck.so", "libhcom.so"];

/// A library that opened, with the path it was opened from, and the
/// libraries opened with it (kept open for the rest of the process).
pub(crate) struct Loaded {
    pub(crate) library: Library,
    pub(crate) path: PathBuf,
    /// The companion libraries that opened (the core, then the optional
    /// ones), by path.
    pub(crate) companions: Vec<PathBuf>,
    /// Never read: held so that the companions stay open while `library`
    /// is (the struct lives for the rest of the process).
    _handles: Vec<Library>,
}

/// Opens `name` from `dir` (or by bare name) with `RTLD_NOW | RTLD_GLOBAL`,
/// so that its symbols resolve the libraries opened after it.
fn open_global(dir: Option<&Path>, name: &str) -> Result<(Library, PathBuf), String> {
    let path = match dir {
        Some(dir) => dir.join(name),
        None => PathBuf::from(name),
    };
    // SAFETY: opening a shared library runs its initialisers. These are
    // MemFabric's libraries, named by the user's environment or found in its
    // documented install locations; running their initialisers is what
    // linking against them would do too.
    match unsafe { UnixLibrary::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) } {
        Ok(library) => Ok((library.into(), path)),
        Err(error) => Err(describe(&error, &path)),
    }
}

/// Tries each candidate in order; returns the first that opens, and every
/// attempt made (successful or not) for the report.
pub(crate) fn open_first(candidates: &[Candidate]) -> (Option<Loaded>, Vec<LibraryAttempt>) {
    let mut attempts = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let resolved;
        let candidate = if candidate.source == PYTHON_QUERY {
            match resolve_python_query() {
                Ok(path) => {
                    resolved = Candidate {
                        path,
                        source: candidate.source,
                    };
                    &resolved
                }
                Err(why) => {
                    attempts.push(LibraryAttempt {
                        path: candidate.path.clone(),
                        source: candidate.source,
                        error: Some(why),
                    });
                    continue;
                }
            }
        } else {
            candidate
        };
        let attempt = |error: Option<String>| LibraryAttempt {
            path: candidate.path.clone(),
            source: candidate.source,
            error,
        };
        let dir = candidate.dir();
        if dir.is_some() && !candidate.path.exists() {
            attempts.push(attempt(Some("no such file".to_string())));
            continue;
        }
        let mut handles = Vec::new();
        let mut companions = Vec::new();
        match open_global(dir, search::CORE_LIBRARY_NAME) {
            Ok((core, path)) => {
                handles.push(core);
                companions.push(path);
            }
            Err(error) => {
                attempts.push(attempt(Some(format!(
                    "its core library {} did not open: {error}",
                    search::CORE_LIBRARY_NAME
                ))));
                continue;
            }
        }
        if let Some(dir) = dir {
            for name in OPTIONAL_COMPANIONS {
                if let Ok((library, path)) = open_global(Some(dir), name) {
                    handles.push(library);
                    companions.push(path);
                }
            }
        }
        match open_global(None, &candidate.path.to_string_lossy()) {
            Ok((library, _)) if is_software_library(&library) => {
                // Closing it runs nothing of it: no function of it was called.
                drop(library);
                attempts.push(attempt(Some(format!(
                    "refused: this is ascend-rs's own software-fabric library (memfabric-soft-smem; it exports \
                     `{}`), not MemFabric; the software fabric runs in process instead of through it",
                    crate::SOFTWARE_LIBRARY_MARKER
                ))));
            }
            Ok((library, _)) => {
                attempts.push(attempt(None));
                return (
                    Some(Loaded {
                        library,
                        path: candidate.path.clone(),
                        companions,
                        _handles: handles,
                    }),
                    attempts,
                );
            }
            Err(error) => attempts.push(attempt(Some(error))),
        }
    }
    (None, attempts)
}

/// Whether `library` is the drop-in C library built from this crate's
/// software fabric (`memfabric-soft-smem`), which exports
/// [`SOFTWARE_LIBRARY_MARKER`](crate::SOFTWARE_LIBRARY_MARKER): loading it
/// as the real library would run a second software fabric behind the
/// dispatch, so the loader refuses it and goes on searching.
fn is_software_library(library: &Library) -> bool {
    // SAFETY: the symbol is only looked up, never read or called; the type
    // given is a plain address, valid for any symbol.
    unsafe { library.get::<*const core::ffi::c_void>(crate::SOFTWARE_LIBRARY_MARKER.as_bytes()) }.is_ok()
}

/// What the ABI check found.
pub(crate) enum AbiCheck {
    /// The library reports this version (possibly not the supported one).
    Version(u32),
    /// The library does not export `smem_get_abi_version`.
    NoVersionSymbol(String),
}

/// Asks the library its ABI version.
pub(crate) fn abi_version(library: &Library) -> AbiCheck {
    // SAFETY: `smem_get_abi_version` takes nothing and returns a `uint32_t`
    // in every MemFabric release that has it; the symbol is called at once,
    // while `library` is open.
    match unsafe { library.get::<unsafe extern "C" fn() -> u32>(b"smem_get_abi_version\0") } {
        // SAFETY: as above; the function reads no argument and only
        // returns a constant.
        Ok(function) => AbiCheck::Version(unsafe { function() }),
        Err(error) => AbiCheck::NoVersionSymbol(error.to_string()),
    }
}

/// Why `path` did not open: the `dlerror` text without libloading's
/// "dlopen failed: " and without the path, which the attempt names already.
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
