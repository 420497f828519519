//! Memory owners: device memory ([`DeviceBuf`]) and page-locked host memory
//! ([`PinnedHostBuf`]).
//!
//! Device memory is never a Rust reference: a [`DeviceBuf`] is a handle, and
//! its bytes move only through checked copies. Element types are bounded by
//! [`bytemuck::Pod`], because device bytes come from outside Rust and any
//! bit pattern must be a valid value.

mod byte_len;
mod device_buf;
mod pinned_host;
mod policy;
pub(crate) mod transfer;
mod view;

pub use device_buf::DeviceBuf;
pub use pinned_host::PinnedHostBuf;
pub use policy::MallocPolicy;
pub use view::{DeviceSlice, DeviceSliceMut};
