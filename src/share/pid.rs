//! [`Pid`]: a process as the runtime's whitelists name it, and
//! [`PidValidation`]: whether an export checks its whitelist.

use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::fmt;
use std::str::FromStr;

/// A process id as the runtime knows it: the bare thread-group id from
/// `aclrtDeviceGetBareTgid`, which is the *host's* id of the process (inside
/// a container it differs from the id the container sees). Whitelists of
/// shareable handles and IPC keys take these, so a process that wants to
/// import reports its own [`Pid::current`] to the exporter.
///
/// It prints as a decimal number and parses back:
///
/// ```
/// use ascend::share::Pid;
/// let me = Pid::current()?;
/// assert!(me.raw() > 0);
/// assert_eq!(me.to_string().parse::<Pid>()?, me);
/// assert!("0".parse::<Pid>().is_err());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pid(i32);

impl Pid {
    /// The calling process (`aclrtDeviceGetBareTgid`; needs no device).
    ///
    /// # Errors
    ///
    /// [`Error::Backend`] when no backend is available; the runtime's code.
    ///
    /// # Examples
    ///
    /// An importer reports its pid to the exporter, as one line of text:
    ///
    /// ```
    /// use ascend::share::Pid;
    /// let line = Pid::current()?.to_string(); // sent to the exporter
    /// let pid: Pid = line.parse()?; // the exporter's side
    /// assert_eq!(pid, Pid::current()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDeviceGetBareTgid")]
    pub fn current() -> Result<Self> {
        crate::backend()?;
        let mut raw = 0;
        // SAFETY: `raw` is a valid out-pointer for the call.
        check("aclrtDeviceGetBareTgid", unsafe {
            sys::aclrtDeviceGetBareTgid(&mut raw)
        })?;
        Self::from_raw(raw)
    }

    /// A pid received from elsewhere (e.g. another process's
    /// [`Pid::current`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] unless `raw` is positive.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::Pid;
    /// let pid = Pid::from_raw(4242)?; // e.g. read from a C importer
    /// assert_eq!(pid.raw(), 4242);
    /// assert!(matches!(Pid::from_raw(0), Err(Error::InvalidArgument { .. })));
    /// assert!(Pid::from_raw(-1).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_raw(raw: i32) -> Result<Self> {
        if raw <= 0 {
            return Err(Error::invalid(
                Call::rust("Pid::from_raw"),
                format!("{raw} is not a process id"),
            ));
        }
        Ok(Self(raw))
    }

    /// The number, as the C whitelist calls take it.
    ///
    /// ```
    /// use ascend::share::Pid;
    /// let pids: Vec<i32> = [Pid::from_raw(7)?, "8".parse()?].iter().map(|pid| pid.raw()).collect();
    /// assert_eq!(pids, [7, 8]); // the `int32_t *pid` array of aclrtMemSetPidToShareableHandle
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn raw(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for Pid {
    type Err = Error;

    /// Parses a positive decimal number.
    fn from_str(text: &str) -> Result<Self> {
        let raw = text
            .trim()
            .parse::<i32>()
            .map_err(|error| Error::invalid(Call::rust("Pid::from_str"), format!("{text:?}: {error}")))?;
        Self::from_raw(raw)
    }
}

/// Whether an export accepts only the processes on its whitelist.
///
/// Chosen at export ([`PhysicalAlloc::export_with`](crate::vmm::PhysicalAlloc::export_with),
/// [`DeviceBuf::ipc_export_with`](crate::DeviceBuf::ipc_export_with));
/// an export without validation takes no whitelist:
///
/// ```
/// use ascend::share::{Pid, PidValidation};
/// use ascend::{DeviceBuf, Error};
/// # let device = ascend::Device::new(0)?;
/// let buf = DeviceBuf::<u32>::zeroed(&device, 1024)?;
/// let export = buf.ipc_export_with(PidValidation::Disabled)?; // any process of this user
/// assert_eq!(export.validation(), PidValidation::Disabled);
/// let refused = export.allow_pids(&[Pid::current()?]);
/// assert!(matches!(refused, Err(Error::InvalidArgument { .. })));
/// assert_eq!(PidValidation::default(), PidValidation::Enforced);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PidValidation {
    /// Only whitelisted processes may import (the runtime's default); add
    /// them with `allow_pids`.
    #[default]
    Enforced,
    /// Any process of the same user may import, and no whitelist can be set
    /// (`ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION`,
    /// `ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION`).
    Disabled,
}

impl PidValidation {
    /// The export flag of a shareable handle (`ACL_RT_VMM_EXPORT_FLAG_*`).
    pub(crate) fn vmm_flag(self) -> u64 {
        match self {
            PidValidation::Enforced => sys::ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
            PidValidation::Disabled => sys::ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
        }
    }

    /// The export flag of an IPC key (`ACL_RT_IPC_MEM_EXPORT_FLAG_*`).
    pub(crate) fn ipc_flag(self) -> u64 {
        match self {
            PidValidation::Enforced => sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT,
            PidValidation::Disabled => sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
        }
    }

    /// Refuses a whitelist that cannot be set: an empty one, or one for an
    /// export without validation (the runtime's 207006).
    pub(crate) fn check_whitelist(self, call: Call, pids: &[Pid]) -> Result<Vec<i32>> {
        if self == PidValidation::Disabled {
            return Err(Error::invalid(
                call,
                "pid validation is disabled for this export: every process of the user may import, and no whitelist can be set",
            ));
        }
        if pids.is_empty() {
            return Err(Error::invalid(call, "no pids"));
        }
        Ok(pids.iter().map(|pid| pid.raw()).collect())
    }
}
