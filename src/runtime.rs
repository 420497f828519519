//! [`Runtime`]: AscendCL initialisation as a shared, counted handle.

use crate::Call;
use crate::error::{Error, ErrorCode, Result, check};
use ascend_sys as sys;
use std::ffi::CString;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

/// An initialised AscendCL (`aclInit`), shared by every holder in the
/// process: cloning is cheap, and `aclFinalize` runs once, when the last
/// holder drops.
///
/// Several libraries in one process can each call [`Runtime::init`]: the
/// first initialises, the others share it, and none finalizes under the
/// others' feet. (The memory API itself does not require initialisation,
/// but the rest of CANN does.)
///
/// ```
/// let a = ascend::Runtime::init()?;
/// let b = ascend::Runtime::init()?; // shares the first
/// assert!(a.same_as(&b));
/// drop(a);
/// drop(b); // aclFinalize runs here
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `Runtime` is `Send` and `Sync`: clones may live on any thread.
#[derive(Clone, Debug)]
#[doc(alias = "aclFinalize")]
pub struct Runtime {
    inner: Arc<Initialised>,
}

#[derive(Debug)]
struct Initialised {
    /// Whether this crate's `aclInit` did the initialisation (and so must
    /// finalize); false when someone else had initialised already.
    owns: bool,
}

static LIVE: Mutex<Weak<Initialised>> = Mutex::new(Weak::new());

impl Runtime {
    /// Initialises AscendCL with the default configuration, or shares the
    /// live initialisation.
    ///
    /// # Errors
    ///
    /// [`Error::Backend`] when no backend is available; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// let runtime = Runtime::init()?; // aclInit
    /// // Another library in the process shares it instead of failing.
    /// let other = Runtime::init()?;
    /// assert!(other.same_as(&runtime));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclInit")]
    pub fn init() -> Result<Self> {
        Self::init_inner(None)
    }

    /// Initialises AscendCL with the JSON configuration file at `path`. If
    /// AscendCL is already initialised in this process, the live
    /// initialisation is shared and `path` is ignored (as `aclInit` does).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a path that is not valid UTF-8 or has
    /// a NUL byte; the runtime's code (e.g. `ACL_ERROR_INVALID_FILE`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Error, Runtime};
    /// use std::path::Path;
    /// let runtime = Runtime::init()?;
    /// // A live initialisation is shared and the path ignored.
    /// let shared = Runtime::init_with_config(Path::new("/nonexistent/acl.json"))?;
    /// assert!(shared.same_as(&runtime));
    /// // A path C cannot take is refused before any call.
    /// let error = Runtime::init_with_config(Path::new("acl\0.json")).unwrap_err();
    /// assert!(matches!(error, Error::InvalidArgument { api: "aclInit", .. }));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclInit")]
    pub fn init_with_config(path: &Path) -> Result<Self> {
        let text = path.to_str().and_then(|text| CString::new(text).ok()).ok_or_else(|| {
            Error::invalid(
                Call::new("Runtime::init_with_config", "aclInit"),
                format!("{} is not a usable path", path.display()),
            )
        })?;
        Self::init_inner(Some(text))
    }

    fn init_inner(config: Option<CString>) -> Result<Self> {
        crate::backend()?;
        let mut live = LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(inner) = live.upgrade() {
            return Ok(Self { inner });
        }
        let path = config.as_ref().map_or(std::ptr::null(), |text| text.as_ptr());
        // SAFETY: `path` is NULL or a C string that outlives the call.
        let code = unsafe { sys::aclInit(path) };
        let owns = match check("aclInit", code) {
            Ok(()) => true,
            // Initialised by someone else (raw calls): share it, but leave
            // finalizing to them.
            Err(error) if error.code() == Some(ErrorCode::REPEAT_INITIALIZE) => false,
            Err(error) => return Err(error),
        };
        let inner = Arc::new(Initialised { owns });
        *live = Arc::downgrade(&inner);
        Ok(Self { inner })
    }

    /// Whether two handles share one initialisation.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Runtime;
    /// let runtime = Runtime::init()?;
    /// assert!(runtime.clone().same_as(&runtime));
    /// assert!(Runtime::init()?.same_as(&runtime)); // shares the live one
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn same_as(&self, other: &Runtime) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Drop for Initialised {
    fn drop(&mut self) {
        if !self.owns {
            return;
        }
        // Hold the lock so a concurrent `init` waits for the finalize.
        let _live = LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // SAFETY: no arguments.
        if let Err(error) = check("aclFinalize", unsafe { sys::aclFinalize() }) {
            log::warn!("Runtime drop: {error}");
        }
    }
}
