//! Raw bindings to MemFabric Hybrid's host API (ABI 1.3): the BM ("big
//! memory") global pool of HBM and DRAM across processes, the TRANS
//! point-to-point transfers, and the common `smem_*` calls.
//!
//! Every bound function is exported at the crate root under its C name with
//! its C signature, the way `libc` exports libc:
//!
//! ```no_run
//! use memfabric_sys::*;
//! // SAFETY: no arguments; the library is loaded on this first call.
//! let version = unsafe { smem_get_abi_version() };
//! assert_eq!(version, SMEM_ABI_VERSION_SUPPORTED);
//! // SAFETY: `flags` is 0, as the library expects.
//! assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
//! ```
//!
//! The library is opened with `dlopen` on the first call (or by
//! [`backend`]): `libmf_hybm_core.so` first, with `RTLD_GLOBAL` (MemFabric's
//! libraries have no RPATH), then `libmf_smem.so` beside it. The search
//! order:
//!
//! 1. `MEMFABRIC_SMEM_LIB`: the `libmf_smem.so` file, and nothing else;
//! 2. `MEMFABRIC_HOME`: `$MEMFABRIC_HOME/lib/libmf_smem.so`;
//! 3. the `lib/` folder of an installed `memfabric_hybrid` Python package
//!    (`pip install memfabric-hybrid==1.3.0`; an unzipped wheel works with
//!    `MEMFABRIC_HOME=<unzipped>/memfabric_hybrid`);
//! 4. the dynamic linker's search (`LD_LIBRARY_PATH`).
//!
//! The loader accepts ABI 1.3 only (`smem_get_abi_version() ==
//! 0x00010003`, [`SMEM_ABI_VERSION_SUPPORTED`]): MemFabric's structs and
//! signatures change between releases, so any other version is refused with
//! [`LoadError::AbiMismatch`], naming the version found and the one
//! supported. Symbols are resolved lazily, on a function's first call; one
//! the loaded library lacks makes that function return
//! [`MEMFABRIC_SYS_NOT_SUPPORTED`] (or its failure value: NULL, `UINT32_MAX`,
//! 0) and [`missing_symbol`] names it, without affecting the others. With no
//! usable library every function fails the same way with
//! [`MEMFABRIC_SYS_NO_BACKEND`], and `smem_get_last_err_msg` says why.
//!
//! `MEMFABRIC_BACKEND=auto|hardware|software` selects the backend (and
//! [`select_backend`] from Rust): `hardware` the real library, `software`
//! the [software fabric](soft), an emulation of the BM API across the
//! processes of one machine, and `auto` (the default) the real library when
//! one is found, otherwise the software fabric.
//!
//! # What the real library does (1.3.0, measured on x86_64 without an NPU)
//!
//! - `smem_get_abi_version()` = 0x00010003; `smem_init(0)` = 0, again 0, and
//!   `smem_init(1)` = 0 too (flags are not checked).
//! - `smem_create_config_store("tcp://127.0.0.1:PORT", 0)` = 0 and listens;
//!   a second call = 0 (a silent OK); `smem_destroy_config_store` stops the
//!   listener before it returns (about 1 s). A busy port gives −1 and a
//!   malformed URL −2000, neither with a last error code or message.
//! - `smem_bm_create2` before `smem_bm_init`: NULL, last code −2008
//!   (`SMEM_NOT_INIT`), last message "smem_bm_create2 failed".
//! - `smem_bm_init` (rank 0 starting the store) completes the store
//!   handshake, then fails the driver check ("the current version of ascend
//!   driver does not support mf!" in the log, after "driver version path is
//!   not a valid real path" for `/etc/ascend_install.info` and
//!   `/usr/local/Ascend/driver/version.info`): −1, last code −1, last message
//!   "init hybm failed, result: -1, flags: 0x0", after about 3 s, and the
//!   store it started is shut down again.
//! - `smem_trans_init` fails at the same driver check with −1 and sets no
//!   last error at all; `smem_trans_create` after it returns NULL with last
//!   code −1 (not −2008) and "smem trans not initialized yet".
//!   `smem_trans_config_init` writes role 1, 120 s, device `0xFFFFFFFF` and
//!   leaves `dataOpType` unwritten.
//! - The last error code and message are per thread, are not reset by a
//!   successful call, and `smem_get_and_clear_last_err_msg` clears the
//!   message only: read them right after the call that failed.
//! - The library logs to **stdout** (TRACE lines included, even after
//!   `smem_set_log_level(3)`), until `smem_set_extern_logger` takes the
//!   lines; `smem_set_log_level` accepts 0..=4.
//! - `libhcom.so` (host RDMA/TCP) cannot be opened by path even after
//!   `libboundscheck.so` is: the latter has no SONAME, so the host
//!   transports need the `lib/` folder on `LD_LIBRARY_PATH`.
//!
//! C enums are `u32` aliases with one constant per enumerator; error codes
//! and flags are constants under their C names. The declarations are
//! written from the project's MemFabric reference (facts only; MemFabric
//! itself is under the Mulan licence and nothing of it is copied here), and
//! every struct's size and field offsets are compile-time assertions. A
//! test (`tests/header_check.rs`) has the C++ compiler check every
//! signature, struct size and a sample of constants against the headers of
//! the installed package (`$MEMFABRIC_HOME/include`), which CI fetches.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

// Bottom to top: `types` and `layout` (the C declarations and their layout
// checks), `error_msg` (this crate's per-thread error), `function_names`,
// `loader` and `backend` (finding, opening and checking the library), then
// `api` and `dispatch` (the list of signatures and the crate-root functions
// generated from it).
mod api;
mod backend;
mod dispatch;
mod error_msg;
mod function_names;
#[cfg(target_pointer_width = "64")]
mod layout;
mod loader;
#[cfg(target_pointer_width = "64")]
pub mod soft;
mod types;

pub use api::*;
pub use backend::{
    Backend, BackendInfo, BackendRequest, ENV_BACKEND, LibraryAttempt, LoadError, backend, select_backend,
};
pub use error_msg::missing_symbol;
pub use function_names::FUNCTION_NAMES;
pub use loader::{ENV_HOME, ENV_LIBRARY};
pub use types::*;
