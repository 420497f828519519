//! 2-D copies of pitched regions: the shape ([`Copy2d`]), its checks, and
//! the synchronous copies (`aclrtMemcpy2d`) on device views. The
//! asynchronous ones are methods of [`AsyncScope`](super::AsyncScope).

use crate::Device;
use crate::error::{Call, Error, Result, check};
use crate::memory::{DeviceSlice, DeviceSliceMut};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;

/// The shape of a 2-D copy: `height` rows of `width` elements, with the
/// source's rows `src_pitch` elements apart and the destination's
/// `dst_pitch` apart (both default to `width`: packed rows).
///
/// All sizes are in elements of the copied type; the byte values the
/// runtime receives are `size_of::<T>()` times these. Before any call, the
/// copy checks that `width <= pitch` on both sides and that each side holds
/// `pitch * (height - 1) + width` elements, with checked arithmetic. A copy
/// with no rows or no columns does nothing.
///
/// ```
/// use ascend::stream::Copy2d;
/// // 3 rows of 4 elements out of an 8-element-wide image, packed on arrival.
/// let shape = Copy2d::new(4, 3).with_src_pitch(8);
/// assert_eq!(shape.src_extent()?, 8 * 2 + 4);
/// assert_eq!(shape.dst_extent()?, 12);
/// assert!(Copy2d::new(4, 3).with_dst_pitch(2).dst_extent().is_err());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Copy2d {
    width: usize,
    height: usize,
    src_pitch: usize,
    dst_pitch: usize,
}

/// A checked 2-D copy in bytes, ready for the runtime.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ByteRows {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) src_pitch: usize,
    pub(crate) dst_pitch: usize,
}

