//! [`Error`], [`Result`] and the one function that turns `aclError` into
//! them ([`check`]).

pub(crate) use crate::ErrorCode;
use ascend_sys as sys;
use std::ffi::CStr;
use std::fmt;
use std::sync::Arc;

/// Everything that can go wrong in this crate.
///
/// Every fallible call returns it: match on the variant to tell a refused
/// argument from a runtime failure.
///
/// ```
/// use ascend::{Device, DeviceBuf, Error, ErrorCode};
/// let device = Device::new(0)?;
/// let mut buf = DeviceBuf::<u32>::zeroed(&device, 4)?;
/// // Refused in Rust, before any call: the lengths differ.
/// match buf.write_from_host(&[1, 2, 3]) {
///     Err(Error::InvalidArgument { method, api, reason, .. }) => {
///         assert_eq!((method, api), ("DeviceBuf::write_from_host", "aclrtMemcpy"));
///         println!("refused: {reason}");
///     }
///     other => panic!("expected a refused argument, got {other:?}"),
/// }
/// // Refused by the runtime: no such device.
/// let error = Device::new(i32::MAX).unwrap_err();
/// assert!(matches!(error, Error::Acl { api: "aclrtSetDevice", code: ErrorCode::RT_INVALID_DEVICEID, .. }));
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Guide:** [Concepts: errors and destructors](crate::guide::concepts).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An AscendCL call returned an error code. Displayed as
    /// "`api` failed: `code`: `message`", each once (for example
    /// `aclrtFree failed: ACL_ERROR_RT_PARAM_INVALID (107000): devPtr is
    /// NULL`).
    #[doc(alias = "aclGetRecentErrMsg")]
    #[non_exhaustive]
    Acl {
        /// The C function that failed.
        api: &'static str,
        /// The code it returned.
        code: ErrorCode,
        /// The runtime's own explanation (`aclGetRecentErrMsg`), if any,
        /// without a leading "`api`: " or a trailing "(error N)" that
        /// would repeat the fields above.
        message: Option<String>,
    },
    /// The loaded AscendCL library does not export this function (an older
    /// CANN or driver). Other functions keep working.
    #[non_exhaustive]
    Unsupported {
        /// The missing function.
        api: &'static str,
    },
    /// No backend is available (see [`crate::backend`]).
    Backend(sys::BackendError),
    /// An argument was refused in Rust, before any call. Displayed as
    /// "`method` (`api`): `reason`" (for example
    /// `DeviceBuf::write_from_host (aclrtMemcpy): length mismatch: ...`), or
    /// "`method`: `reason`" when no C function is involved and `api`
    /// equals `method` (for example `PoolConfig::parse: ...`).
    #[non_exhaustive]
    InvalidArgument {
        /// The public Rust method that was called, as `Type::method` (or
        /// `module::function` for a free function), for example
        /// `DeviceBuf::write_from_host`.
        method: &'static str,
        /// The C function the arguments were meant for, for example
        /// `aclrtMemcpy`; equal to `method` when the check is pure Rust
        /// (parsing, for example) and no C function is involved.
        api: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A memory pool could not serve a request, even after giving its
    /// cached memory back to the device and retrying.
    #[non_exhaustive]
    PoolExhausted {
        /// Bytes asked for (rounded as the pool rounds).
        requested: usize,
        /// Bytes in live blocks.
        allocated: usize,
        /// Bytes of device memory mapped by the pool.
        reserved: usize,
        /// Bytes mapped but not in live blocks.
        free: usize,
        /// The pool's cap on reserved bytes when it is what refused the
        /// request ([`PoolConfig::memory_limit`](crate::pool::PoolConfig::memory_limit),
        /// [`DevicePool::set_memory_fraction`](crate::pool::DevicePool::set_memory_fraction)),
        /// else `None`.
        limit: Option<usize>,
        /// Why growing failed (the runtime's error, or a full reservation).
        cause: String,
    },
    /// A memory pool's tag is asleep
    /// ([`DevicePool::sleep`](crate::pool::DevicePool::sleep)): wake it
    /// before allocating from it.
    #[non_exhaustive]
    PoolAsleep {
        /// The sleeping tag.
        tag: String,
    },
    /// Work was to be ordered after a stream in
    /// [`FailureMode::Stop`](crate::stream::FailureMode::Stop) one of whose
    /// tasks failed: such a stream skips its later work, an event recorded
    /// on it never completes, and a wait for one would never end, so the
    /// crate refuses to order work on another stream after it. Nothing was
    /// queued. Reach the memory through a host wait (which works: the
    /// stopped stream runs nothing more of it), or use it on the stopped
    /// stream's successor.
    #[non_exhaustive]
    StreamStopped {
        /// The stopped stream's handle ([`Stream::as_raw`](crate::stream::Stream::as_raw)).
        stream: usize,
        /// The failed task's error, when the call that fails with this
        /// variant is what learned of it (a synchronisation of the stream
        /// reports a failure once); `None` when it was reported before.
        failure: Option<Box<Error>>,
    },
    /// An error from outside this crate, carried in its `Result`: a
    /// framework's own I/O or validation, built with [`Error::external`]
    /// or from a [`std::io::Error`] by `?` (`From`). Displayed as
    /// "`context`: `source`", whole like the other variants (the crate's
    /// own logs print errors with `{}`); the error itself is also
    /// [`source`](std::error::Error::source), to reach its type with
    /// `downcast_ref` (so a reporter that prints the chain of sources
    /// shows it twice). Two such errors are equal when one is a clone of
    /// the other (they share the source).
    #[non_exhaustive]
    External {
        /// What was being done, for example `writing /tmp/pool.pickle`.
        context: String,
        /// The error itself; reach its type with `downcast_ref`.
        source: ExternalSource,
    },
}

