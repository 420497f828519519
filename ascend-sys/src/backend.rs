//! Choosing the backend once per process, and saying why.

use crate::loader::{self, Candidate};
use libloading::Library;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// Environment variable that selects the backend.
pub const ENV_BACKEND: &str = "ASCEND_BACKEND";

/// Where calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The real AscendCL library (`libascendcl.so`).
    Hardware,
    /// The in-tree software device ([`crate::soft`]).
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

/// What the user asked for: the value of `ASCEND_BACKEND`, or the argument
/// of [`select_backend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendRequest {
    /// The real library when one is found, otherwise the software device.
    Auto,
    /// The real library, or an error.
    Hardware,
    /// The software device, without looking for a library.
    Software,
}

impl BackendRequest {
    /// Parses `auto`, `hardware` or `software` (ASCII case-insensitive).
    ///
    /// # Errors
    ///
    /// [`BackendError::InvalidRequest`] for any other text.
    pub fn parse(text: &str) -> Result<Self, BackendError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Self::Auto),
            "hardware" => Ok(Self::Hardware),
            "software" => Ok(Self::Software),
            _ => Err(BackendError::InvalidRequest {
                value: text.to_string(),
            }),
        }
    }
}

/// One attempt to open the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryAttempt {
    /// The path passed to `dlopen` (a bare file name means the dynamic
    /// linker's own search).
    pub path: PathBuf,
    /// Where this candidate came from (`ASCEND_ACL_LIB`, `ASCEND_HOME_PATH`,
    /// a default install location, ...).
    pub source: &'static str,
    /// Why it failed (the loader's message), or `None` if it opened.
    pub error: Option<String>,
}

impl fmt::Display for LibraryAttempt {
    /// `PATH (SOURCE): WHY`, or `PATH (SOURCE): opened`, on one line. The
    /// loader's message names the path once, here, not again in the reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): ", self.path.display(), self.source)?;
        match &self.error {
            Some(error) => f.write_str(error),
            None => f.write_str("opened"),
        }
    }
}

/// Which backend is active, and why.
#[derive(Debug)]
pub struct BackendInfo {
    /// The active backend.
    pub backend: Backend,
    /// What was asked for.
    pub requested: BackendRequest,
    /// Who asked: `"ASCEND_BACKEND"`, `"select_backend"` or `"default"`.
    pub requested_by: &'static str,
    /// The library file in use (hardware only).
    pub library_path: Option<PathBuf>,
    /// Every library path tried, in order (empty when the software device
    /// was requested explicitly).
    pub attempts: Vec<LibraryAttempt>,
    /// Set when `auto` fell back to the software device on a host that looks
    /// like an NPU host: what makes it look so (`ASCEND_HOME_PATH is set`,
    /// `/dev/davinci0 exists`, ...). The fallback is then logged at `warn`,
    /// once, and [`describe`](Self::describe) says it, because there it is
    /// more likely a broken install than a machine without an NPU.
    pub npu_host_signs: Vec<String>,
    library: Option<Library>,
}

impl BackendInfo {
    /// The explanation logged when the backend is chosen: a first line with
    /// the backend and who asked for it, then one indented line per library
    /// path tried (the path, why it was tried, why it failed), each path
    /// named once.
    ///
    /// ```text
    /// AscendCL backend: software device (no ASCEND_BACKEND set; no AscendCL library found)
    ///   tried /usr/local/Ascend/cann/lib64/libascendcl.so (default install location): cannot open shared object file: No such file or directory
    ///   tried libascendcl.so (dynamic linker search): cannot open shared object file: No such file or directory
    /// ```
    ///
    /// When `auto` fell back on a host that looks like an NPU host
    /// ([`npu_host_signs`](Self::npu_host_signs)), a last line says so and
    /// what to do:
    ///
    /// ```text
    ///   WARNING: this host looks like an NPU host (ASCEND_HOME_PATH is set), but no AscendCL library opened: ...
    /// ```
    pub fn describe(&self) -> String {
        let asked = match self.requested_by {
            "default" => "no ASCEND_BACKEND set".to_string(),
            who => format!("{who} asked for {:?}", self.requested),
        };
        let mut text = match (&self.backend, &self.library_path) {
            (Backend::Hardware, Some(path)) => format!("AscendCL backend: hardware, {} ({asked})", path.display()),
            _ if self.attempts.is_empty() => format!("AscendCL backend: software device ({asked})"),
            _ => format!("AscendCL backend: software device ({asked}; no AscendCL library found)"),
        };
        // The attempt that opened is the path on the first line already.
        for attempt in self.attempts.iter().filter(|attempt| attempt.error.is_some()) {
            text.push_str("\n  tried ");
            text.push_str(&attempt.to_string());
        }
        if let Some(warning) = self.fallback_warning() {
            text.push_str("\n  WARNING: ");
            text.push_str(&warning);
        }
        text
    }

