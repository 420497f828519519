//! What the calls hand the sanitizer: the ranges they touch, as programs
//! name them. Each is translated here (only when the sanitizer is on), and
//! pageable host memory, which no stream can reach, is left out.

use super::shadow::Kind;
use super::tracker::{Site, Touch};
use crate::soft::compose::translate::Translator;
use crate::soft::core::segments::{Segments, Side};

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

/// A translated range: whether it is device memory, and its runs.
struct Translated {
    range: Range,
    device: bool,
    runs: Vec<(usize, usize, usize)>,
}

fn translate(ranges: &[Range]) -> Vec<Translated> {
    let mut tables = Translator::default();
    ranges
        .iter()
        .filter_map(|&range| {
            let device = match tables.side_of(range.address).ok()? {
                Side::Device(_) => true,
                Side::PinnedHost => false,
                Side::Pageable => return None,
            };
            let runs = tables.resolve(range.address, range.len, "range").ok()?.runs();
            Some(Translated { range, device, runs })
        })
        .collect()
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

/// The synchronous call `api` of the host touched `ranges`.
pub(crate) fn host(api: &'static str, ranges: &[Range]) {
    if !super::on() {
        return;
    }
    let translated = translate(ranges);
    super::host_op(api, &touches(&translated));
}

/// The runs of each row, cut from the runs of the rows' whole span.
fn rows_of(rows: Rows) -> Option<Translated> {
    let span = rows
        .height
        .checked_sub(1)?
        .checked_mul(rows.pitch)?
        .checked_add(rows.width)?;
    let mut whole = translate(&[Range {
        address: rows.address,
        len: span,
        kind: rows.kind,
    }]);
    let whole = whole.pop()?;
    let mut cut = Vec::new();
    for row in 0..rows.height {
        let (from, to) = (row * rows.pitch, row * rows.pitch + rows.width);
        for &(pointer, len, offset) in &whole.runs {
            let (start, end) = (offset.max(from), (offset + len).min(to));
            if start < end {
                cut.push((pointer + (start - offset), end - start, start));
            }
        }
    }
    Some(Translated { runs: cut, ..whole })
}

/// A 2-D copy queued on `site` (`None`: the host copied at once).
pub(crate) fn rows(site: Option<Site>, api: &'static str, dst: Rows, src: Rows) {
    if !super::on() {
        return;
    }
    let translated: Vec<Translated> = [dst, src].into_iter().filter_map(rows_of).collect();
    match site {
        Some(site) => super::stream_op(site, api, &touches(&translated)),
        None => super::host_op(api, &touches(&translated)),
    }
}
