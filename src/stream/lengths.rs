//! Length checks shared by the stream transfers.

use crate::error::{Call, Error, Result};
pub(crate) use crate::memory::byte_len::byte_len;
use std::ops::{Bound, Range, RangeBounds};

/// Fails unless the destination and source hold the same number of
/// elements.
pub(crate) fn same_len(call: Call, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!("length mismatch: the destination has {dst} elements, the source {src}"),
        ))
    }
}

/// Fails unless the destination and source hold the same number of bytes.
pub(crate) fn same_bytes(call: Call, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!("length mismatch: the destination has {dst} bytes, the source {src}"),
        ))
    }
}

/// `range` within `0..len` (counted in `unit`s, for the message) as
/// `start..end`, or an argument error naming `call`.
pub(crate) fn checked_range(
    call: Call,
    len: usize,
    unit: &str,
    range: impl RangeBounds<usize>,
) -> Result<Range<usize>> {
    let start = match range.start_bound() {
        Bound::Included(&start) => Some(start),
        Bound::Excluded(&start) => start.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => end.checked_add(1),
        Bound::Excluded(&end) => Some(end),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => Ok(start..end),
        _ => Err(Error::invalid(
            call,
            format!(
                "range {:?}..{:?} is out of bounds for {len} {unit}",
                range.start_bound(),
                range.end_bound()
            ),
        )),
    }
}