impl Copy2d {
    /// `height` rows of `width` elements, packed on both sides.
    ///
    /// ```
    /// use ascend::stream::Copy2d;
    /// let shape = Copy2d::new(4, 2);
    /// assert_eq!((shape.width(), shape.height()), (4, 2));
    /// assert_eq!((shape.src_pitch(), shape.dst_pitch()), (4, 4)); // packed
    /// assert_eq!(shape.src_extent()?, 8);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub const fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            src_pitch: width,
            dst_pitch: width,
        }
    }

    /// The same shape with the source's rows `pitch` elements apart.
    ///
    /// ```
    /// use ascend::stream::Copy2d;
    /// // The left 3 columns of a 2-row image 10 elements wide.
    /// let shape = Copy2d::new(3, 2).with_src_pitch(10);
    /// assert_eq!(shape.src_pitch(), 10);
    /// assert_eq!(shape.src_extent()?, 13); // 10 + 3: the last row need not be whole
    /// assert_eq!(shape.dst_extent()?, 6);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub const fn with_src_pitch(self, pitch: usize) -> Self {
        Self {
            src_pitch: pitch,
            ..self
        }
    }

    /// The same shape with the destination's rows `pitch` elements apart.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Copy2d};
    /// let device = Device::new(0)?;
    /// let mut padded = DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// let shape = Copy2d::new(2, 3).with_dst_pitch(3); // rows 3 apart on the device
    /// assert_eq!(shape.dst_extent()?, 8);
    /// padded.as_mut_slice().write_from_host_2d(&[1, 2, 3, 4, 5, 6], shape)?;
    /// assert_eq!(padded.to_vec()?, [1, 2, 0, 3, 4, 0, 5, 6]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub const fn with_dst_pitch(self, pitch: usize) -> Self {
        Self {
            dst_pitch: pitch,
            ..self
        }
    }

    /// Elements per row.
    ///
    /// ```
    /// assert_eq!(ascend::stream::Copy2d::new(5, 2).width(), 5);
    /// ```
    pub const fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    ///
    /// ```
    /// assert_eq!(ascend::stream::Copy2d::new(5, 2).height(), 2);
    /// ```
    pub const fn height(&self) -> usize {
        self.height
    }

    /// Distance between source rows, in elements.
    ///
    /// ```
    /// use ascend::stream::Copy2d;
    /// assert_eq!(Copy2d::new(5, 2).src_pitch(), 5); // packed by default
    /// assert_eq!(Copy2d::new(5, 2).with_src_pitch(8).src_pitch(), 8);
    /// ```
    pub const fn src_pitch(&self) -> usize {
        self.src_pitch
    }

    /// Distance between destination rows, in elements.
    ///
    /// ```
    /// use ascend::stream::Copy2d;
    /// let shape = Copy2d::new(5, 2).with_dst_pitch(16);
    /// assert_eq!(shape.dst_pitch(), 16);
    /// assert_eq!(shape.src_pitch(), 5); // the source side is unchanged
    /// ```
    pub const fn dst_pitch(&self) -> usize {
        self.dst_pitch
    }

    /// Whether the copy moves nothing (no rows or no columns).
    ///
    /// ```
    /// use ascend::stream::Copy2d;
    /// assert!(Copy2d::new(0, 4).is_empty());
    /// assert!(Copy2d::new(4, 0).is_empty());
    /// assert!(!Copy2d::new(1, 1).is_empty());
    /// assert_eq!(Copy2d::new(4, 0).src_extent()?, 0); // needs no memory at all
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub const fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// The elements the source must hold: `src_pitch * (height - 1) +
    /// width` (0 for an empty copy).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `width > src_pitch` or the size
    /// overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Error, stream::Copy2d};
    /// assert_eq!(Copy2d::new(2, 3).with_src_pitch(5).src_extent()?, 5 * 2 + 2);
    /// let narrow = Copy2d::new(4, 3).with_src_pitch(3); // rows would overlap
    /// assert!(matches!(narrow.src_extent(), Err(Error::InvalidArgument { .. })));
    /// let huge = Copy2d::new(1, usize::MAX).with_src_pitch(2);
    /// assert!(huge.src_extent().is_err()); // overflows usize
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn src_extent(&self) -> Result<usize> {
        self.extent(Call::rust("Copy2d::src_extent"), "source", self.src_pitch)
    }

    /// The elements the destination must hold: `dst_pitch * (height - 1) +
    /// width` (0 for an empty copy).
    ///
    /// # Errors
    ///
    /// As [`Copy2d::src_extent`], for the destination.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Error, stream::Copy2d};
    /// let shape = Copy2d::new(3, 4).with_dst_pitch(8);
    /// assert_eq!(shape.dst_extent()?, 8 * 3 + 3);
    /// assert_eq!(shape.src_extent()?, 12); // packed source
    /// let narrow = Copy2d::new(3, 4).with_dst_pitch(2);
    /// assert!(matches!(narrow.dst_extent(), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn dst_extent(&self) -> Result<usize> {
        self.extent(Call::rust("Copy2d::dst_extent"), "destination", self.dst_pitch)
    }

    fn extent(&self, call: Call, side: &str, pitch: usize) -> Result<usize> {
        if self.is_empty() {
            return Ok(0);
        }
        if self.width > pitch {
            return Err(Error::invalid(
                call,
                format!("{side} pitch {pitch} is smaller than the width {}", self.width),
            ));
        }
        (self.height - 1)
            .checked_mul(pitch)
            .and_then(|rows| rows.checked_add(self.width))
            .ok_or_else(|| {
                Error::invalid(
                    call,
                    format!("{side}: {} rows of pitch {pitch} overflow usize", self.height),
                )
            })
    }

    /// Checks the shape against the two sides' lengths (in elements of `T`)
    /// and converts it to bytes; `None` for an empty copy.
    pub(crate) fn checked_bytes<T>(self, call: Call, src_len: usize, dst_len: usize) -> Result<Option<ByteRows>> {
        if self.is_empty() {
            return Ok(None);
        }
        for (side, extent, len) in [
            ("source", self.extent(call, "source", self.src_pitch)?, src_len),
            (
                "destination",
                self.extent(call, "destination", self.dst_pitch)?,
                dst_len,
            ),
        ] {
            if extent > len {
                return Err(Error::invalid(
                    call,
                    format!(
                        "the {side} needs {extent} elements for {} rows of {} (pitch {}), but has {len}",
                        self.height,
                        self.width,
                        if side == "source" {
                            self.src_pitch
                        } else {
                            self.dst_pitch
                        }
                    ),
                ));
            }
        }
        let bytes = |elements: usize| {
            elements.checked_mul(size_of::<T>()).ok_or_else(|| {
                Error::invalid(
                    call,
                    format!("{elements} elements of {} bytes overflow usize", size_of::<T>()),
                )
            })
        };
        Ok(Some(ByteRows {
            width: bytes(self.width)?,
            height: self.height,
            src_pitch: bytes(self.src_pitch)?,
            dst_pitch: bytes(self.dst_pitch)?,
        }))
    }
}

