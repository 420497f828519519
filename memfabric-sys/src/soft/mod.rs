//! The software fabric: an emulation of MemFabric's BM API across the
//! processes of one machine, selected with `MEMFABRIC_BACKEND=software` (or
//! by `auto` when no real library is found). Every bound function keeps its
//! C signature; the ones not emulated yet (TRANS, `smem_bm_extend_local_mem`
//! and the store's high-availability calls) return
//! [`MEMFABRIC_SYS_NOT_SUPPORTED`](crate::MEMFABRIC_SYS_NOT_SUPPORTED) with a
//! last error message naming them.
//!
//! # What it emulates
//!
//! - **The config store**: a TCP server on loopback (`tcp://127.0.0.1:PORT`
//!   or `tcp://[::1]:PORT`), started by `smem_create_config_store` (a second
//!   call for the same URL is a silent OK; `smem_destroy_config_store` ends
//!   its threads and frees the port before returning) or inside
//!   `smem_bm_init` (see below). It speaks a line protocol of this crate's
//!   own (one request line, one answer line: `HELLO`, `PUT`, `GET`,
//!   `RANK`, `PAGE`, `LEAVE`), assigns ranks, knows the world size, and holds each
//!   rank's published segment info. A rank keeps its connection open; one
//!   that closes without `LEAVE` is a rank that died.
//! - **Who serves the store**: with `startConfigStoreServer` (the
//!   default), a process given `rankId` 0, or any process when
//!   `autoRanking` is on, tries to bind the store's port; the first to bind
//!   it serves, the others connect. With auto-ranking the serving process is
//!   rank 0 and the others get ranks in the order they join.
//! - **Lifecycle**: `smem_bm_init` is a process singleton (a second call
//!   returns OK without checking its arguments), `smem_bm_get_rank_id` is
//!   process-global (`UINT32_MAX` before init), `smem_bm_create`/`create2`
//!   return NULL with last code −2008 before init and −2000 for bad
//!   arguments, `smem_bm_uninit` destroys every BM, leaves the world and
//!   stops the store it served. The last error code and message are per
//!   thread and survive successful calls.
//! - **Memory**: each rank contributes `localDRAMSize` bytes of host memory
//!   (a `memfd`, mapped by peers through `/proc/<pid>/fd/<fd>`, so between
//!   processes of one user only) and `localHBMSize` bytes of device memory
//!   on the software device of `ascend-sys` (`aclrtMalloc` on the device of
//!   `smem_bm_init`, shared by `aclrtIpcMemGetExportKey` without a pid
//!   whitelist and imported by peers with `aclrtIpcMemImportByKey`), so
//!   `smem_bm_gva_to_va(LOCAL_DEVICE)` gives a real software-device address.
//!   `smem_bm_create` publishes a rank's segments; `smem_bm_join` waits (up
//!   to `controlOperationTimeout`) until every rank of the world has
//!   published its own; a peer's segments are opened on first use.
//! - **GVA layout**: host GVAs from `0x2000_0000_0000`, device GVAs from
//!   `0x2800_0000_0000` (the real library's bases); rank `r`'s segment at
//!   `base + r × stride`, the stride being the local size rounded up to
//!   2 MiB; every rank of a BM must contribute the same sizes. GVAs are
//!   numbers, never mapped: translate this rank's with `smem_bm_gva_to_va`.
//! - **Copies**: every copy type with the real validation (see
//!   `smem_bm_copy`), the bytes moved by the software device's
//!   `aclrtMemcpy` (or `aclrtMemcpyAsync` on `params->stream` with
//!   `SMEM_BM_FLAG_USE_EXTERNAL_STREAM` together with `ASYNC_COPY_FLAG`;
//!   without it the stream is ignored and the copy is synchronous, as in
//!   MemFabric's source). `ASYNC_COPY_FLAG` alone queues the copy for the
//!   calling thread: only that thread's `smem_bm_wait` moves its bytes
//!   (MemFabric waits for the calling thread's own stream only), and one
//!   whose registered local side was unregistered meanwhile fails there.
//! - **Registration**: the same address and size again is OK, another size
//!   −1, unregistering an unknown address OK.
//! - **A rank that dies or leaves** (its store connection closes without
//!   leaving, or it calls `smem_bm_uninit`): a copy touching its range
//!   waits `controlOperationTimeout`, then fails with hybm's `BM_TIMEOUT`
//!   (−7), which the real library passes through from its core; copies
//!   elsewhere go on. The store shares a page of rank states with the
//!   ranks (a `memfd` they map), written before it answers the request
//!   that changed a state, so a copy checks its peers with a load, not a
//!   round trip; a batch waits once for a gone rank, not once per entry.
//!
//! - **Batches**: every entry is attempted; when some fail and others are
//!   moved the batch returns `SMEM_PARTIAL_FAILED` (−2012) and the last
//!   message names the failed entries; when all fail, the first failure's
//!   code.
//! - **Fault injection** ([`inject_fault`]): a call that fails with a
//!   chosen code, a call that times out, a batch entry that fails.
//!
//! Not emulated yet: `dynamicWorldSize`, TLS.
//!
//! Layers, bottom up: `core` (last error, URLs, GVA arithmetic), `store`
//! (protocol, server, client), `memory` (DRAM and HBM segments), `bm` (the
//! world, BM objects, peers), `copy`, `entry` (the C entry points), and
//! on top `direct` (the entry points by name) and `live` (what is alive,
//! for leak checks).

pub(crate) mod bm;
pub(crate) mod copy;
pub(crate) mod core;
pub mod direct;
pub(crate) mod entry;
pub(crate) mod faults;
pub mod live;
pub(crate) mod memory;
pub(crate) mod store;

pub use faults::{Fault, FaultError, armed_faults, clear_faults, inject_fault};
pub use live::{FabricLive, live};
