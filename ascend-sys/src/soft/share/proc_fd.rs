//! Opening another process's `memfd` through `/proc/<pid>/fd/<fd>`.
//!
//! The kernel lets a process open another's file descriptors through
//! `/proc` only when it may inspect that process (the same user, as for
//! reading its memory), so sharing works between processes of one user
//! only — the rule the driver enforces on hardware with its own checks.
//! Nothing is ever created in a file system: a `memfd` has no name there,
//! and the `/proc` entry disappears with the exporter's descriptor.
//!
//! Before opening, the link's target is checked: it must be a `memfd` the
//! software device created with the expected name, so a stale handle whose
//! descriptor number was reused for something else (a pipe, a socket, a
//! device) is never opened. The caller then checks the header's magic and
//! token.

use rustix::fd::OwnedFd;
use rustix::fs::{FileType, Mode, OFlags, fstat};
use rustix::io::Errno;

/// Why another process's descriptor could not be opened.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The process or descriptor does not exist, or is not what the handle
    /// names (the export is gone).
    Gone(String),
    /// The kernel refused: the process belongs to another user.
    Denied(String),
}

/// This process's id.
pub(crate) fn own_pid() -> u32 {
    rustix::process::getpid().as_raw_nonzero().get() as u32
}

/// Opens descriptor `fd` of process `pid` for reading and writing, if it is
/// a `memfd` named `ascend-soft-<name>`; returns it with its size.
pub(crate) fn open(pid: u32, fd: u32, name: &str) -> Result<(OwnedFd, u64), Refusal> {
    let path = format!("/proc/{pid}/fd/{fd}");
    let classify = |what: &str, error: Errno| match error {
        Errno::ACCESS | Errno::PERM => Refusal::Denied(format!(
            "process {pid} belongs to another user (cannot {what} {path}: {error}); memory is shared between processes of one user only"
        )),
        _ => Refusal::Gone(format!("{path} cannot be {what}: {error}")),
    };
    let target = rustix::fs::readlink(path.as_str(), Vec::new()).map_err(|error| classify("read", error))?;
    let expected = format!("/memfd:ascend-soft-{name}");
    if !target.to_bytes().starts_with(expected.as_bytes()) {
        return Err(Refusal::Gone(format!(
            "{path} is {}, not memory the software device exported",
            target.to_string_lossy()
        )));
    }
    let flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    let file = rustix::fs::open(path.as_str(), flags, Mode::empty()).map_err(|error| classify("opened", error))?;
    let stat = fstat(&file).map_err(|error| Refusal::Gone(format!("{path}: fstat failed: {error}")))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(Refusal::Gone(format!("{path} is not a memory file")));
    }
    Ok((file, stat.st_size as u64))
}
