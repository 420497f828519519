//! [`Block`] and the [`DeviceAllocator`] trait.

use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

/// One piece of device memory a [`DeviceAllocator`] hands to the runtime.
///
/// It carries the device address the runtime will use, the size the
/// allocator gave, and a free-form `tag` the allocator may use to find its
/// own bookkeeping again when the block comes back to
/// [`DeviceAllocator::free`]. This crate never dereferences the address.
#[derive(PartialEq, Eq, Hash)]
pub struct Block {
    address: NonNull<c_void>,
    size: usize,
    tag: usize,
}

// SAFETY: an address value and two integers; never dereferenced here.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

impl Block {
    /// A block of `size` bytes at device address `address`, tag 0.
    #[must_use]
    pub fn new(address: NonNull<c_void>, size: usize) -> Self {
        Self { address, size, tag: 0 }
    }

    /// The same block with `tag` attached.
    #[must_use]
    pub fn with_tag(mut self, tag: usize) -> Self {
        self.tag = tag;
        self
    }

    /// The device address.
    pub fn address(&self) -> NonNull<c_void> {
        self.address
    }

    /// The size in bytes the allocator gave.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The allocator's tag.
    pub fn tag(&self) -> usize {
        self.tag
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Block({:#x}, {} bytes, tag {})",
            self.address.as_ptr() as usize,
            self.size,
            self.tag
        )
    }
}

/// A custom device-memory allocator the runtime can use for work on a
/// stream (registered with
/// [`AllocatorRegistration`](super::AllocatorRegistration)).
///
/// The runtime calls it from whichever thread runs the work, hence
/// `Send + Sync`. A panic inside a method does not cross into the runtime:
/// it is caught and logged, and the runtime sees a failed allocation (NULL)
/// or a free that did nothing.
///
/// # Safety
///
/// Like [`GlobalAlloc`](std::alloc::GlobalAlloc), this trait is `unsafe`
/// to implement, because the runtime trusts every block it receives and
/// lets the device write there. An implementation must return only blocks
/// whose address is device memory usable by the stream's device for at
/// least the requested `size` bytes, not handed out again and kept valid
/// until the block comes back through [`DeviceAllocator::free`].
pub unsafe trait DeviceAllocator: Send + Sync {
    /// Allocates at least `size` bytes; `None` when it cannot.
    fn alloc(&self, size: usize) -> Option<Block>;

    /// Allocates at least `size` bytes, preferably at device address `hint`
    /// (`aclrtAllocatorAllocAdviseFunc`). The default ignores the hint.
    fn alloc_advise(&self, size: usize, hint: Option<NonNull<c_void>>) -> Option<Block> {
        let _ = hint;
        self.alloc(size)
    }

    /// Takes back a block this allocator returned.
    fn free(&self, block: Block);
}
