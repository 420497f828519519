//! The software device: an in-process emulator of the AscendCL memory
//! runtime's *rules*, used when no `libascendcl.so` is present (or when
//! `ASCEND_BACKEND=software`).
//!
//! It implements the same C functions as the real library, so code above it
//! cannot tell the difference except through [`crate::backend`]:
//!
//! - device memory is sparse physical memory (a `memfd`) reached through the
//!   device's own mapping, and device addresses are a separate range
//!   reserved `PROT_NONE`, so a host dereference of a device pointer faults
//!   as it does on hardware;
//! - every argument and state rule it emulates returns the real runtime's
//!   error code, and `aclGetRecentErrMsg` says which argument broke which
//!   rule;
//! - a function it does not emulate yet returns `ACL_ERROR_API_NOT_SUPPORT`
//!   (and says so) rather than pretending to succeed.
//!
//! This module's Rust API is for tests: settings ([`configure`], or the
//! environment variables [`ENV_DEVICE_COUNT`] and [`ENV_DEVICE_MEMORY`]),
//! and introspection ([`live`], [`leak_report`], [`recent_error`];
//! [`live_since`] and [`MisuseWatch`] for what appeared after a moment).
//!
//! ```
//! use ascend_sys::*;
//! ascend_sys::select_backend(BackendRequest::Software).unwrap();
//! let mut ptr = std::ptr::null_mut();
//! unsafe {
//!     assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
//!     let before = soft::live().device_allocations;
//!     assert_eq!(aclrtMalloc(&mut ptr, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
//!     assert!(soft::live().device_allocations >= before + 1);
//!     assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
//!     // Freeing twice is refused, with a message naming the pointer.
//!     assert_eq!(aclrtFree(ptr), ACL_ERROR_RT_PARAM_INVALID);
//!     assert!(soft::recent_error().unwrap().contains("not a live device allocation"));
//!     assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
//! }
//! ```

mod allocator_desc;
mod check;
mod compose;
mod context;
mod core;
mod device_mem;
pub mod direct;
pub(crate) mod entry;
mod host_mem;
mod host_register;
mod introspect;
mod mbuf;
mod peer;
mod process;
mod res_limit;
mod share;
mod started;
mod vmm;

pub use self::core::config::{Config, ConfigError, ENV_DEVICE_COUNT, ENV_DEVICE_MEMORY, ENV_GRANULARITY, MAX_DEVICES};
pub use self::core::resource::{LiveResource, ResourceKind};
pub use self::core::sequence::sequence_now;
pub use check::fault_injection::{
    ENV_FAULTS, FaultError, armed_faults, clear_faults, inject_fault, inject_missing_symbol,
};
pub(crate) use check::fault_injection::{injected_fault, take as take_fault};
pub use check::misuse_log::{Misuse, MisuseWatch, misuse, take_misuse};
pub use check::sanitize::{
    Checks, ENV_SANITIZE, ENV_SANITIZE_EXITCODE, Summary as SanitizerSummary, sanitize_opaque, sanitizer_checks,
    sanitizer_exit_code, sanitizer_summary, sanitizer_tracked_runs, start_sanitizer, stop_sanitizer,
};
pub use compose::sanitize_ranges::sanitize_host_access;
pub use introspect::{Live, leak_report, live, live_since};
pub(crate) use started::startup_problem;

/// Sets the software device's configuration. It takes effect when the
/// software device starts (on the first call routed to it); calling it after
/// that succeeds only if the configuration is the same.
///
/// # Errors
///
/// [`ConfigError::OutOfRange`] for a bad value; [`ConfigError::AlreadyStarted`]
/// when the device already runs with another configuration.
pub fn configure(config: Config) -> Result<(), ConfigError> {
    started::configure(config)
}

/// The configuration in force (`None` before the software device starts).
pub fn active_config() -> Option<Config> {
    started::core_if_started().map(|core| core.config.clone())
}

/// The message `aclGetRecentErrMsg` would return on this thread, as a Rust
/// string (any backend).
pub fn recent_error() -> Option<String> {
    crate::error_msg::pending_text()
}
