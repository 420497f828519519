//! MemFabric Hybrid, Huawei's global HBM + DRAM pool across processes and
//! machines (feature `fabric`): the safe layer over
//! [`memfabric-sys`](sys).
//!
//! The BM lifecycle, each step a type that borrows the one before, so that
//! the order init → create → join → register → copy → unregister → leave →
//! destroy → uninit is the only one that compiles:
//!
//! | step | Rust | C |
//! |---|---|---|
//! | init / uninit | [`BigMemory::init`] / drop | `smem_bm_init` / `smem_bm_uninit` |
//! | create / destroy | [`BigMemory::create_pool`] → [`GlobalPool`] / drop | `smem_bm_create2` / `smem_bm_destroy` |
//! | join / leave | [`GlobalPool::join`] → [`Member`] / drop, [`Member::leave`] | `smem_bm_join` / `smem_bm_leave` |
//! | global ranges | [`Member::peer_hbm`], [`Member::peer_dram`] → [`GlobalRange`] | `smem_bm_ptr_by_mem_type` |
//! | register / unregister | [`Member::register_device`], [`Member::register_host`] / drop | `smem_bm_register_user_mem` / `smem_bm_unregister_user_mem` |
//! | copy | [`Member::copy`], [`Member::copy_batch`] ([`CopyTo`] gives the type) | `smem_bm_copy`, `smem_bm_copy_batch` |
//! | asynchronous copies | [`Member::scope`] → [`FabricScope`] | `ASYNC_COPY_FLAG`, `smem_bm_wait` |
//! | copies in a stream's order | [`Member::copy_on`], [`Member::copy_batch_on`] inside [`Stream::scope`](crate::stream::Stream::scope) | `SMEM_BM_FLAG_USE_EXTERNAL_STREAM` |
//!
//! ```
//! use ascend::{Device, DeviceBuf, PinnedHostBuf};
//! use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
//! # let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
//! # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
//! let device = Device::new(0)?;
//! let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}"))?;
//! let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
//! let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
//! let member = pool.join()?;
//! let mut kv = DeviceBuf::from_slice(&device, &[1u8; 4096])?;
//! let mut back = PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
//! let kv_side = member.register_device(&mut kv)?;
//! let mut back_side = member.register_host(&mut back)?;
//! let dram = member.peer_dram(member.rank())?.slice(..4096)?;
//! member.copy(kv_side.read(), dram)?; // L2GH
//! member.copy(dram, back_side.write())?; // GH2H
//! // member.copy(kv_side.read(), back_side.write()) does not compile: local to local.
//! assert_eq!(back_side.as_slice(), &[1u8; 4096][..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Owned forms
//!
//! An engine that keeps its pool in a long-lived structure cannot hold a
//! `Member<'p>` next to the pool it borrows. The owned forms keep the same
//! order by ownership: each holds an [`Arc`](std::sync::Arc) of the step
//! before, so the `Arc`s can be dropped in any order and the last owner
//! tears down in the right one. All are `'static + Send + Sync`.
//!
//! | step | owned form | holds | C |
//! |---|---|---|---|
//! | create / destroy | [`OwnedPool::create`] / last owner gone | `Arc<BigMemory>` | `smem_bm_create2` / `smem_bm_destroy` |
//! | join / leave | [`OwnedPool::join`] → [`OwnedMember`] / drop, [`OwnedMember::leave`] | `Arc<OwnedPool>` | `smem_bm_join` / `smem_bm_leave` |
//! | register / unregister | [`OwnedMember::register_device`], [`OwnedMember::register_host`] (by value) / drop, `into_inner` | `Arc<OwnedMember>`, the buffer | `smem_bm_register_user_mem` / `smem_bm_unregister_user_mem` |
//! | copy | [`OwnedMember::copy`], [`OwnedMember::copy_batch`] (the same sides, [`CopyTo`]) | | `smem_bm_copy`, `smem_bm_copy_batch` |
//! | asynchronous copies | [`OwnedMember::transfer`] → [`OwnedTransfer`], [`HeldSides`], [`TransferQueue`] | `Arc<OwnedMember>`, the registrations | `ASYNC_COPY_FLAG`, `smem_bm_wait` |
//!
//! MemFabric does not document whether its calls on one handle may run
//! concurrently: the owned forms serialise every call on a pool's handle
//! ([`OwnedPool`] says how). Failures never free memory a copy may still
//! reach: a transfer whose wait fails leaks its registrations, a
//! registration whose unregistration fails in a drop leaks its buffer
//! (both logged).
//!
//! ```
//! use std::sync::Arc;
//! use ascend::{Device, DeviceBuf};
//! use ascend::fabric::{BigMemory, BmConfig, OwnedMember, OwnedPool, PoolOptions, StoreUrl, Transport};
//! # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
//! # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
//! struct Engine {
//!     fabric: Arc<OwnedMember>, // 'static + Send + Sync
//! }
//! let device = Device::new(0)?;
//! let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
//! let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
//! let pool = Arc::new(OwnedPool::create(bm, 1, &options)?);
//! let engine = Engine { fabric: Arc::new(pool.join()?) };
//! drop(pool); // the member keeps it
//! let kv = engine.fabric.register_device(DeviceBuf::from_slice(&device, &[4u8; 4096])?)?;
//! let mut offload = engine.fabric.transfer();
//! let hbm = engine.fabric.peer_hbm(0)?.slice(..4096)?;
//! offload.hold(kv, |kv, queue| queue.copy(kv.read(), hbm))?; // L2G, queued
//! let kv = offload.wait()?.pop().expect("held").into_inner()?; // waited; the buffer back
//! assert_eq!(kv.to_vec()?, [4u8; 4096]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Underneath: loading and checking the library ([`library`]), `smem_init`
//! ([`init`]), and [`FabricError`], which turns the library's return codes
//! and last error message into a typed error, telling apart a call made
//! before initialisation ([`FabricError::NotInitialized`], code −2008) and
//! a host without the Ascend driver ([`FabricError::DriverMissing`]). The
//! raw functions stay reachable as [`sys`], and [`check`] and
//! [`FabricError::last`] turn their results into this module's errors:
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

mod big_memory;
mod bm_config;
mod copy;
mod error;
mod handle;
mod library_log;
mod member;
mod owned_member;
mod owned_pool;
mod owned_registration;
mod owned_transfer;
mod pool;
mod registration;
mod scope;
mod store_security;
mod store_url;
mod stream_copy;

pub use big_memory::BigMemory;
pub use bm_config::BmConfig;
pub use copy::{CopyTo, Side};
pub use error::{FabricError, ascend_driver_installed};
pub use member::{Dram, GlobalRange, Hbm, MemKind, Member};
pub use owned_member::OwnedMember;
pub use owned_pool::OwnedPool;
pub use owned_registration::{OwnedRegisteredDevice, OwnedRegisteredHost, RegisterError, UnregisterError};
pub use owned_transfer::{HeldSides, OwnedRegistration, OwnedTransfer, TransferQueue, TransferWaitError};
pub use pool::{GlobalPool, PoolOptions, Transport};
pub use registration::{DeviceRead, DeviceWrite, HostRead, HostWrite, RegisteredDevice, RegisteredHost};
pub use scope::FabricScope;
pub use store_security::{StoreSecurity, StoreTls};
pub use store_url::{StoreScheme, StoreUrl};

/// The raw bindings ([`memfabric_sys`]), for what this module does not wrap
/// yet.
pub use memfabric_sys as sys;

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