/// `aclrtMemcpy2d` with `device` current.
fn copy_2d(
    device: &Device,
    dst: *mut c_void,
    src: *const c_void,
    rows: ByteRows,
    kind: sys::aclrtMemcpyKind,
) -> Result<()> {
    device.make_current()?;
    // SAFETY: the caller checked that both sides hold the rows (`checked_bytes`):
    // a host slice it borrows and a device view that is live for the call.
    check("aclrtMemcpy2d", unsafe {
        sys::aclrtMemcpy2d(dst, rows.dst_pitch, src, rows.src_pitch, rows.width, rows.height, kind)
    })
}

impl<T: Pod> DeviceSliceMut<'_, T> {
    /// Copies the rows of `shape` from `src` (host) into this view,
    /// synchronously (`aclrtMemcpy2d`, host to device).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Copy2d};
    /// let device = Device::new(0)?;
    /// let image: Vec<u8> = (0..16).collect(); // 4 rows of 4
    /// let mut left_half = DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// left_half.as_mut_slice().write_from_host_2d(&image, Copy2d::new(2, 4).with_src_pitch(4))?;
    /// assert_eq!(left_half.to_vec()?, [0, 1, 4, 5, 8, 9, 12, 13]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the shape does not fit either side
    /// (nothing is copied); the runtime's code (e.g. for a width or height
    /// above its limits).
    #[doc(alias = "aclrtMemcpy2d")]
    pub fn write_from_host_2d(&mut self, src: &[T], shape: Copy2d) -> Result<()> {
        let Some(rows) = shape.checked_bytes::<T>(
            Call::new("DeviceSliceMut::write_from_host_2d", "aclrtMemcpy2d"),
            src.len(),
            self.len(),
        )?
        else {
            return Ok(());
        };
        let device = self.as_slice().device();
        copy_2d(
            device,
            self.as_raw(),
            src.as_ptr().cast(),
            rows,
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    }
}

impl<T: Pod> DeviceSlice<'_, T> {
    /// Copies the rows of `shape` from this view into `dst` (host),
    /// synchronously (`aclrtMemcpy2d`, device to host).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Copy2d};
    /// let device = Device::new(0)?;
    /// let packed = DeviceBuf::from_slice(&device, &[1u16, 2, 3, 4])?; // 2 rows of 2
    /// let mut padded = [0u16; 6]; // rows 3 apart
    /// packed.as_slice().read_to_host_2d(&mut padded, Copy2d::new(2, 2).with_dst_pitch(3))?;
    /// assert_eq!(padded, [1, 2, 0, 3, 4, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`DeviceSliceMut::write_from_host_2d`].
    #[doc(alias = "aclrtMemcpy2d")]
    pub fn read_to_host_2d(&self, dst: &mut [T], shape: Copy2d) -> Result<()> {
        let Some(rows) = shape.checked_bytes::<T>(
            Call::new("DeviceSlice::read_to_host_2d", "aclrtMemcpy2d"),
            self.len(),
            dst.len(),
        )?
        else {
            return Ok(());
        };
        copy_2d(
            self.device(),
            dst.as_mut_ptr().cast(),
            self.as_raw(),
            rows,
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
}
