//! An IPC import's mapping of the exporter's arena pages, unmapped when
//! its last holder lets go: the import itself, or a copy in flight that
//! translated an address inside it ([`crate::soft::core::segments::Segment`]).
//! So an `aclrtIpcMemClose` during a copy (a caller's error) does not unmap
//! the bytes under the copy.

use rustix::mm::munmap;
use std::ffi::c_void;

pub(crate) struct ImportView {
    pointer: *mut u8,
    length: usize,
}

// SAFETY: the mapping is owned by this value and lives until it drops; bytes
// move through it as the device's "DMA", whose races are the caller's.
unsafe impl Send for ImportView {}
// SAFETY: as for `Send`; shared access only reads the pointer's value.
unsafe impl Sync for ImportView {}

impl ImportView {
    /// Takes ownership of the mapping of `length` bytes at `pointer`.
    ///
    /// # Safety
    ///
    /// `[pointer, pointer + length)` must be a mapping made with `mmap` that
    /// nothing else unmaps.
    pub(crate) unsafe fn adopt(pointer: *mut u8, length: usize) -> Self {
        Self { pointer, length }
    }

    /// The byte `offset` bytes into the view.
    pub(crate) fn at(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset <= self.length);
        // SAFETY: `offset ≤ length`: inside the mapping or one past it.
        unsafe { self.pointer.add(offset) }
    }
}

impl Drop for ImportView {
    fn drop(&mut self) {
        // SAFETY: the mapping was made with this length and is owned by this
        // value (`adopt`'s contract).
        if let Err(error) = unsafe { munmap(self.pointer.cast::<c_void>(), self.length) } {
            log::warn!("software device: munmap of an IPC import failed: {error}");
        }
    }
}
