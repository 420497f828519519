//! Choosing the backend once per process, and saying why.
//!
//! Two backends: the real library (`hardware`) and the software fabric
//! (`software`, an emulation of the BM API across local processes, see
//! [`soft`](crate::soft)). `auto` (the default) uses the real library when
//! one is found and falls back to the software fabric when none is, as
//! `ascend-sys` falls back to its software device. A library that is found
//! but unusable (another ABI, a missing core) is an error under `auto` too:
//! a broken install should be fixed, not silently replaced.

use crate::loader::{self, AbiCheck, Candidate};
use crate::types::SMEM_ABI_VERSION_SUPPORTED;
use libloading::Library;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// Environment variable that selects the backend: `auto`, `hardware` or
/// `software`.
pub const ENV_BACKEND: &str = "MEMFABRIC_BACKEND";

/// Where calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The real MemFabric library (`libmf_smem.so`).
    Hardware,
    /// The software fabric: this crate's emulation of the BM API across the
    /// processes of one machine ([`soft`](crate::soft)).
    Software,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Hardware => "hardware",
            Backend::Software => "software",
        })
    }
}

/// What the user asked for: the value of `MEMFABRIC_BACKEND`, or the
/// argument of [`select_backend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendRequest {
    /// The real library when one is found, otherwise the software fabric.
    Auto,
    /// The real library, or an error.
    Hardware,
    /// The software fabric, whether or not a library is installed.
    Software,
}

impl BackendRequest {
    /// Parses `auto`, `hardware` or `software` (ASCII case-insensitive; empty
    /// is `auto`).
    ///
    /// # Errors
    ///
    /// [`LoadError::InvalidRequest`] for any other text.
    ///
    /// ```
    /// use memfabric_sys::BackendRequest;
    /// assert_eq!(BackendRequest::parse("Hardware"), Ok(BackendRequest::Hardware));
    /// assert!(BackendRequest::parse("gpu").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, LoadError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Self::Auto),
            "hardware" => Ok(Self::Hardware),
            "software" => Ok(Self::Software),
            _ => Err(LoadError::InvalidRequest {
                value: text.to_string(),
            }),
        }
    }
}

/// One attempt to open the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryAttempt {
    /// The `libmf_smem.so` path tried (a bare file name means the dynamic
    /// linker's own search).
    pub path: PathBuf,
    /// Where this candidate came from (`MEMFABRIC_SMEM_LIB`,
    /// `MEMFABRIC_HOME`, the Python package, the linker search).
    pub source: &'static str,
    /// Why it failed, or `None` if it opened.
    pub error: Option<String>,
}

impl fmt::Display for LibraryAttempt {
    /// `PATH (SOURCE): WHY`, or `PATH (SOURCE): opened`, on one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): ", self.path.display(), self.source)?;
        match &self.error {
            Some(error) => f.write_str(error),
            None => f.write_str("opened"),
        }
    }
}

/// The loaded library, and how it was found.
#[derive(Debug)]
pub struct BackendInfo {
    /// The active backend.
    pub backend: Backend,
    /// What was asked for.
    pub requested: BackendRequest,
    /// Who asked: `"MEMFABRIC_BACKEND"`, `"select_backend"` or `"default"`.
    pub requested_by: &'static str,
    /// The `libmf_smem.so` in use (empty for the software fabric).
    pub library_path: PathBuf,
    /// The libraries opened before it with `RTLD_GLOBAL`: the core
    /// `libmf_hybm_core.so`, then whichever of `libboundscheck.so` and
    /// `libhcom.so` sit beside it.
    pub companions: Vec<PathBuf>,
    /// The ABI version the library reported (always
    /// [`SMEM_ABI_VERSION_SUPPORTED`]; the software fabric emulates it).
    pub abi_version: u32,
    /// Every library path tried, in order (for the software fabric chosen by
    /// `auto`: why no library was used).
    pub attempts: Vec<LibraryAttempt>,
    library: Option<LoadedLibrary>,
}

/// The open library and its companions, never closed.
struct LoadedLibrary(loader::Loaded);

impl fmt::Debug for LoadedLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Library")
    }
}

impl BackendInfo {
    /// One line naming the library and its ABI version, and one indented
    /// line per path that failed before it.
    ///
    /// ```no_run
    /// let info = memfabric_sys::backend()?;
    /// println!("{}", info.describe());
    /// # Ok::<(), memfabric_sys::LoadError>(())
    /// ```
    pub fn describe(&self) -> String {
        let mut text = match self.backend {
            Backend::Hardware => format!(
                "MemFabric backend: {}, {} (ABI {})",
                self.backend,
                self.library_path.display(),
                abi_text(self.abi_version)
            ),
            Backend::Software => format!(
                "MemFabric backend: software (the software fabric, emulating ABI {}; requested {:?} by {})",
                abi_text(self.abi_version),
                self.requested,
                self.requested_by
            ),
        };
        for attempt in self.attempts.iter().filter(|attempt| attempt.error.is_some()) {
            text.push_str("\n  tried ");
            text.push_str(&attempt.to_string());
        }
        text
    }
}

