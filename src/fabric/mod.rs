//! MemFabric Hybrid, Huawei's global HBM + DRAM pool across processes and
//! machines (feature `fabric`): the first, minimal safe layer over
//! [`memfabric-sys`](sys).
//!
//! What is here today: loading and checking the library ([`library`]),
//! `smem_init` ([`init`]), and [`FabricError`], which turns the library's
//! return codes and last error message into a typed error, telling apart a
//! call made before initialisation ([`FabricError::NotInitialized`], code
//! −2008) and a host without the Ascend driver
//! ([`FabricError::DriverMissing`]). The BM lifecycle types (init → create →
//! join → register → copy → leave → destroy) come later; until then the raw
//! functions are reachable as [`sys`], and [`check`] and [`FabricError::last`]
//! turn their results into this module's errors:
//!
//! ```
//! use ascend::fabric::{self, sys, FabricError};
//!
//! match fabric::init() {
//!     Ok(()) => {
//!         // SAFETY: all-zero is a valid value of this plain C struct.
//!         let option: sys::smem_bm_create_option_t = unsafe { std::mem::zeroed() };
//!         // So that the error read below is this call's own.
//!         fabric::clear_last_error();
//!         // SAFETY: `option` is valid for the call.
//!         let handle = unsafe { sys::smem_bm_create2(0, &option) };
//!         // Before `smem_bm_init`, the library refuses with SMEM_NOT_INIT.
//!         assert!(handle.is_null());
//!         let error = FabricError::last("smem_bm_create2");
//!         assert!(matches!(error, FabricError::NotInitialized { .. }), "{error}");
//!     }
//!     // No MemFabric library on this machine (`pip install memfabric-hybrid==1.3.0`).
//!     Err(FabricError::Load(why)) => println!("{why}"),
//!     Err(other) => panic!("{other}"),
//! }
//! ```
//!
//! The library is found as [`memfabric-sys`](sys) says: `MEMFABRIC_SMEM_LIB`,
//! `$MEMFABRIC_HOME/lib`, an installed `memfabric_hybrid` Python package, the
//! dynamic linker's search; only ABI 1.3 is accepted. [`init`] sends the
//! library's log, which it writes to stdout by default, to the `log` crate
//! (target `memfabric`). What the real library does on a machine without an
//! NPU (measured) is listed in [`sys`]'s documentation.

use std::ffi::CStr;
use std::fmt;

mod library_log;

/// The raw bindings ([`memfabric_sys`]), for what this module does not wrap
/// yet.
pub use memfabric_sys as sys;

/// Why a MemFabric call failed.
///
/// Every variant that comes from a call names the C function (`api`) and
/// keeps the library's own last message (`smem_get_last_err_msg`), read
/// right after the failure on the same thread.
///
/// ```
/// use ascend::fabric::{FabricError, sys};
/// let error = FabricError::from_code("smem_bm_join", sys::SMEM_NOT_INIT);
/// assert!(matches!(error, FabricError::NotInitialized { api: "smem_bm_join", .. }));
/// assert_eq!(error.code(), Some(-2008));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FabricError {
    /// No usable MemFabric library: none found with `MEMFABRIC_BACKEND=hardware`
    /// (each place searched is listed; `auto` falls back to the software
    /// fabric instead), or a wrong ABI version (both versions named).
    Load(sys::LoadError),
    /// The call needs an earlier initialisation (`smem_bm_init` before
    /// `smem_bm_create2`, for example): code `SMEM_NOT_INIT` (−2008).
    #[non_exhaustive]
    NotInitialized {
        /// The C function that failed.
        api: &'static str,
        /// The library's last message.
        message: Option<String>,
    },
    /// The call reached MemFabric's data plane, which needs the Ascend NPU
    /// driver, on a host without one. The control plane (config store,
    /// ranks) works without it; `smem_bm_init` does not (the library checks
    /// the driver's version and refuses, whatever the transport).
    #[non_exhaustive]
    DriverMissing {
        /// The C function that failed.
        api: &'static str,
        /// The code it returned (−1 from `smem_bm_init` in 1.3.0).
        code: i32,
        /// The library's last message (for example "init hybm failed,
        /// result: -1, flags: 0x0").
        message: Option<String>,
        /// The last error line about the driver that the library logged on
        /// this thread during the call (for example "the current version of
        /// ascend driver does not support mf!"), when [`init`] forwarded
        /// its log.
        logged: Option<String>,
    },
    /// The loaded library does not export this function.
    #[non_exhaustive]
    Unsupported {
        /// The missing function.
        api: &'static str,
    },
    /// Any other failure, with the raw code (the library's `SMEM_*` codes,
    /// or a core `BM_*` code passed through) and its last message.
    #[non_exhaustive]
    Call {
        /// The C function that failed.
        api: &'static str,
        /// The code it returned.
        code: i32,
        /// The library's last message.
        message: Option<String>,
    },
}

