//! Safe Rust SDK for Huawei Ascend NPU memory management (AscendCL / CANN).
//!
//! The package is `ascend-rs`; its library is named `ascend`. It is not on
//! crates.io yet, so depend on a clone of its repository, by path (cargo
//! finds `ascend-sys` beside it) or by git at a fixed commit:
//!
//! ```toml
//! [dependencies]
//! ascend-rs = { path = "../ascend-rs" }
//! # or: ascend-rs = { git = "file:///home/me/src/ascend-rs", rev = "<commit>" }
//! ```
//!
//! This crate wraps the raw [`ascend_sys`] API in owned, typed handles:
//!
//! | CPU concept            | Ascend concept           | This crate         |
//! |------------------------|--------------------------|--------------------|
//! | `Vec<T>` on the heap   | device memory            | [`DeviceBuf<T>`]   |
//! | `Vec<T>` in locked RAM | page-locked host memory  | [`PinnedHostBuf<T>`] |
//! | a CPU core             | a device, current per thread | [`Device`]     |
//!
//! Every call runs on the backend `ascend_sys` selected: the real
//! `libascendcl.so` when present, otherwise the in-tree software device, so
//! the examples below run anywhere:
//!
//! ```
//! use ascend::{Device, DeviceBuf};
//! let device = Device::new(0)?;
//! let data: Vec<f32> = (0..1024).map(|i| i as f32).collect();
//! let on_device = DeviceBuf::from_slice(&device, &data)?;
//! assert_eq!(on_device.to_vec()?, data);
//! # Ok::<(), ascend::Error>(())
//! ```
//!
//! Errors are values: nothing in this crate panics on a runtime failure, and
//! every owner frees on `Drop` (logging a failure through the `log` facade)
//! or through an explicit `free` that returns the error.
//!
//! # The guide
//!
//! | Page | What it covers |
//! |---|---|
//! | [Concepts](guide::concepts) | memory kinds, devices and threads, the failure model, the VMM lifecycle in types, owned forms, errors and destructors |
//! | [AscendCL → Rust](guide::acl_to_rust) | every bound AscendCL function and the item of this crate that calls it |
//! | [Backend selection](guide::backend_selection) | the real `libascendcl.so` or the software device, the search order, missing symbols |
//! | [The software device](guide::software_device) | what it emulates, how to configure, inspect and inject faults |
//! | [Choices where the runtime is silent](guide::runtime_choices) | the error codes chosen where the closed driver decides |
//! | [Memory pools, for a torch_npu user](guide::pools) | the caching device pool and the pinned host pool, with torch_npu's knobs mapped to these |
//! | [Testing your own code](guide::testing) | the `testing` feature: the software device in CI, property tests, leak and misuse checks |
//! | [Performance](guide::performance) | benchmark ratios against the machine's limits |
//!
//! # Where to start
//!
//! - Device memory: [`DeviceBuf`], its views [`DeviceSlice`] /
//!   [`DeviceSliceMut`], and pinned host memory [`PinnedHostBuf`].
//! - Asynchronous work: [`Stream`], [`Event`], [`Stream::scope`] and
//!   [`stream::Ordered`].
//! - Virtual memory: [`vmm::VirtualRange`], [`vmm::PhysicalAlloc`], and the
//!   owned forms [`vmm::OwnedMapping`], [`vmm::ExpandableSegment`] and
//!   [`vmm::SharedSegment`].
//! - Sharing between processes: [`share`]. Memory pools: [`pool`].
//! - Which backend runs the calls: [`backend()`]; errors: [`Error`].
//!
//! # Cargo features
//!
//! All are off by default.
//!
//! - `testing`: the module `ascend::testing`, proptest strategies and
//!   leak and misuse checks for testing your own code on the software
//!   device (adds `proptest`; see the [testing guide](guide::testing)).
//! - `torch-snapshot`: `DevicePool::torch_snapshot` and
//!   `write_torch_snapshot`, the pool's segments and memory history as the
//!   pickle PyTorch's memory visualizer opens (adds `serde` and
//!   `serde-pickle`). The JSON and SVG snapshots need no feature.
//! - `fabric`: the module `ascend::fabric`, a first safe layer over
//!   MemFabric Hybrid's global memory pool (adds `memfabric-sys`, which
//!   opens the real library at run time).
//!
//! Element types are [`bytemuck::Pod`]; for `f16` and `bf16`, add the
//! `half` crate with its feature `bytemuck`
//! (`half = { version = "2", features = ["bytemuck"] }`).
//!
//! # Logging
//!
//! The crate logs through the [`log`](https://docs.rs/log) facade: the
//! backend choice at `info`, failures in `Drop` at `warn` or `error`, and
//! every allocation, free, map and unmap at `trace`. Install any logger
//! (for example `env_logger`, then `RUST_LOG=ascend=trace`) to see them.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
// docs.rs builds with `--cfg docsrs` (see `[package.metadata.docs.rs]`) and
// marks the items that need a cargo feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod allocator;
mod backend;
mod byte_units;
mod device;
mod device_info;
mod device_resources;
mod error;
mod error_code;
mod error_code_names;
#[cfg(feature = "fabric")]
#[cfg_attr(docsrs, doc(cfg(feature = "fabric")))]
pub mod fabric;
pub mod guide;
pub mod host_register;
pub mod info;
mod managed;
pub mod mbuf;
pub mod memory;
pub mod pool;
mod runtime;
pub mod share;
pub mod stream;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod vmm;