/// `1.3 (0x00010003)`.
fn abi_text(version: u32) -> String {
    format!("{}.{} ({version:#010x})", version >> 16, version & 0xffff)
}

/// Why no MemFabric library could be used, or why a selection was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No `libmf_smem.so` opened. The message lists each place searched on
    /// a line of its own.
    #[error(
        "no MemFabric library could be opened. Set MEMFABRIC_SMEM_LIB to the libmf_smem.so file, or \
         MEMFABRIC_HOME to the folder holding lib/libmf_smem.so, or `pip install memfabric-hybrid==1.3.0`.{}",
        tried_lines(.attempts)
    )]
    LibraryNotFound {
        /// Every path tried, with the loader's message for each.
        attempts: Vec<LibraryAttempt>,
    },
    /// The library opened but lacks a symbol the loader needs
    /// (`smem_get_abi_version`: a release older than the ABI this crate
    /// binds).
    #[error("{path}: the MemFabric library does not export `{symbol}` ({message}); this crate needs ABI 1.3")]
    MissingSymbol {
        /// The library.
        path: PathBuf,
        /// The missing symbol.
        symbol: &'static str,
        /// The loader's message.
        message: String,
    },
    /// The library's ABI version is not the one this crate binds.
    #[error(
        "{path}: MemFabric ABI version {} found, but this crate supports only ABI {} (memfabric-hybrid \
         1.3.x); install that release or point MEMFABRIC_SMEM_LIB at it",
        abi_text(*.found),
        abi_text(*.supported)
    )]
    AbiMismatch {
        /// The library.
        path: PathBuf,
        /// What `smem_get_abi_version` returned.
        found: u32,
        /// The version this crate binds, [`SMEM_ABI_VERSION_SUPPORTED`].
        supported: u32,
    },
    /// `MEMFABRIC_BACKEND` (or a parsed request) is not `auto`, `hardware`
    /// or `software`.
    #[error("MEMFABRIC_BACKEND={value:?} is not one of auto, hardware, software")]
    InvalidRequest {
        /// The text given.
        value: String,
    },
    /// [`select_backend`] was called after the backend had been chosen,
    /// with a request the active backend does not satisfy.
    #[error(
        "the MemFabric backend was already chosen ({active}); select_backend must be called before the first \
         MemFabric call"
    )]
    AlreadyChosen {
        /// The backend in use.
        active: String,
    },
}

/// One `\n  tried PATH (SOURCE): WHY` line per attempt.
fn tried_lines(attempts: &[LibraryAttempt]) -> String {
    attempts.iter().map(|attempt| format!("\n  tried {attempt}")).collect()
}

static CHOSEN: OnceLock<Result<BackendInfo, LoadError>> = OnceLock::new();
static ROUTE: OnceLock<Result<Route, String>> = OnceLock::new();

/// Where the next call goes.
#[derive(Clone, Copy)]
pub(crate) enum Route {
    /// The loaded library.
    Library(&'static Library),
    /// The software fabric.
    Software,
}
/// Serialises [`select_backend`] against the first implicit choice.
static CHOOSING: Mutex<()> = Mutex::new(());

/// The active backend, choosing it now (from `MEMFABRIC_BACKEND`) if no
/// call has chosen it yet. The library is opened once and never closed.
///
/// # Errors
///
/// A [`LoadError`] saying why no library is usable; every C function then
/// returns its failure value ([`MEMFABRIC_SYS_NO_BACKEND`](crate::MEMFABRIC_SYS_NO_BACKEND)
/// for `int32_t` returns) and `smem_get_last_err_msg` repeats the error.
///
/// ```
/// match memfabric_sys::backend() {
///     Ok(info) => println!("{}", info.describe()),
///     Err(error) => println!("no MemFabric here: {error}"),
/// }
/// ```
pub fn backend() -> Result<&'static BackendInfo, LoadError> {
    chosen().as_ref().map_err(Clone::clone)
}

/// Chooses the backend from Rust instead of `MEMFABRIC_BACKEND`. Call it
/// before the first MemFabric call of the process; it overrides the
/// variable. Calling it again, or after the choice, succeeds when the
/// active backend satisfies the request.
///
/// # Errors
///
/// As [`backend`] for the new choice, or [`LoadError::AlreadyChosen`].
///
/// ```
/// use memfabric_sys::{Backend, BackendRequest, select_backend};
/// // The software fabric is always available.
/// let info = select_backend(BackendRequest::Software)?;
/// assert_eq!(info.backend, Backend::Software);
/// # Ok::<(), memfabric_sys::LoadError>(())
/// ```
pub fn select_backend(request: BackendRequest) -> Result<&'static BackendInfo, LoadError> {
    let _guard = CHOOSING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if CHOSEN.get().is_none() {
        let _ = CHOSEN.set(choose(request, "select_backend"));
    }
    let chosen = chosen().as_ref().map_err(Clone::clone)?;
    match (request, chosen.backend) {
        (BackendRequest::Auto, _)
        | (BackendRequest::Hardware, Backend::Hardware)
        | (BackendRequest::Software, Backend::Software) => Ok(chosen),
        _ => Err(LoadError::AlreadyChosen {
            active: chosen.backend.to_string(),
        }),
    }
}