/// The error an [`Error::External`] carries: shared, so that `Error` stays
/// `Clone`, and compared by identity (an error from outside need not be
/// comparable: two are equal when one is a clone of the other). It
/// dereferences to the error itself, whose type `downcast_ref` reaches.
///
/// ```
/// use ascend::Error;
/// let error = Error::external("loading weights", "checksum mismatch");
/// let Error::External { source, .. } = &error else { unreachable!() };
/// assert_eq!(source.to_string(), "checksum mismatch");
/// assert_eq!(error.clone(), error); // a clone shares the source
/// assert_ne!(Error::external("loading weights", "checksum mismatch"), error); // another error
/// ```
#[derive(Clone)]
pub struct ExternalSource(Arc<dyn std::error::Error + Send + Sync>);

impl std::ops::Deref for ExternalSource {
    type Target = dyn std::error::Error + Send + Sync;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl PartialEq for ExternalSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ExternalSource {}

impl fmt::Debug for ExternalSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ExternalSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Acl { api, code, message } => {
                write!(f, "{api} failed: {code}")?;
                match message {
                    Some(message) => write!(f, ": {message}"),
                    None => Ok(()),
                }
            }
            Error::Unsupported { api } => write!(
                f,
                "{api} is not supported by the loaded AscendCL library (the symbol is missing)"
            ),
            Error::Backend(error) => fmt::Display::fmt(error, f),
            Error::InvalidArgument { method, api, reason } => {
                write!(f, "{method}")?;
                if method != api {
                    write!(f, " ({api})")?;
                }
                write!(f, ": {reason}")
            }
            Error::PoolExhausted {
                requested,
                allocated,
                reserved,
                free,
                cause,
                ..
            } => write!(
                f,
                "the pool cannot serve {requested} bytes: {allocated} bytes allocated, {reserved} reserved, {free} free in \
                 the reservation ({cause})"
            ),
            Error::PoolAsleep { tag } => write!(f, "the pool's memory tagged `{tag}` is asleep; wake it first"),
            Error::StreamStopped { stream, failure } => {
                write!(
                    f,
                    "stream {stream:#x} is in FailureMode::Stop and one of its tasks failed: work is not ordered after it"
                )?;
                match failure {
                    Some(failure) => write!(f, " (the failure: {failure})"),
                    None => Ok(()),
                }
            }
            Error::External { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

/// The source of [`Error::External`] is its error itself (`downcast_ref`
/// reaches its type); [`Error::Backend`] forwards its error's.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Backend(error) => error.source(),
            Error::External { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

impl From<sys::BackendError> for Error {
    fn from(error: sys::BackendError) -> Self {
        Error::Backend(error)
    }
}

/// An I/O error as [`Error::External`] with the context `I/O error`
/// (displayed as, for example, "I/O error: No such file or directory (os
/// error 2)"): what `?` does with one in a function returning
/// [`Result`]. Give a better context with [`Error::external`] where there
/// is one (the file, for example).
///
/// ```
/// fn load(path: &std::path::Path) -> ascend::Result<Vec<u8>> {
///     Ok(std::fs::read(path)?) // an I/O error converts
/// }
/// let error = load(std::path::Path::new("/no/such/file")).unwrap_err();
/// assert!(error.to_string().starts_with("I/O error: "), "{error}");
/// let io = std::error::Error::source(&error).and_then(|source| source.downcast_ref::<std::io::Error>());
/// assert_eq!(io.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
/// ```
impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Error::External {
            context: "I/O error".to_string(),
            source: ExternalSource(Arc::new(error)),
        }
    }
}

impl Error {
    /// The AscendCL code, for errors that carry one (for
    /// [`Error::StreamStopped`], its failure's, when it carries one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, ErrorCode};
    /// let device = Device::new(0)?;
    /// // A runtime failure carries its code ...
    /// let error = Device::new(-1).unwrap_err();
    /// assert_eq!(error.code(), Some(ErrorCode::RT_INVALID_DEVICEID));
    /// // ... an argument refused in Rust has none.
    /// let buf = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let error = buf.slice(2..8).unwrap_err();
    /// assert_eq!(error.code(), None);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Acl { code, .. } => Some(*code),
            Error::Unsupported { .. } => Some(ErrorCode::RT_FEATURE_NOT_SUPPORT),
            Error::StreamStopped { failure, .. } => failure.as_deref().and_then(Error::code),
            _ => None,
        }
    }

    /// [`Error::External`]: `source`, an error from outside this crate (a
    /// framework's own I/O or validation), with `context`, what was being
    /// done. `source` is any error type, or a message (`&str`,
    /// `String`) when there is no error value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use std::error::Error as _;
    /// #[derive(Debug)]
    /// struct EmptyShape(Vec<usize>); // a framework's own error
    /// impl std::fmt::Display for EmptyShape {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         write!(f, "shape {:?} has no elements", self.0)
    ///     }
    /// }
    /// impl std::error::Error for EmptyShape {}
    ///
    /// fn check_shape(shape: &[usize]) -> ascend::Result<usize> {
    ///     match shape.iter().product() {
    ///         0 => Err(Error::external("Tensor::new", EmptyShape(shape.to_vec()))),
    ///         elements => Ok(elements),
    ///     }
    /// }
    /// let error = check_shape(&[4, 0]).unwrap_err();
    /// assert_eq!(error.to_string(), "Tensor::new: shape [4, 0] has no elements");
    /// let shape = error.source().and_then(|source| source.downcast_ref::<EmptyShape>());
    /// assert_eq!(shape.map(|shape| shape.0.clone()), Some(vec![4, 0]));
    /// assert!(matches!(&error, Error::External { context, .. } if context == "Tensor::new"));
    /// // A message will do when there is no error value.
    /// let error = Error::external("loading weights", "checksum mismatch");
    /// assert_eq!(error.source().map(|source| source.to_string()).as_deref(), Some("checksum mismatch"));
    /// assert_eq!(error.clone(), error); // a clone shares the source
    /// ```
    pub fn external(context: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Error::External {
            context: context.into(),
            source: ExternalSource(Arc::from(source.into())),
        }
    }

    /// [`Error::InvalidArgument`] for `call`.
    pub(crate) fn invalid(call: Call, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
            method: call.method,
            api: call.api,
            reason: reason.into(),
        }
    }
}

