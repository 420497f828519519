//! Sharing device memory with other processes.
//!
//! Two mechanisms, both limited to processes the exporter whitelists by
//! [`Pid`] (unless exported with [`PidValidation::Disabled`]):
//!
//! - **Physical memory** (VMM): a [`PhysicalAlloc`](crate::vmm::PhysicalAlloc)
//!   is exported with [`PhysicalAlloc::export`](crate::vmm::PhysicalAlloc::export)
//!   as a V1 handle, a V2 DEFAULT handle or a V2 FABRIC handle
//!   ([`ShareKind`]). The [`ExportedHandle`] borrows the allocation; its
//!   [`ShareableHandle`] token is a plain value (text or bytes) that carries
//!   the handle and the size across a pipe, a socket or an environment
//!   variable. The importer turns it into an [`ImportedAlloc`], a distinct
//!   owner that maps like a physical allocation.
//! - **Device buffers** by key: [`DeviceBuf::ipc_export`](crate::DeviceBuf::ipc_export)
//!   gives an [`IpcExport`] (borrowing the buffer) whose [`IpcKey`] another
//!   process opens as an [`IpcImport`], with typed views of the bytes.
//!
//! ```text
//! exporter                                  importer
//! PhysicalAlloc::new
//! physical.export(kind) -> ExportedHandle<'_>
//!                                <- Pid::current() (its bare tgid)
//! export.allow_pids(&[pid])
//! export.token().to_string()     ->  parse::<ShareableHandle>()
//!                                    ImportedAlloc::import(&token, &device)
//!                                    range.map(0, &imported) -> MappedRegion<'_>
//! ```
//!
//! Each side frees its own reference; the memory lives until the last one is
//! freed, so an importer keeps reading after the exporter freed. Importing
//! in the exporting process, importing without being whitelisted, and
//! importing after the exporter freed are refused by the runtime (the codes
//! the software device picks are listed in [Choices where the runtime is silent](crate::guide::runtime_choices)).

mod chunks_descriptor;
mod export;
mod handle;
mod hex;
mod import;
mod import_slots;
mod imported_chunks;
mod ipc_export;
mod ipc_import;
mod ipc_key;
mod owned_export;
mod owned_ipc_export;
mod pid;
pub(crate) mod segment_export;
pub(crate) mod shared_segment;

pub(crate) use chunks_descriptor::describe as describe_chunks;
pub use export::ExportedHandle;
pub use handle::{FABRIC_HANDLE_LEN, ShareKind, ShareableHandle};
pub use import::ImportedAlloc;
pub use imported_chunks::ImportedChunks;
pub use ipc_export::IpcExport;
pub use ipc_import::IpcImport;
pub use ipc_key::IpcKey;
pub use owned_export::OwnedExport;
pub use owned_ipc_export::OwnedIpcExport;
pub use pid::{Pid, PidValidation};
