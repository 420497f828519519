//! What runtime this is: interface version, chip name, run mode; a
//! device's fault ([`DeviceErrorInfo`]).

mod device_error_info;

pub use device_error_info::{AiCoreFaultKind, DeviceErrorInfo, DeviceFaultKind, FaultDetail, UceRange};

use crate::Call;
use crate::error::{Error, Result, check};
use ascend_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// The AscendCL *interface* version (`aclrtGetVersion`), e.g. 1.17.0 for
/// CANN 9 headers — not the CANN package version.
///
/// ```
/// use ascend::info::{Version, version};
/// let version = version()?;
/// // Ordered field by field, so a minimum is one comparison.
/// assert!(version >= Version { major: 1, minor: 0, patch: 0 });
/// let text = version.to_string();
/// assert_eq!(text, format!("{}.{}.{}", version.major, version.minor, version.patch));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major version.
    pub major: i32,
    /// Minor version.
    pub minor: i32,
    /// Patch version.
    pub patch: i32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The interface version of the active backend.
///
/// # Errors
///
/// [`Error::Backend`] without a backend; the runtime's code (`Unsupported`
/// on a library without the call).
///
/// ```
/// let version = ascend::info::version()?;
/// assert!(version.major >= 1);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtGetVersion")]
pub fn version() -> Result<Version> {
    crate::backend()?;
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    check("aclrtGetVersion", unsafe {
        sys::aclrtGetVersion(&mut major, &mut minor, &mut patch)
    })?;
    Ok(Version { major, minor, patch })
}

/// The version string of a CANN package (`aclsysGetVersionStr`), e.g.
/// `package_version("runtime")`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a name with a NUL byte; the runtime's code
/// for an unknown package.
///
/// ```
/// use ascend::{Error, info::package_version};
/// let runtime = package_version("runtime")?;
/// assert!(runtime.starts_with(|c: char| c.is_ascii_digit()), "{runtime}"); // e.g. "8.0.RC3"
/// // A package that is not installed: the runtime's code.
/// let error = package_version("no-such-package").unwrap_err();
/// assert!(error.code().is_some());
/// // A NUL byte is refused before any call.
/// let error = package_version("run\0time").unwrap_err();
/// assert!(matches!(error, Error::InvalidArgument { .. }));
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclsysGetVersionStr")]
pub fn package_version(package: &str) -> Result<String> {
    crate::backend()?;
    let mut name = package.as_bytes().to_vec();
    if name.contains(&0) {
        return Err(Error::invalid(
            Call::new("info::package_version", "aclsysGetVersionStr"),
            "the package name contains a NUL byte",
        ));
    }
    name.push(0);
    // The runtime writes a NUL-terminated string; 128 bytes holds any
    // version string it produces.
    let mut out = [0u8; 128];
    // SAFETY: `name` is NUL-terminated; `out` is writable for 128 bytes.
    check("aclsysGetVersionStr", unsafe {
        sys::aclsysGetVersionStr(name.as_mut_ptr().cast(), out.as_mut_ptr().cast())
    })?;
    let text = CStr::from_bytes_until_nul(&out).map_err(|_| {
        Error::invalid(
            Call::new("info::package_version", "aclsysGetVersionStr"),
            "the runtime returned an unterminated string",
        )
    })?;
    Ok(text.to_string_lossy().into_owned())
}

/// The chip's name (`aclrtGetSocName`), or `None` if the runtime cannot say.
///
/// # Errors
///
/// [`Error::Backend`] without a backend.
///
/// ```
/// use ascend::{Backend, info::soc_name};
/// let name = soc_name()?;
/// if ascend::backend()?.backend == Backend::Software {
///     assert_eq!(name.as_deref(), Some("AscendSoftwareDevice"));
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtGetSocName")]
pub fn soc_name() -> Result<Option<String>> {
    crate::backend()?;
    // SAFETY: no arguments; the result is NULL or a C string owned by the
    // runtime, copied at once.
    let name = unsafe { sys::aclrtGetSocName() };
    if name.is_null() {
        return Ok(None);
    }
    // SAFETY: a non-NULL, NUL-terminated string from the runtime.
    Ok(Some(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()))
}

/// Where the program runs relative to the device (`aclrtGetRunMode`).
///
/// ```
/// use ascend::info::{RunMode, run_mode};
/// let on_host = match run_mode()? {
///     RunMode::Host => true,    // copies cross PCIe or HCCS
///     RunMode::Device => false, // on the device's own CPU
///     _ => false,               // a mode added later
/// };
/// assert!(on_host); // the software device runs on the host
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RunMode {
    /// On a host CPU, with the device across PCIe or HCCS (`ACL_HOST`).
    Host,
    /// On the device's own control CPU (`ACL_DEVICE`).
    Device,
}

/// The run mode.
///
/// # Errors
///
/// The runtime's code, or [`Error::InvalidArgument`] for a value this crate
/// does not know.
///
/// ```
/// use ascend::info::{RunMode, run_mode};
/// // An ordinary program on a server (or on the software device) runs
/// // on the host.
/// assert_eq!(run_mode()?, RunMode::Host);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtGetRunMode")]
pub fn run_mode() -> Result<RunMode> {
    crate::backend()?;
    let mut mode = 0;
    // SAFETY: a valid out-pointer.
    check("aclrtGetRunMode", unsafe { sys::aclrtGetRunMode(&mut mode) })?;
    match mode {
        sys::ACL_HOST => Ok(RunMode::Host),
        sys::ACL_DEVICE => Ok(RunMode::Device),
        other => Err(Error::invalid(
            Call::new("info::run_mode", "aclrtGetRunMode"),
            format!("unknown run mode {other}"),
        )),
    }
}