pub use ascend_sys as sys;
pub use backend::{Backend, BackendInfo, backend, build_toolkit};
/// `bytemuck`, re-exported: the element types of buffers and copies are
/// [`bytemuck::Pod`] (plain bytes, any bit pattern valid). Your own element
/// type derives it through this re-export, with no `bytemuck` dependency of
/// your own; the `#[bytemuck(crate = ...)]` line tells the derive where it is:
///
/// ```
/// use ascend::bytemuck::{Pod, Zeroable};
/// use ascend::{Device, DeviceBuf};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
/// #[bytemuck(crate = "ascend::bytemuck")]
/// #[repr(C)]
/// struct Rgba {
///     r: f32,
///     g: f32,
///     b: f32,
///     a: f32,
/// }
///
/// let device = Device::new(0)?;
/// let pixels = [Rgba { r: 1.0, g: 0.5, b: 0.25, a: 1.0 }; 3];
/// let on_device = DeviceBuf::from_slice(&device, &pixels)?;
/// assert_eq!(on_device.to_vec()?, pixels);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// A type that is not `Pod` (a `String`, a struct with padding, a
/// reference) is refused at compile time with one error, "the trait bound
/// `...: Pod` was not satisfied", at the call that needs it.
pub use bytemuck;
pub use device::{Device, MemoryUsage};
pub use device_info::{DeviceAttribute, DeviceStatus, PriorityRange, Utilization};
pub use device_resources::CoreKind;
pub(crate) use error::Call;
pub use error::{Error, ExternalSource, Result, check};
pub use error_code::ErrorCode;
pub use host_register::{AlignedHostBuf, HostRegistration};
pub use memory::{DeviceBuf, DeviceSlice, DeviceSliceMut, MallocPolicy, PinnedHostBuf};
pub use runtime::Runtime;
pub use stream::{Event, RecordMode, Stream, WaitMode};

#[cfg(test)]
mod tests {
    /// The crate documentation maps every bound function.
    #[test]
    fn the_function_map_covers_every_bound_function() {
        let map = include_str!("../docs/acl-to-rust.md");
        for name in ascend_sys::FUNCTION_NAMES {
            assert!(
                map.contains(&format!("| `{name}` |")),
                "{name} is missing from docs/acl-to-rust.md"
            );
        }
        assert_eq!(map.matches("\n| `acl").count(), ascend_sys::FUNCTION_NAMES.len());
    }
}