impl FabricError {
    /// The error for `code`, returned by `api` just now on this thread
    /// (reads the library's last message). `code` must not be `SMEM_OK`.
    /// The library's message outlives the call that set it; call
    /// [`clear_last_error`] before the raw call so that a stale message is
    /// not attached to this error (a busy port in
    /// `smem_create_config_store`, for example, sets none).
    ///
    /// ```
    /// use ascend::fabric::{FabricError, sys};
    /// let error = FabricError::from_code("smem_bm_copy", sys::SMEM_INVALID_PARAM);
    /// assert_eq!(error.code(), Some(sys::SMEM_INVALID_PARAM));
    /// assert!(error.to_string().starts_with("smem_bm_copy failed: SMEM_INVALID_PARAM (-2000)"));
    /// ```
    pub fn from_code(api: &'static str, code: i32) -> Self {
        if code == sys::MEMFABRIC_SYS_NOT_SUPPORTED && sys::missing_symbol() == Some(api) {
            return FabricError::Unsupported { api };
        }
        if code == sys::MEMFABRIC_SYS_NO_BACKEND
            && let Err(error) = sys::backend()
        {
            return FabricError::Load(error);
        }
        let message = last_message();
        match code {
            sys::SMEM_NOT_INIT => FabricError::NotInitialized { api, message },
            _ if needs_driver(api) && !ascend_driver_installed() => FabricError::DriverMissing {
                api,
                code,
                message,
                logged: library_log::last_error_line_with("driver"),
            },
            _ => FabricError::Call { api, code, message },
        }
    }

    /// The error of `api`, which just failed on this thread without
    /// returning a code (a NULL handle, for example): the code is
    /// `smem_get_last_err_code`.
    ///
    /// The library never resets its last code, and some failures do not set
    /// it: call this only right after the failed call, and prefer a call
    /// made through [`clear_last_error`] first, so that at least the message
    /// is the call's own.
    ///
    /// ```
    /// use ascend::fabric::FabricError;
    /// // Without a library, the code says so.
    /// if ascend::fabric::library().is_err() {
    ///     assert!(matches!(FabricError::last("smem_bm_create2"), FabricError::Load(_)));
    /// }
    /// ```
    pub fn last(api: &'static str) -> Self {
        if sys::missing_symbol() == Some(api) {
            return FabricError::Unsupported { api };
        }
        // SAFETY: no arguments; it only reads this thread's last error.
        let code = unsafe { sys::smem_get_last_err_code() };
        Self::from_code(api, if code == sys::SMEM_OK { sys::SMEM_ERROR } else { code })
    }

    /// The raw code, when the error comes from a call.
    ///
    /// ```
    /// use ascend::fabric::FabricError;
    /// assert_eq!(FabricError::from_code("smem_bm_wait", -7).code(), Some(-7));
    /// ```
    pub fn code(&self) -> Option<i32> {
        match self {
            FabricError::NotInitialized { .. } => Some(sys::SMEM_NOT_INIT),
            FabricError::DriverMissing { code, .. } | FabricError::Call { code, .. } => Some(*code),
            FabricError::Unsupported { .. } => Some(sys::MEMFABRIC_SYS_NOT_SUPPORTED),
            FabricError::Load(_) => None,
        }
    }
}

/// `NAME (code)`, or the bare code for one outside the public list.
fn code_text(code: i32) -> String {
    match sys::error_name(code) {
        Some(name) => format!("{name} ({code})"),
        None => format!("code {code}"),
    }
}

/// `: the library said "MESSAGE"`, or nothing.
fn said(message: &Option<String>) -> String {
    match message {
        Some(message) => format!("; the library said: {message}"),
        None => String::new(),
    }
}

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FabricError::Load(error) => write!(f, "MemFabric is not available: {error}"),
            FabricError::NotInitialized { api, message } => write!(
                f,
                "{api} failed: {}: MemFabric is not initialised for this call (smem_bm_init must come \
                 first){}",
                code_text(sys::SMEM_NOT_INIT),
                said(message)
            ),
            FabricError::DriverMissing {
                api,
                code,
                message,
                logged,
            } => {
                write!(
                    f,
                    "{api} failed: {}: the Ascend driver is needed: MemFabric's data plane checks the NPU \
                     driver, and this host has none (no {}){}",
                    code_text(*code),
                    DRIVER_VERSION_FILES.join(" or "),
                    said(message)
                )?;
                match logged {
                    Some(line) => write!(f, "; it logged: {line}"),
                    None => Ok(()),
                }
            }
            FabricError::Unsupported { api } => write!(
                f,
                "{api} is not supported by the loaded MemFabric library (the symbol is missing)"
            ),
            FabricError::Call { api, code, message } => {
                write!(f, "{api} failed: {}{}", code_text(*code), said(message))
            }
        }
    }
}

impl std::error::Error for FabricError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FabricError::Load(error) => Some(error),
            _ => None,
        }
    }
}

