//! Memory owners: device memory ([`DeviceBuf`]) and page-locked host memory
//! ([`PinnedHostBuf`]).
//!
//! Device memory is never a Rust reference: a [`DeviceBuf`] is a handle, and
//! its bytes move only through checked copies. Element types are bounded by
//! [`bytemuck::Pod`], because device bytes come from outside Rust and any
//! bit pattern must be a valid value.

mod byte_len;
mod cast_error;
mod device_buf;
mod element_cast;
mod pinned_host;
mod policy;
mod query;
pub(crate) mod transfer;
mod view;

pub use cast_error::CastError;
pub use device_buf::DeviceBuf;
pub use pinned_host::PinnedHostBuf;
pub use policy::{AllocCall, MallocPolicy};
pub use query::{AddressRange, PointerAttributes, address_range, pointer_attributes};
pub use view::{DeviceSlice, DeviceSliceMut};
