//! [`FabricError`]: why a MemFabric call failed, from the library's codes
//! and its last message.

use super::{library_log, sys};
use std::ffi::CStr;
use std::fmt;

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
        /// ascend driver does not support mf!"), when [`init`](super::init) forwarded
        /// its log.
        logged: Option<String>,
    },
    /// The loaded library does not export this function.
    #[non_exhaustive]
    Unsupported {
        /// The missing function.
        api: &'static str,
    },
    /// An argument refused in Rust, before any call (a malformed store URL,
    /// a TLS path too long for the library's fixed field).
    #[non_exhaustive]
    InvalidArgument {
        /// The Rust method that refused it, as `Type::method`.
        method: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A config store on another host with TLS off, refused before any
    /// call: anyone who reaches a plaintext store can join the pool and
    /// read or write every member's memory. Give TLS files
    /// ([`StoreSecurity::Tls`](super::StoreSecurity::Tls)) or opt out
    /// explicitly ([`StoreSecurity::plaintext_across_hosts`](super::StoreSecurity::plaintext_across_hosts)).
    #[non_exhaustive]
    PlaintextStore {
        /// The store's URL.
        url: String,
    },
    /// A [`BigMemory`](super::BigMemory) is alive in this process already:
    /// MemFabric keeps one BM state per process, and its second
    /// `smem_bm_init` would return OK without looking at the new arguments.
    #[non_exhaustive]
    AlreadyInitialized {
        /// The C function that was not called.
        api: &'static str,
    },
    /// A copy, wait or join found a rank of the pool gone: it died, left
    /// the world, or did not answer within the control timeout
    /// ([`BmConfig::with_control_timeout`](super::BmConfig::with_control_timeout)).
    /// The code is hybm's `BM_TIMEOUT` (−7), which the library passes
    /// through from its core, `SMEM_NOT_CONNECTED` (−2014), or
    /// `SMEM_TIMEOUT` (−2004) from a copy, a wait or a join. Other ranks'
    /// memory is still reachable; a batch may have partly happened.
    ///
    /// ```
    /// use ascend::fabric::{FabricError, sys};
    /// let error = FabricError::from_code("smem_bm_copy", sys::BM_TIMEOUT);
    /// assert!(matches!(error, FabricError::PeerUnreachable { api: "smem_bm_copy", code: -7, .. }));
    /// ```
    #[non_exhaustive]
    PeerUnreachable {
        /// The C function that failed.
        api: &'static str,
        /// The code it returned.
        code: i32,
        /// The library's last message (which rank, when it says).
        message: Option<String>,
    },
    /// The BM's device could not be made current on the calling thread
    /// (`aclrtSetDevice`), which the owned forms
    /// ([`OwnedPool`](super::OwnedPool) and what is made from it) do before
    /// each call they make from whichever thread calls them; nothing of
    /// MemFabric was called.
    ///
    /// ```
    /// use ascend::fabric::FabricError;
    /// fn describe(error: &FabricError) -> String {
    ///     match error {
    ///         FabricError::Device(cause) => format!("the device, not MemFabric: {cause}"),
    ///         other => other.to_string(),
    ///     }
    /// }
    /// ```
    Device(crate::Error),
    /// Synchronising the stream a copy is ordered after failed
    /// ([`Member::copy_on`](super::Member::copy_on)); nothing was copied.
    ///
    /// ```
    /// use ascend::fabric::FabricError;
    /// fn stream_failed(error: &FabricError) -> Option<&ascend::Error> {
    ///     match error {
    ///         FabricError::Stream { error, .. } => Some(&**error),
    ///         _ => None,
    ///     }
    /// }
    /// ```
    #[non_exhaustive]
    Stream {
        /// The method that synchronised.
        method: &'static str,
        /// The stream's error (boxed: it is rare, and keeps `FabricError`
        /// small).
        error: Box<crate::Error>,
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
    /// [`clear_last_error`](super::clear_last_error) before the raw call so that a stale message is
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
            sys::BM_TIMEOUT | sys::SMEM_NOT_CONNECTED => FabricError::PeerUnreachable { api, code, message },
            sys::SMEM_TIMEOUT if reaches_peers(api) => FabricError::PeerUnreachable { api, code, message },
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
    /// made through [`clear_last_error`](super::clear_last_error) first, so that at least the message
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
            FabricError::DriverMissing { code, .. }
            | FabricError::PeerUnreachable { code, .. }
            | FabricError::Call { code, .. } => Some(*code),
            FabricError::Unsupported { .. } => Some(sys::MEMFABRIC_SYS_NOT_SUPPORTED),
            FabricError::Load(_)
            | FabricError::InvalidArgument { .. }
            | FabricError::PlaintextStore { .. }
            | FabricError::AlreadyInitialized { .. }
            | FabricError::Device(_)
            | FabricError::Stream { .. } => None,
        }
    }
}

/// Whether `api` talks to other ranks, so that its `SMEM_TIMEOUT` means a
/// peer did not answer (and not, say, the config store during init).
fn reaches_peers(api: &str) -> bool {
    api.starts_with("smem_bm_copy") || matches!(api, "smem_bm_wait" | "smem_bm_join")
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
            FabricError::InvalidArgument { method, reason } => write!(f, "{method}: {reason}"),
            FabricError::AlreadyInitialized { api } => write!(
                f,
                "{api} not called: this process is in a BM world already (a BigMemory is alive; MemFabric \
                 keeps one per process and would ignore the new arguments)"
            ),
            FabricError::PlaintextStore { url } => write!(
                f,
                "refused: the MemFabric config store {url} is not on this host and TLS is off; anyone who \
                 can reach it can join the pool and read or write every member's memory. Give the store TLS \
                 files (StoreSecurity::Tls) or opt out explicitly (StoreSecurity::plaintext_across_hosts)"
            ),
            FabricError::PeerUnreachable { api, code, message } => write!(
                f,
                "{api} failed: {}: a rank of the pool is unreachable (it died, left, or did not answer within \
                 the control timeout){}",
                code_text(*code),
                said(message)
            ),
            FabricError::Stream { method, error } => {
                write!(
                    f,
                    "{method}: synchronising the stream failed, nothing was copied: {error}"
                )
            }
            FabricError::Device(error) => {
                write!(f, "the BM's device cannot be made current on this thread: {error}")
            }
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
            FabricError::Device(error) => Some(error),
            FabricError::Stream { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

/// A fabric error as the crate's [`Error`](crate::Error), so that `?` works
/// where both meet (a fabric copy inside a
/// [`Stream::scope`](crate::stream::Stream::scope)): the device error of
/// [`FabricError::Device`] and [`FabricError::Stream`] as it was, any other as
/// [`Error::External`](crate::Error::External) with the context
/// `"MemFabric"` (reach the `FabricError` with `downcast_ref`).
///
/// ```
/// use ascend::fabric::{FabricError, sys};
/// let error: ascend::Error = FabricError::from_code("smem_bm_copy", sys::BM_TIMEOUT).into();
/// let ascend::Error::External { source, .. } = &error else { unreachable!() };
/// let fabric = source.downcast_ref::<FabricError>().expect("a FabricError");
/// assert!(matches!(fabric, FabricError::PeerUnreachable { .. }));
/// ```
impl From<FabricError> for crate::Error {
    fn from(error: FabricError) -> Self {
        match error {
            FabricError::Device(error) => error,
            FabricError::Stream { error, .. } => *error,
            other => crate::Error::external("MemFabric", other),
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