    /// Why running on the software device here is probably a mistake, and
    /// the fix; `None` unless `auto` fell back on an NPU-looking host.
    fn fallback_warning(&self) -> Option<String> {
        if self.backend != Backend::Software || self.npu_host_signs.is_empty() {
            return None;
        }
        Some(format!(
            "this host looks like an NPU host ({}), but no AscendCL library opened, so every call runs on the \
             software device, not the NPU. Set ASCEND_ACL_LIB to the libascendcl.so file (or source CANN's \
             set_env.sh), and set ASCEND_BACKEND=hardware in production so that a missing library is an error.",
            self.npu_host_signs.join(", ")
        ))
    }
}

/// What makes this host look like an NPU host: a CANN root variable set, or
/// an NPU device node (`/dev/davinci*`).
fn npu_host_signs(env: impl Fn(&str) -> Option<String>, dev: &std::path::Path) -> Vec<String> {
    let mut signs: Vec<String> = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .into_iter()
        .filter(|name| env(name).is_some_and(|value| !value.is_empty()))
        .map(|name| format!("{name} is set"))
        .collect();
    let mut nodes: Vec<String> = std::fs::read_dir(dev)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.starts_with("davinci"))
        .collect();
    nodes.sort();
    if let Some(first) = nodes.first() {
        signs.push(format!("{} exists", dev.join(first).display()));
    }
    signs
}

/// Why no backend could be used, or why a selection was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The hardware backend was required and no library could be opened.
    /// The message says what to do and lists each path tried on a line of
    /// its own.
    #[error(
        "the hardware backend was requested but no AscendCL library could be opened. Set ASCEND_ACL_LIB to the \
         libascendcl.so file, or source CANN's set_env.sh (it sets ASCEND_HOME_PATH), or set ASCEND_BACKEND=auto \
         to run on the software device when no library is found.{}",
        tried_lines(.attempts)
    )]
    LibraryNotFound {
        /// Every path tried, with the loader's message for each.
        attempts: Vec<LibraryAttempt>,
    },
    /// `ASCEND_BACKEND` (or a parsed request) is not `auto`, `hardware` or
    /// `software`.
    #[error("ASCEND_BACKEND={value:?} is not one of auto, hardware, software")]
    InvalidRequest {
        /// The text given.
        value: String,
    },
    /// The software device was chosen but its configuration cannot be used
    /// (for example `ASCEND_SOFT_DEVICE_MEMORY=garbage`, or a malformed
    /// `ASCEND_SOFT_FAULTS`): every call would fail.
    #[error("the software device cannot start: {reason}")]
    SoftwareDevice {
        /// What is wrong (the variable, its value and why).
        reason: String,
    },
    /// [`select_backend`] was called after the backend had been chosen, with
    /// a request the active backend does not satisfy.
    #[error("the backend was already chosen ({active}); select_backend must be called before the first AscendCL call")]
    AlreadyChosen {
        /// The backend in use.
        active: String,
    },
}

/// One `\n  tried PATH (SOURCE): WHY` line per attempt.
fn tried_lines(attempts: &[LibraryAttempt]) -> String {
    attempts.iter().map(|attempt| format!("\n  tried {attempt}")).collect()
}

