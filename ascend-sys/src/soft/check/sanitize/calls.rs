//! What the calls hand the sanitizer: the ranges they touch as programs
//! name them ([`Range`], [`Rows`]), and the same ranges once translated to
//! the bytes behind them ([`Translated`]). Translation happens above the
//! families (`compose/sanitize_ranges.rs`); this file only takes raw bytes.

use super::shadow::Kind;
use super::tracker::{Site, Touch};
use crate::soft::core::segments::Segments;

/// One range a call touches, as the program named it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    pub(crate) address: usize,
    pub(crate) len: usize,
    pub(crate) kind: Kind,
}

impl Range {
    pub(crate) fn read(address: usize, len: usize) -> Self {
        Self {
            address,
            len,
            kind: Kind::Read,
        }
    }

    pub(crate) fn write(address: usize, len: usize) -> Self {
        Self {
            address,
            len,
            kind: Kind::Write,
        }
    }
}

/// Rows of a 2-D copy side: `height` rows of `width` bytes, `pitch` apart,
/// from `address`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows {
    pub(crate) address: usize,
    pub(crate) pitch: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) kind: Kind,
}

/// A translated range: whether it is device memory, and its runs as
/// `(pointer, len, offset into the range)`.
pub(crate) struct Translated {
    pub(crate) range: Range,
    pub(crate) device: bool,
    pub(crate) runs: Vec<(usize, usize, usize)>,
}

fn touches(translated: &[Translated]) -> Vec<Touch<'_>> {
    translated
        .iter()
        .map(|t| Touch {
            address: t.range.address,
            len: t.range.len,
            kind: t.range.kind,
            device: t.device,
            bytes: &t.runs,
        })
        .collect()
}

/// Work `api` queued on `site` touches `ranges`, which the call has
/// translated already: each with whether it is device memory and its
/// segments (so nothing is translated twice).
pub(crate) fn queued(site: Site, api: &'static str, ranges: &[(Range, bool, &Segments)]) {
    if !super::on() {
        return;
    }
    let translated: Vec<Translated> = ranges
        .iter()
        .map(|&(range, device, segments)| Translated {
            range,
            device,
            runs: segments.runs(),
        })
        .collect();
    super::stream_op(site, api, &touches(&translated));
}

/// Work `api` queued on `site` touches the `translated` ranges.
pub(crate) fn stream_touched(site: Site, api: &'static str, translated: &[Translated]) {
    super::stream_op(site, api, &touches(translated));
}

/// The synchronous call `api` of the host touched the `translated` ranges.
pub(crate) fn host_touched(api: &'static str, translated: &[Translated]) {
    super::host_op(api, &touches(translated));
}
