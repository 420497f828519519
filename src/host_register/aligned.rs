//! [`AlignedHostBuf`]: page-aligned ordinary host memory, ready to register.

use super::HOST_REGISTER_ALIGN;
use crate::Call;
use crate::error::{Error, Result};
use bytemuck::Pod;
use std::alloc::Layout;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// `len` zeroed elements of `T` in ordinary (pageable) host memory that
/// starts on a 4 KiB boundary and spans whole 4 KiB pages, as host
/// registration requires. It derefs to `[T]` and frees itself on drop.
///
/// **Element types:** any [`Pod`](bytemuck::Pod) type (plain bytes, every
/// bit pattern valid). For a struct of your own, derive it through the
/// SDK's re-export, with no `bytemuck` dependency of your own:
/// `#[derive(Clone, Copy, ascend::bytemuck::Pod, ascend::bytemuck::Zeroable)]`,
/// `#[bytemuck(crate = "ascend::bytemuck")]`, `#[repr(C)]` (runnable example:
/// [`crate::bytemuck`]).
///
/// Whole pages matter: the runtime registers pages, so a buffer that shared
/// its last page with other data would register that data too.
///
/// ```
/// use ascend::host_register::{AlignedHostBuf, HOST_REGISTER_ALIGN};
/// let mut buf = AlignedHostBuf::<u16>::zeroed(3)?;
/// buf[2] = 9;
/// assert_eq!(&buf[..], &[0, 0, 9]);
/// assert_eq!(buf.as_ptr() as usize % HOST_REGISTER_ALIGN, 0);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `AlignedHostBuf<T>` is `Send` and `Sync`, like `Vec<T>`.
pub struct AlignedHostBuf<T> {
    pointer: NonNull<T>,
    len: usize,
    /// The allocation's layout; `None` for an empty buffer (no allocation).
    layout: Option<Layout>,
}

// SAFETY: the buffer owns its allocation exclusively, like a `Box<[T]>`.
unsafe impl<T: Pod> Send for AlignedHostBuf<T> {}
// SAFETY: shared access is only through `&[T]`, like a `Box<[T]>`.
unsafe impl<T: Pod> Sync for AlignedHostBuf<T> {}

impl<T: Pod> AlignedHostBuf<T> {
    /// Allocates `len` zeroed elements, page-aligned.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size overflows or the host
    /// allocator cannot provide the memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::host_register::{AlignedHostBuf, HOST_REGISTER_ALIGN};
    /// let buf = AlignedHostBuf::<f32>::zeroed(1000)?;
    /// assert!(buf.iter().all(|&x| x == 0.0));
    /// assert_eq!(buf.as_ptr() as usize % HOST_REGISTER_ALIGN, 0);
    /// // A size that overflows is refused, not a panic.
    /// let error = AlignedHostBuf::<u64>::zeroed(usize::MAX).unwrap_err();
    /// assert!(matches!(error, Error::InvalidArgument { .. }));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn zeroed(len: usize) -> Result<Self> {
        Self::zeroed_for("AlignedHostBuf::zeroed", len)
    }

    /// [`AlignedHostBuf::zeroed`] for the public method `method`.
    fn zeroed_for(method: &'static str, len: usize) -> Result<Self> {
        let call = Call::rust(method);
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::invalid(
                call,
                format!("{len} elements of {} bytes overflow usize", size_of::<T>()),
            )
        })?;
        if bytes == 0 {
            return Ok(Self {
                pointer: NonNull::dangling(),
                len,
                layout: None,
            });
        }
        let layout = bytes
            .checked_next_multiple_of(HOST_REGISTER_ALIGN)
            .and_then(|size| Layout::from_size_align(size, HOST_REGISTER_ALIGN.max(align_of::<T>())).ok())
            .ok_or_else(|| Error::invalid(call, format!("{bytes} bytes cannot be rounded up to whole pages")))?;
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let pointer = NonNull::new(raw.cast::<T>()).ok_or_else(|| {
            Error::invalid(
                call,
                format!("the host allocator could not provide {} bytes", layout.size()),
            )
        })?;
        Ok(Self {
            pointer,
            len,
            layout: Some(layout),
        })
    }

    /// Allocates a page-aligned copy of `data`.
    ///
    /// # Errors
    ///
    /// As [`AlignedHostBuf::zeroed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::{AlignedHostBuf, HOST_REGISTER_ALIGN};
    /// let data = vec![1u8, 2, 3];
    /// let buf = AlignedHostBuf::from_slice(&data)?;
    /// assert_eq!(&buf[..], &data[..]);
    /// assert_eq!(buf.as_ptr() as usize % HOST_REGISTER_ALIGN, 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_slice(data: &[T]) -> Result<Self> {
        let mut buf = Self::zeroed_for("AlignedHostBuf::from_slice", data.len())?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    /// Bytes allocated: the data rounded up to whole 4 KiB pages (0 when
    /// empty).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::AlignedHostBuf;
    /// assert_eq!(AlignedHostBuf::<u8>::zeroed(1)?.allocated_bytes(), 4096);
    /// assert_eq!(AlignedHostBuf::<u32>::zeroed(1025)?.allocated_bytes(), 8192); // 4100 bytes
    /// assert_eq!(AlignedHostBuf::<u32>::zeroed(0)?.allocated_bytes(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn allocated_bytes(&self) -> usize {
        self.layout.map_or(0, |layout| layout.size())
    }
}

impl<T: Pod> Deref for AlignedHostBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` zero-initialised (hence valid, `T: Pod`), aligned
        // elements owned by `self`, or a dangling pointer with no bytes.
        unsafe { std::slice::from_raw_parts(self.pointer.as_ptr(), self.len) }
    }
}

impl<T: Pod> DerefMut for AlignedHostBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.pointer.as_ptr(), self.len) }
    }
}

impl<T> Drop for AlignedHostBuf<T> {
    fn drop(&mut self) {
        if let Some(layout) = self.layout.take() {
            // SAFETY: allocated in `zeroed` with exactly this layout, freed
            // once (`take`).
            unsafe { std::alloc::dealloc(self.pointer.as_ptr().cast(), layout) };
        }
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for AlignedHostBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
