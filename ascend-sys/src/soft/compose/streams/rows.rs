//! Moving the rows of a 2-D copy (`aclrtMemcpy2d*`).
//!
//! Each side's whole span (`(height - 1) * pitch + width` bytes) is
//! translated once, by the same translation
//! the 1-D copies use ([`crate::soft::compose::translate`]); the rows are then
//! copied without it, walking the segments of each span.

use crate::soft::compose::translate::Translator;
use crate::soft::core::byte_locks;
use crate::soft::core::segments::{Segment, Segments};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::peer;
use crate::types::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_PARAM_INVALID};

/// The bytes `height` rows of `width` bytes, `pitch` apart, span.
fn span(pitch: usize, width: usize, height: usize, role: &str) -> SoftResult<usize> {
    let Some(before_last) = height.checked_sub(1) else {
        return Ok(0);
    };
    before_last
        .checked_mul(pitch)
        .and_then(|rows| rows.checked_add(width))
        .map_or_else(
            || {
                fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("{role}: {height} rows of pitch {pitch} overflow the address space"),
                )
            },
            Ok,
        )
}

/// A translated span: its segments with their offsets in the span.
struct Flat(Vec<(usize, Segment)>);

impl Flat {
    fn new(segments: &Segments) -> Self {
        let mut offset = 0;
        Self(
            segments
                .iter()
                .map(|segment| {
                    let start = offset;
                    offset += segment.len;
                    (start, segment.clone())
                })
                .collect(),
        )
    }

    /// The pointer at `offset` and how many bytes follow it in the same
    /// segment.
    fn at(&self, offset: usize) -> SoftResult<(*mut u8, usize)> {
        let index = self.0.partition_point(|(start, _)| *start <= offset).saturating_sub(1);
        match self.0.get(index) {
            Some((start, segment)) if offset - start < segment.len => {
                let inside = offset - start;
                // SAFETY: `inside < segment.len`, so the pointer stays inside
                // the segment.
                Ok((unsafe { segment.pointer.add(inside) }, segment.len - inside))
            }
            _ => fail(ACL_ERROR_RT_INTERNAL_ERROR, "translation returned too few bytes"),
        }
    }
}

/// The geometry of a 2-D copy: `height` rows of `width` bytes from `src`
/// (rows `spitch` apart) to `dst` (rows `dpitch` apart).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows {
    pub(crate) dst: usize,
    pub(crate) dpitch: usize,
    pub(crate) src: usize,
    pub(crate) spitch: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
}

impl Rows {
    /// Bytes the destination rows span.
    pub(crate) fn dst_span(&self) -> SoftResult<usize> {
        span(self.dpitch, self.width, self.height, "dst")
    }

    /// Bytes the source rows span.
    pub(crate) fn src_span(&self) -> SoftResult<usize> {
        span(self.spitch, self.width, self.height, "src")
    }
}

/// Copies the rows of a 2-D copy; each side is device memory (translated)
/// or host memory.
///
/// # Safety
///
/// Host spans must be valid for the copy (the caller's contract).
pub(crate) unsafe fn copy_rows(rows: Rows) -> SoftResult {
    let Rows {
        dst,
        dpitch,
        src,
        spitch,
        width,
        height,
    } = rows;
    if width == 0 || height == 0 {
        return Ok(());
    }
    let (to, from) = {
        let mut tables = Translator::default();
        let to = tables.resolve(dst, rows.dst_span()?, "dst")?;
        let from = tables.resolve(src, rows.src_span()?, "src")?;
        // A copy between two devices needs peer access, as for 1-D copies.
        peer::check_sides(&to, &from)?;
        (Flat::new(&to), Flat::new(&from))
    };
    for row in 0..height {
        let (mut to_offset, mut from_offset) = (row * dpitch, row * spitch);
        let mut left = width;
        while left > 0 {
            let (to_pointer, to_room) = to.at(to_offset)?;
            let (from_pointer, from_room) = from.at(from_offset)?;
            let step = left
                .min(to_room)
                .min(from_room)
                .min(byte_locks::room(to_pointer as usize))
                .min(byte_locks::room(from_pointer as usize));
            let _held = byte_locks::lock(to_pointer as usize, from_pointer as usize);
            // SAFETY: both pointers have at least `step` bytes in their
            // segments (device views or host memory valid by contract);
            // `copy` tolerates overlap.
            unsafe { std::ptr::copy(from_pointer, to_pointer, step) };
            to_offset += step;
            from_offset += step;
            left -= step;
        }
    }
    Ok(())
}