/// How a call is routed; computed once.
pub(crate) enum Route {
    Software,
    Hardware(&'static Library),
    Unavailable(&'static str),
}

static CHOSEN: OnceLock<Result<BackendInfo, BackendError>> = OnceLock::new();
static ROUTE: OnceLock<RouteSlot> = OnceLock::new();
/// Directories tried after the documented search ([`add_library_fallback`]).
static FALLBACKS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Serialises [`select_backend`] against the first implicit choice.
static CHOOSING: Mutex<()> = Mutex::new(());

enum RouteSlot {
    Software,
    Hardware(&'static Library),
    Unavailable(String),
}

/// The active backend, choosing it now (from `ASCEND_BACKEND`) if no call has
/// chosen it yet. The choice is logged once at `info` level.
///
/// # Errors
///
/// [`BackendError::LibraryNotFound`] when `ASCEND_BACKEND=hardware` and no
/// library opened (every path tried is listed);
/// [`BackendError::InvalidRequest`] when `ASCEND_BACKEND` has another value.
/// In both cases every C function returns `ACL_ERROR_RT_NO_DEVICE` and
/// `aclGetRecentErrMsg` repeats this error.
/// [`BackendError::SoftwareDevice`] when the software device is the backend
/// but its configuration (the `ASCEND_SOFT_*` variables) cannot be used;
/// every call then fails with `ACL_ERROR_RT_INTERNAL_ERROR`, and this says
/// why before the first one.
///
/// ```
/// let info = ascend_sys::backend().expect("a backend");
/// println!("{}", info.describe());
/// ```
pub fn backend() -> Result<&'static BackendInfo, BackendError> {
    let info = chosen().as_ref().map_err(Clone::clone)?;
    if info.backend == Backend::Software
        && let Some(reason) = crate::soft::startup_problem()
    {
        return Err(BackendError::SoftwareDevice { reason });
    }
    Ok(info)
}

/// Chooses the backend from Rust instead of `ASCEND_BACKEND`. Call it before
/// the first AscendCL call of the process; it overrides the variable.
///
/// Calling it again, or after the backend was chosen, succeeds when the
/// active backend satisfies the request (`Auto` is satisfied by either), and
/// returns [`BackendError::AlreadyChosen`] otherwise.
///
/// # Errors
///
/// As [`backend`] for the new choice (except that a bad software-device
/// configuration is reported by [`backend`] only, so that
/// [`soft::configure`](crate::soft::configure) can still replace it), or
/// [`BackendError::AlreadyChosen`].
///
/// ```
/// use ascend_sys::{select_backend, Backend, BackendRequest};
/// let info = select_backend(BackendRequest::Software).unwrap();
/// assert_eq!(info.backend, Backend::Software);
/// ```
pub fn select_backend(request: BackendRequest) -> Result<&'static BackendInfo, BackendError> {
    let _guard = CHOOSING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if CHOSEN.get().is_none() {
        let _ = CHOSEN.set(choose(request, "select_backend"));
        announce();
    }
    let chosen = chosen().as_ref().map_err(Clone::clone)?;
    let satisfied = match request {
        BackendRequest::Auto => true,
        BackendRequest::Hardware => chosen.backend == Backend::Hardware,
        BackendRequest::Software => chosen.backend == Backend::Software,
    };
    if satisfied {
        Ok(chosen)
    } else {
        Err(BackendError::AlreadyChosen {
            active: chosen.backend.to_string(),
        })
    }
}

/// Adds a directory to try, after the documented search, when looking for
/// `libascendcl.so`. It only has an effect before the backend is chosen; the
/// safe `ascend` crate uses it for the toolkit found when it was built.
/// Returns whether the directory will be searched.
pub fn add_library_fallback(dir: impl Into<PathBuf>) -> bool {
    let _guard = CHOOSING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if CHOSEN.get().is_some() {
        return false;
    }
    FALLBACKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(dir.into());
    true
}

fn chosen() -> &'static Result<BackendInfo, BackendError> {
    if let Some(chosen) = CHOSEN.get() {
        return chosen;
    }
    let _guard = CHOOSING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let chosen = CHOSEN.get_or_init(|| match std::env::var(ENV_BACKEND) {
        Ok(value) => BackendRequest::parse(&value).and_then(|request| choose(request, ENV_BACKEND)),
        Err(_) => choose(BackendRequest::Auto, "default"),
    });
    announce();
    chosen
}

