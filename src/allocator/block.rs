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
///
/// ```
/// use ascend::allocator::Block;
/// use ascend::{Device, DeviceBuf};
/// use std::ptr::NonNull;
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::<u8>::zeroed(&device, 256)?;
/// let address = NonNull::new(buf.as_raw()).expect("a non-empty buffer has an address");
/// let block = Block::new(address, 256).with_tag(3); // tag: e.g. an index into the allocator's table
/// assert_eq!((block.address(), block.size(), block.tag()), (address, 256, 3));
/// assert!(format!("{block:?}").ends_with("256 bytes, tag 3)"));
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::allocator::Block;
    /// use ascend::{Device, DeviceBuf};
    /// use std::ptr::NonNull;
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let address = NonNull::new(buf.as_raw()).expect("a non-empty buffer has an address");
    /// let block = Block::new(address, buf.byte_len());
    /// assert_eq!((block.size(), block.tag()), (4096, 0));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(address: NonNull<c_void>, size: usize) -> Self {
        Self { address, size, tag: 0 }
    }

    /// The same block with `tag` attached.
    #[must_use]
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::allocator::Block;
    /// use ascend::{Device, DeviceBuf};
    /// use std::ptr::NonNull;
    /// let device = Device::new(0)?;
    /// let slots: Vec<DeviceBuf<u8>> = (0..3).map(|_| DeviceBuf::zeroed(&device, 64)).collect::<Result<_, _>>()?;
    /// // Tag each block with its slot, to find it again in `free`.
    /// let address = NonNull::new(slots[2].as_raw()).expect("non-empty");
    /// let block = Block::new(address, 64).with_tag(2);
    /// assert_eq!(slots[block.tag()].as_raw(), block.address().as_ptr());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_tag(mut self, tag: usize) -> Self {
        self.tag = tag;
        self
    }

    /// The device address.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::allocator::Block;
    /// use ascend::{Device, DeviceBuf};
    /// use std::ptr::NonNull;
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4])?;
    /// let block = Block::new(NonNull::new(buf.as_raw()).expect("non-empty"), 4);
    /// // The address is device memory: look it up, never dereference it.
    /// let range = ascend::memory::address_range(block.address().as_ptr())?;
    /// assert_eq!(range.base, buf.as_raw() as usize);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAllocatorSetGetAddrFromBlockFuncToDesc")]
    pub fn address(&self) -> NonNull<c_void> {
        self.address
    }

    /// The size in bytes the allocator gave.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::allocator::Block;
    /// use ascend::{Device, DeviceBuf};
    /// use std::ptr::NonNull;
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u8>::zeroed(&device, 1 << 16)?;
    /// // An allocator may give more than asked (here, a whole 64 KiB buffer).
    /// let block = Block::new(NonNull::new(buf.as_raw()).expect("non-empty"), buf.byte_len());
    /// assert!(block.size() >= 1000);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// The allocator's tag.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::allocator::Block;
    /// use std::ptr::NonNull;
    /// let address = NonNull::<u64>::dangling().cast(); // only carried, never used here
    /// assert_eq!(Block::new(address, 8).tag(), 0);
    /// assert_eq!(Block::new(address, 8).with_tag(42).tag(), 42);
    /// ```
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
///
/// # Examples
///
/// An allocator that lends one preallocated buffer, called here as the
/// runtime would call it:
///
/// ```
/// use ascend::allocator::{Block, DeviceAllocator};
/// use ascend::{Device, DeviceBuf};
/// use std::ptr::NonNull;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// /// Lends one preallocated buffer, to one holder at a time.
/// struct OneBlock {
///     buf: DeviceBuf<u8>,
///     lent: AtomicBool,
/// }
///
/// // SAFETY: the one block is `buf`'s memory, which lives as long as the
/// // allocator; it is lent to one holder at a time, at most its size.
/// unsafe impl DeviceAllocator for OneBlock {
///     fn alloc(&self, size: usize) -> Option<Block> {
///         if size > self.buf.byte_len() || self.lent.swap(true, Ordering::AcqRel) {
///             return None;
///         }
///         Some(Block::new(NonNull::new(self.buf.as_raw())?, size))
///     }
///     fn free(&self, _block: Block) {
///         self.lent.store(false, Ordering::Release);
///     }
/// }
///
/// let device = Device::new(0)?;
/// let arena = OneBlock { buf: DeviceBuf::zeroed(&device, 1 << 20)?, lent: AtomicBool::new(false) };
/// let block = arena.alloc(4096).expect("the buffer is free");
/// assert!(arena.alloc(4096).is_none()); // lent out
/// arena.free(block);
/// assert!(arena.alloc(2 << 20).is_none()); // larger than the buffer
/// assert_eq!(arena.alloc(100).map(|block| block.size()), Some(100));
/// # Ok::<(), ascend::Error>(())
/// ```
pub unsafe trait DeviceAllocator: Send + Sync {
    /// Allocates at least `size` bytes; `None` when it cannot.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # use ascend::{Device, DeviceBuf};
    /// # use std::ptr::NonNull;
    /// # use std::sync::atomic::{AtomicBool, Ordering};
    /// #
    /// # /// Lends one preallocated buffer, to one holder at a time.
    /// # struct OneBlock {
    /// #     buf: DeviceBuf<u8>,
    /// #     lent: AtomicBool,
    /// # }
    /// #
    /// # // SAFETY: the one block is `buf`'s memory, which lives as long as the
    /// # // allocator; it is lent to one holder at a time, at most its size.
    /// # unsafe impl DeviceAllocator for OneBlock {
    /// #     fn alloc(&self, size: usize) -> Option<Block> {
    /// #         if size > self.buf.byte_len() || self.lent.swap(true, Ordering::AcqRel) {
    /// #             return None;
    /// #         }
    /// #         Some(Block::new(NonNull::new(self.buf.as_raw())?, size))
    /// #     }
    /// #     fn free(&self, _block: Block) {
    /// #         self.lent.store(false, Ordering::Release);
    /// #     }
    /// # }
    /// # let device = Device::new(0)?;
    /// # let arena = OneBlock { buf: DeviceBuf::zeroed(&device, 1 << 20)?, lent: AtomicBool::new(false) };
    /// // `arena` lends one buffer of 1 MiB (see `DeviceAllocator`).
    /// let block = arena.alloc(1000).expect("free");
    /// assert!(block.size() >= 1000);
    /// assert!(arena.alloc(1000).is_none()); // cannot: `None`, never a panic
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAllocatorSetAllocFuncToDesc")]
    fn alloc(&self, size: usize) -> Option<Block>;

