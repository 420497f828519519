//! Memory owners: device memory ([`DeviceBuf`]), page-locked host memory
//! ([`PinnedHostBuf`]) and managed memory, reachable from both ([`ManagedBuf`]).
//!
//! Device memory is never a Rust reference: a [`DeviceBuf`] is a handle, and
//! its bytes move only through checked copies. Element types are bounded by
//! [`bytemuck::Pod`], because device bytes come from outside Rust and any
//! bit pattern must be a valid value.
//!
//! **Interop with sub-allocators and operator libraries.** A buffer gives
//! up its allocation with [`DeviceBuf::into_raw`] and takes one over with
//! [`DeviceBuf::from_raw`]; [`DeviceBuf::cast`] and the views' `cast`
//! reinterpret the bytes as another `Pod` type (length and alignment
//! checked); views split and narrow without giving up their lifetime
//! ([`DeviceSliceMut::split_at_mut`], [`DeviceSliceMut::into_slice_mut`]).
//! A framework's own block type implements [`DeviceStorage`] (and
//! [`DeviceStorageMut`]) to be used wherever a [`DeviceBuf`] is: typed
//! views of it ([`DeviceSlice::from_storage`]), owned transfers and IPC
//! export.

pub(crate) mod byte_len;
mod cache;
mod cast_error;
mod device_buf;
mod element_cast;
pub(crate) mod location;
pub(crate) mod pinned_host;
mod policy;
mod query;
mod storage;
pub(crate) mod transfer;
mod view;

pub use crate::managed::{ManagedAdvice, ManagedAttributes, ManagedBuf, ManagedLocation};
pub use cache::{CacheOp, MemTypes, check_mem_type};
pub use cast_error::CastError;
pub use device_buf::DeviceBuf;
pub(crate) use location::MemLocation;
pub use pinned_host::PinnedHostBuf;
pub use policy::{AllocCall, MallocPolicy};
pub use query::{AddressRange, PointerAttributes, address_range, pointer_attributes};
pub use storage::{DeviceStorage, DeviceStorageMut};
pub use view::{DeviceSlice, DeviceSliceMut};