fn chosen() -> &'static Result<BackendInfo, LoadError> {
    if let Some(chosen) = CHOSEN.get() {
        return chosen;
    }
    let _guard = CHOOSING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    CHOSEN.get_or_init(|| {
        let chosen = match std::env::var(ENV_BACKEND) {
            Ok(value) => BackendRequest::parse(&value).and_then(|request| choose(request, ENV_BACKEND)),
            Err(_) => choose(BackendRequest::Auto, "default"),
        };
        match &chosen {
            Ok(info) => log::info!("{}", info.describe()),
            Err(error) => log::debug!("MemFabric backend unavailable: {error}"),
        }
        chosen
    })
}

fn choose(request: BackendRequest, requested_by: &'static str) -> Result<BackendInfo, LoadError> {
    let software = |attempts| BackendInfo {
        backend: Backend::Software,
        requested: request,
        requested_by,
        library_path: PathBuf::new(),
        companions: Vec::new(),
        abi_version: SMEM_ABI_VERSION_SUPPORTED,
        attempts,
        library: None,
    };
    if request == BackendRequest::Software {
        return Ok(software(Vec::new()));
    }
    let list: Vec<Candidate> = loader::candidates(|name| std::env::var(name).ok());
    let (loaded, attempts) = loader::open_first(&list);
    let Some(loaded) = loaded else {
        if request == BackendRequest::Auto {
            log::info!("no MemFabric library was found; using the software fabric");
            return Ok(software(attempts));
        }
        return Err(LoadError::LibraryNotFound { attempts });
    };
    match loader::abi_version(&loaded.library) {
        AbiCheck::Version(SMEM_ABI_VERSION_SUPPORTED) => Ok(BackendInfo {
            backend: Backend::Hardware,
            requested: request,
            requested_by,
            library_path: loaded.path.clone(),
            companions: loaded.companions.clone(),
            abi_version: SMEM_ABI_VERSION_SUPPORTED,
            attempts,
            library: Some(LoadedLibrary(loaded)),
        }),
        // A library of another ABI is refused, and the search stops there:
        // its core is loaded with RTLD_GLOBAL under the same soname as any
        // other release's, so a second release could not be loaded beside it.
        AbiCheck::Version(found) => Err(LoadError::AbiMismatch {
            path: loaded.path,
            found,
            supported: SMEM_ABI_VERSION_SUPPORTED,
        }),
        AbiCheck::NoVersionSymbol(message) => Err(LoadError::MissingSymbol {
            path: loaded.path,
            symbol: "smem_get_abi_version",
            message,
        }),
    }
}

/// The backend for the next call, or why there is none. Cheap after the
/// first call (one atomic load).
#[inline]
pub(crate) fn route() -> Result<Route, &'static str> {
    match ROUTE.get_or_init(|| match chosen() {
        Ok(info) => Ok(match &info.library {
            Some(library) => Route::Library(&library.0.library),
            None => Route::Software,
        }),
        Err(error) => Err(error.to_string()),
    }) {
        Ok(route) => Ok(*route),
        Err(why) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_errors_name_both_versions() {
        assert_eq!(BackendRequest::parse(" AUTO "), Ok(BackendRequest::Auto));
        assert_eq!(BackendRequest::parse(""), Ok(BackendRequest::Auto));
        assert_eq!(BackendRequest::parse("software"), Ok(BackendRequest::Software));
        let error = BackendRequest::parse("npu").unwrap_err();
        assert_eq!(
            error.to_string(),
            "MEMFABRIC_BACKEND=\"npu\" is not one of auto, hardware, software"
        );
        let mismatch = LoadError::AbiMismatch {
            path: PathBuf::from("/x/libmf_smem.so"),
            found: 0x0001_0000,
            supported: SMEM_ABI_VERSION_SUPPORTED,
        };
        let text = mismatch.to_string();
        assert!(text.contains("ABI version 1.0 (0x00010000) found"), "{text}");
        assert!(text.contains("supports only ABI 1.3 (0x00010003)"), "{text}");
        let missing = LoadError::LibraryNotFound {
            attempts: vec![LibraryAttempt {
                path: PathBuf::from("/h/lib/libmf_smem.so"),
                source: "MEMFABRIC_HOME",
                error: Some("no such file".into()),
            }],
        };
        assert!(
            missing
                .to_string()
                .ends_with("\n  tried /h/lib/libmf_smem.so (MEMFABRIC_HOME): no such file")
        );
    }
}