impl From<sys::LoadError> for FabricError {
    fn from(error: sys::LoadError) -> Self {
        FabricError::Load(error)
    }
}

/// The files the Ascend driver installs with its version, which MemFabric
/// 1.3 reads before it maps any memory (measured: it logs "driver version
/// path is not a valid real path" for each, then "the current version of
/// ascend driver does not support mf!").
const DRIVER_VERSION_FILES: [&str; 2] = ["/usr/local/Ascend/driver/version.info", "/etc/ascend_install.info"];

/// Whether this host has the Ascend NPU driver installed (its version file,
/// which MemFabric checks).
///
/// ```
/// if !ascend::fabric::ascend_driver_installed() {
///     println!("MemFabric's control plane works here, its data plane does not");
/// }
/// ```
pub fn ascend_driver_installed() -> bool {
    DRIVER_VERSION_FILES
        .iter()
        .any(|path| std::path::Path::new(path).exists())
}

/// The calls that bring up MemFabric's data plane, and so check the driver
/// (measured: both fail at the same check; `smem_trans_init` then sets no
/// last error at all).
fn needs_driver(api: &str) -> bool {
    matches!(api, "smem_bm_init" | "smem_trans_init")
}

/// The library's last message on this thread, copied.
fn last_message() -> Option<String> {
    // Without a library, memfabric-sys would answer with a message about
    // the query itself.
    sys::backend().ok()?;
    // SAFETY: no arguments; it returns NULL or a NUL-terminated string
    // owned by the library (or by memfabric-sys), valid until the next
    // MemFabric call on this thread, and copied before any.
    let text = unsafe { sys::smem_get_last_err_msg() };
    if text.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated, alive until the next call (above).
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy().trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// Forgets this thread's last MemFabric error message
/// (`smem_get_and_clear_last_err_msg`) and the error lines it logged,
/// before a raw call whose failure [`check`] or [`FabricError::last`] will
/// read. Does nothing without a library. (The library's last *code* cannot
/// be cleared.)
///
/// ```
/// use ascend::fabric::{self, check, sys};
/// if fabric::init().is_ok() {
///     fabric::clear_last_error();
///     // SAFETY: `flags` is 0.
///     check("smem_init", unsafe { sys::smem_init(0) })?;
/// }
/// # Ok::<(), fabric::FabricError>(())
/// ```
pub fn clear_last_error() {
    library_log::clear();
    if sys::backend().is_ok() {
        // SAFETY: no arguments; the returned pointer is not used.
        let _ = unsafe { sys::smem_get_and_clear_last_err_msg() };
    }
}

/// `Ok(())` for `SMEM_OK`, otherwise [`FabricError::from_code`]: for the
/// result of a raw call that returns a code.
///
/// # Errors
///
/// The typed error for any other code.
///
/// ```
/// use ascend::fabric::{check, sys};
/// assert!(check("smem_init", sys::SMEM_OK).is_ok());
/// assert_eq!(check("smem_bm_wait", sys::SMEM_TIMEOUT).unwrap_err().code(), Some(-2004));
/// ```
pub fn check(api: &'static str, code: i32) -> Result<(), FabricError> {
    if code == sys::SMEM_OK {
        Ok(())
    } else {
        Err(FabricError::from_code(api, code))
    }
}

/// Loads MemFabric now (if no call did yet) and says which library is in
/// use: its path, its companions, its ABI version (always 1.3).
///
/// # Errors
///
/// [`FabricError::Load`]: no library found (each place searched listed), a
/// wrong ABI version, or a backend that is not available.
///
/// ```
/// match ascend::fabric::library() {
///     Ok(info) => println!("{}", info.describe()),
///     Err(error) => println!("{error}"),
/// }
/// ```
pub fn library() -> Result<&'static sys::BackendInfo, FabricError> {
    sys::backend().map_err(FabricError::Load)
}

/// `smem_init(0)`: initialises the library for this process (after loading
/// it). Calling it again is harmless.
///
/// It first sends the library's log to the `log` crate (target
/// `memfabric`; MemFabric otherwise writes it to stdout), once per process,
/// so that an error can also carry what the library logged about it
/// ([`FabricError::DriverMissing`]'s `logged`).
///
/// # Errors
///
/// [`FabricError::Load`] without a usable library; the library's own error
/// otherwise.
///
/// ```
/// use ascend::fabric::{self, FabricError};
/// match fabric::init() {
///     Ok(()) => println!("MemFabric initialised"),
///     Err(FabricError::Load(why)) => println!("no MemFabric here: {why}"),
///     Err(error) => return Err(error),
/// }
/// # Ok::<(), FabricError>(())
/// ```
pub fn init() -> Result<(), FabricError> {
    library()?;
    library_log::install();
    clear_last_error();
    // SAFETY: `flags` is 0, the only value the library defines.
    check("smem_init", unsafe { sys::smem_init(0) })
}
