//! Custom device allocators: a Rust [`DeviceAllocator`] registered as a
//! stream's allocator (`aclrtAllocatorRegister`), which the runtime then
//! asks for the device memory of work on that stream.
//!
//! ```text
//! Arc<dyn DeviceAllocator> ─> AllocatorRegistration::register(&stream, ..)
//!                               (borrows the stream: it cannot be destroyed
//!                                while the allocator is registered)
//! drop(AllocatorRegistration) = aclrtAllocatorUnregister,
//!                               aclrtAllocatorDestroyDesc, release the allocator
//! ```
//!
//! The descriptor (`aclrtAllocatorDesc`) holds `extern "C"` trampolines that
//! find the Rust allocator again from the runtime's object pointer; a panic
//! in the allocator is stopped there (the runtime sees a failed allocation).
//!
//! The stream cannot be destroyed while registered:
//!
//! ```compile_fail,E0505
//! # use ascend::allocator::{AllocatorRegistration, Block, DeviceAllocator};
//! # use ascend::{Device, stream::Stream};
//! # use std::sync::Arc;
//! # struct Never;
//! # unsafe impl DeviceAllocator for Never {
//! #     fn alloc(&self, _: usize) -> Option<Block> { None }
//! #     fn free(&self, _: Block) {}
//! # }
//! let stream = Stream::new(&Device::new(0)?)?;
//! let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
//! stream.destroy()?; // error: cannot move out of `stream` because it is borrowed
//! drop(registration);
//! # Ok::<(), ascend::Error>(())
//! ```

mod block;
mod descriptor;
mod registration;
mod trampolines;

pub use block::{Block, DeviceAllocator};
pub use registration::{AllocatorRegistration, registered_on, registered_on_raw};