    /// Allocates at least `size` bytes, preferably at device address `hint`
    /// (`aclrtAllocatorAllocAdviseFunc`). The default ignores the hint.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # use ascend::{Device, DeviceBuf};
    /// # use std::ptr::NonNull;
    /// # use std::sync::atomic::{AtomicBool, Ordering};
    /// #
    /// # /// Lends one preallocated buffer, to one holder at a time.
    /// # struct OneBlock {
    /// #     buf: DeviceBuf<u8>,
    /// #     lent: AtomicBool,
    /// # }
    /// #
    /// # // SAFETY: the one block is `buf`'s memory, which lives as long as the
    /// # // allocator; it is lent to one holder at a time, at most its size.
    /// # unsafe impl DeviceAllocator for OneBlock {
    /// #     fn alloc(&self, size: usize) -> Option<Block> {
    /// #         if size > self.buf.byte_len() || self.lent.swap(true, Ordering::AcqRel) {
    /// #             return None;
    /// #         }
    /// #         Some(Block::new(NonNull::new(self.buf.as_raw())?, size))
    /// #     }
    /// #     fn free(&self, _block: Block) {
    /// #         self.lent.store(false, Ordering::Release);
    /// #     }
    /// # }
    /// # let device = Device::new(0)?;
    /// # let arena = OneBlock { buf: DeviceBuf::zeroed(&device, 1 << 20)?, lent: AtomicBool::new(false) };
    /// // `arena` does not override `alloc_advise`: the hint is ignored.
    /// let hint = NonNull::new(0x1000 as *mut std::ffi::c_void);
    /// let block = arena.alloc_advise(64, hint).expect("free");
    /// assert_eq!(block.address().as_ptr(), arena.buf.as_raw());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAllocatorSetAllocAdviseFuncToDesc")]
    fn alloc_advise(&self, size: usize, hint: Option<NonNull<c_void>>) -> Option<Block> {
        let _ = hint;
        self.alloc(size)
    }

    /// Takes back a block this allocator returned.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::allocator::{Block, DeviceAllocator};
    /// # use ascend::{Device, DeviceBuf};
    /// # use std::ptr::NonNull;
    /// # use std::sync::atomic::{AtomicBool, Ordering};
    /// #
    /// # /// Lends one preallocated buffer, to one holder at a time.
    /// # struct OneBlock {
    /// #     buf: DeviceBuf<u8>,
    /// #     lent: AtomicBool,
    /// # }
    /// #
    /// # // SAFETY: the one block is `buf`'s memory, which lives as long as the
    /// # // allocator; it is lent to one holder at a time, at most its size.
    /// # unsafe impl DeviceAllocator for OneBlock {
    /// #     fn alloc(&self, size: usize) -> Option<Block> {
    /// #         if size > self.buf.byte_len() || self.lent.swap(true, Ordering::AcqRel) {
    /// #             return None;
    /// #         }
    /// #         Some(Block::new(NonNull::new(self.buf.as_raw())?, size))
    /// #     }
    /// #     fn free(&self, _block: Block) {
    /// #         self.lent.store(false, Ordering::Release);
    /// #     }
    /// # }
    /// # let device = Device::new(0)?;
    /// # let arena = OneBlock { buf: DeviceBuf::zeroed(&device, 1 << 20)?, lent: AtomicBool::new(false) };
    /// // `arena` lends one buffer (see `DeviceAllocator`).
    /// let block = arena.alloc(512).expect("free");
    /// assert!(arena.alloc(512).is_none());
    /// arena.free(block); // back to the allocator
    /// assert!(arena.alloc(512).is_some());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtAllocatorSetFreeFuncToDesc")]
    fn free(&self, block: Block);
}
