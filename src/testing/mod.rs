//! Tools for testing code built on this crate, with no NPU: `proptest`
//! strategies, a reusable lifecycle-operation vocabulary, and a harness
//! that runs code on the software device and fails when it leaks or
//! misuses the runtime. Enabled by the cargo feature `testing`:
//!
//! ```toml
//! [dev-dependencies]
//! ascend-rs = { version = "0.1", features = ["testing"] }
//! proptest = "1"
//! ```
//!
//! - [`strategies`]: physical-memory properties, granule-multiple sizes
//!   and access grants the runtime accepts.
//! - [`LifecycleOp`] / [`lifecycle_ops`]: random VMM lifecycles (reserve,
//!   allocate, map, set access, read, write, retain, export, unmap, free,
//!   release) as indices into what is alive, so that every drop order
//!   occurs; a driver interprets them against the code under test.
//! - [`on_software_device`] / [`LeakCheck`]: run a closure on the software
//!   device and assert that nothing it created is still live (by address
//!   or handle, not by counts) — runtime resources, and blocks of
//!   [`DevicePool`](crate::pool::DevicePool)s and
//!   [`PinnedPool`](crate::pool::PinnedPool)s ([`PoolBlockLeak`]) — and
//!   that no misuse was detected.
//! - [`on_software_device_sanitized`] / [`start_sanitizer`]: the same,
//!   with the stream-hazard sanitizer on, so that a race between streams,
//!   a read of unwritten device memory or a synchronisation that orders
//!   nothing fails the test.
//!
//! The guide page [Testing your own code](crate::guide::testing) walks
//! through testing a small allocator with these tools; its examples run as
//! this crate's doctests.

mod counts;
mod guard;
mod ops;
mod sanitizer;
pub mod strategies;

pub use crate::pool::watch::{PoolBlockLeak, PoolKind};
pub use counts::changed_counts;
pub use guard::{LeakCheck, LeakCheckError, on_software_device};
pub use ops::{Disposal, LifecycleOp, MapAccess, OpBounds, lifecycle_op, lifecycle_ops};
/// The `proptest` this module's strategies are built with.
pub use proptest;
pub use sanitizer::{
    SanitizerChecks, SanitizerSummary, on_software_device_sanitized, sanitizer_summary, start_sanitizer,
};