/// Logs the choice once. A failure is logged at `debug` only: it reaches the
/// program as an error already ([`backend`] returns it, and every call
/// returns `ACL_ERROR_RT_NO_DEVICE` with the reason in
/// `aclGetRecentErrMsg`), so a program that logs its errors shows it once.
fn announce() {
    static ANNOUNCED: OnceLock<()> = OnceLock::new();
    ANNOUNCED.get_or_init(|| match CHOSEN.get() {
        Some(Ok(info)) => match crate::soft::startup_problem().filter(|_| info.backend == Backend::Software) {
            None if info.fallback_warning().is_some() => log::warn!("{}", info.describe()),
            None => log::info!("{}", info.describe()),
            Some(reason) => log::debug!("{}\nthe software device cannot start: {reason}", info.describe()),
        },
        Some(Err(error)) => log::debug!("AscendCL backend unavailable: {error}"),
        None => {}
    });
}

fn choose(request: BackendRequest, requested_by: &'static str) -> Result<BackendInfo, BackendError> {
    let software = |attempts| BackendInfo {
        backend: Backend::Software,
        requested: request,
        requested_by,
        library_path: None,
        npu_host_signs: match request {
            BackendRequest::Auto => npu_host_signs(|name| std::env::var(name).ok(), std::path::Path::new("/dev")),
            _ => Vec::new(),
        },
        attempts,
        library: None,
    };
    if request == BackendRequest::Software {
        return Ok(software(Vec::new()));
    }
    let fallbacks = FALLBACKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    let list: Vec<Candidate> = loader::candidates(|name| std::env::var(name).ok(), &fallbacks);
    let (loaded, attempts) = loader::open_first(&list);
    match loaded {
        Some(loaded) => Ok(BackendInfo {
            backend: Backend::Hardware,
            requested: request,
            requested_by,
            library_path: Some(loaded.path),
            npu_host_signs: Vec::new(),
            attempts,
            library: Some(loaded.library),
        }),
        None if request == BackendRequest::Auto => Ok(software(attempts)),
        None => Err(BackendError::LibraryNotFound { attempts }),
    }
}

/// The route for the next call. Cheap after the first call (one atomic load).
#[inline]
pub(crate) fn route() -> Route {
    let slot = ROUTE.get_or_init(|| match chosen() {
        Ok(BackendInfo {
            library: Some(library), ..
        }) => RouteSlot::Hardware(library),
        Ok(_) => RouteSlot::Software,
        Err(error) => RouteSlot::Unavailable(error.to_string()),
    });
    match slot {
        RouteSlot::Software => Route::Software,
        RouteSlot::Hardware(library) => Route::Hardware(library),
        RouteSlot::Unavailable(why) => Route::Unavailable(why),
    }
}

#[cfg(test)]
mod tests {
    use super::npu_host_signs;
    use std::path::Path;

    #[test]
    fn a_cann_root_variable_or_a_davinci_node_makes_an_npu_host() {
        let dev = std::env::temp_dir().join(format!("ascend-sys-dev-{}", std::process::id()));
        std::fs::create_dir_all(&dev).expect("temporary directory");
        let none = |_: &str| None;
        assert!(npu_host_signs(none, &dev).is_empty());
        assert!(
            npu_host_signs(|_| Some(String::new()), &dev).is_empty(),
            "an empty variable is unset"
        );

        let home = |name: &str| (name == "ASCEND_HOME_PATH").then(|| "/usr/local/Ascend".to_string());
        assert_eq!(npu_host_signs(home, &dev), ["ASCEND_HOME_PATH is set"]);

        std::fs::write(dev.join("davinci3"), b"").expect("a device node stand-in");
        std::fs::write(dev.join("davinci_manager"), b"").expect("a device node stand-in");
        let signs = npu_host_signs(none, &dev);
        assert_eq!(signs, [format!("{} exists", dev.join("davinci3").display())]);
        std::fs::remove_dir_all(&dev).expect("cleanup");
        assert!(npu_host_signs(none, Path::new("/nonexistent/dev")).is_empty());
    }
}