/// Who refused an argument: the public Rust method the user called and the
/// C function the arguments were meant for, carried into
/// [`Error::InvalidArgument`] by [`Error::invalid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Call {
    /// The public Rust method, as `Type::method`.
    pub(crate) method: &'static str,
    /// The C function, or `method` again when none is involved.
    pub(crate) api: &'static str,
}

impl Call {
    /// `method` checking arguments for the C function `api`.
    pub(crate) const fn new(method: &'static str, api: &'static str) -> Self {
        Call { method, api }
    }

    /// `method` checking arguments in Rust only, with no C function.
    pub(crate) const fn rust(method: &'static str) -> Self {
        Call { method, api: method }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Turns the return code of the AscendCL function `api` into a `Result`,
/// the way every call in this crate does, so that code calling raw
/// [`ascend_sys`] functions gets the same typed errors.
///
/// `ACL_SUCCESS` is `Ok(())`. Any other code is [`Error::Acl`] carrying
/// `api`, the code and the runtime's recent error message
/// (`aclGetRecentErrMsg`, read at once: call `check` right after the call,
/// on the same thread). `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` from a function
/// the loaded library does not export is [`Error::Unsupported`]: pass the C
/// name exactly, as the loader records the missing symbol by that name.
///
/// ```
/// use ascend::{Device, Error, ErrorCode, sys};
/// let _device = Device::new(0)?; // device 0 is now current on this thread
/// let mut raw = std::ptr::null_mut();
/// // SAFETY: `raw` is a valid out-pointer and the size is non-zero.
/// ascend::check("aclrtMalloc", unsafe {
///     sys::aclrtMalloc(&mut raw, 4096, sys::ACL_MEM_MALLOC_HUGE_FIRST)
/// })?;
/// // SAFETY: `raw` came from `aclrtMalloc` and is freed once.
/// ascend::check("aclrtFree", unsafe { sys::aclrtFree(raw) })?;
///
/// // SAFETY: NULL is refused by the runtime before it is used.
/// let error = ascend::check("aclrtFree", unsafe { sys::aclrtFree(std::ptr::null_mut()) }).unwrap_err();
/// assert!(matches!(error, Error::Acl { api: "aclrtFree", .. }));
/// assert_eq!(error.code(), Some(ErrorCode::INVALID_PARAM));
/// // The API name and the code appear once each.
/// let text = error.to_string();
/// assert!(text.starts_with("aclrtFree failed: ACL_ERROR_INVALID_PARAM (100000)"), "{text}");
/// assert_eq!(text.matches("aclrtFree").count(), 1, "{text}");
/// assert_eq!(text.matches("100000").count(), 1, "{text}");
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Acl`] for any code but `ACL_SUCCESS`, or
/// [`Error::Unsupported`] as above.
#[inline]
pub fn check(api: &'static str, code: sys::aclError) -> Result<()> {
    // The success case inline in the caller (a compare); building the
    // error out of line.
    if code == sys::ACL_SUCCESS {
        return Ok(());
    }
    failed(api, code)
}

/// [`check`] of a code that is not `ACL_SUCCESS`.
#[cold]
#[inline(never)]
fn failed(api: &'static str, code: sys::aclError) -> Result<()> {
    if code == sys::ACL_ERROR_RT_FEATURE_NOT_SUPPORT && sys::missing_symbol() == Some(api) {
        return Err(Error::Unsupported { api });
    }
    Err(Error::Acl {
        api,
        code: ErrorCode(code),
        message: recent_message().map(|text| without_api_and_code(&text, api, code)),
    })
}

/// The runtime's message without what [`Error::Acl`]'s `Display` already
/// says: the software device (and the loader) write "api: what (error N)",
/// which would repeat the API name and the code.
fn without_api_and_code(text: &str, api: &str, code: sys::aclError) -> String {
    let text = text
        .strip_prefix(api)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(text);
    let text = text.strip_suffix(&format!(" (error {code})")).unwrap_or(text);
    text.to_string()
}

/// `aclGetRecentErrMsg` as an owned string.
fn recent_message() -> Option<String> {
    // SAFETY: no arguments; the result is NULL or a C string valid until the
    // next AscendCL call on this thread, and it is copied at once.
    let text = unsafe { sys::aclGetRecentErrMsg() };
    if text.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated, valid until the next call (above).
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy().trim().to_string();
    (!text.is_empty()).then_some(text)
}
