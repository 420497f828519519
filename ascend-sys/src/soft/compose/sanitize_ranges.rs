//! The sanitizer's checks of ranges as programs name them: each range is
//! translated here, through the [`Translator`] (only when the sanitizer is
//! on), and handed to the sanitizer's state (`check/sanitize/`) as the raw
//! bytes behind it. Pageable host memory, which no stream can reach, is
//! left out.

use crate::soft::check::sanitize::{self, Range, Rows, Translated};
use crate::soft::compose::translate::Translator;
use crate::soft::core::segments::Side;

/// The bytes behind `[address, address + len)`, as `(pointer, len, offset)`
/// runs (`None` when it does not translate: the call itself will fail).
fn bytes_of(address: usize, len: usize) -> Option<Vec<(usize, usize, usize)>> {
    Translator::default()
        .resolve(address, len, "range")
        .ok()
        .map(|segments| segments.runs())
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

/// The synchronous call `api` of the host touched `ranges`.
#[inline]
pub(crate) fn host(api: &'static str, ranges: &[Range]) {
    // Inline, so a call with the sanitizer off builds no ranges.
    if sanitize::on() {
        host_checked(api, ranges);
    }
}

/// [`host`] with the sanitizer on.
#[inline(never)]
fn host_checked(api: &'static str, ranges: &[Range]) {
    let translated = translate(ranges);
    sanitize::host_touched(api, &translated);
}

/// Tells the sanitizer that the host reads (or, with `write`, writes)
/// `len` bytes at `address` with its own loads and stores, in the call
/// `api`: the software device cannot see such an access, so a layer above
/// the raw API that touches pinned or registered host memory directly
/// announces it here, and it is checked against queued work as a
/// synchronous copy would be. One atomic load when the sanitizer is off;
/// pageable memory is ignored.
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// soft::start_sanitizer(soft::Checks::RACE);
/// let watch = soft::MisuseWatch::start();
/// let (mut stream, mut dev, mut pinned) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
/// unsafe {
///     assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
///     assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
///     assert_eq!(aclrtMalloc(&mut dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
///     assert_eq!(aclrtMemset(dev, 64, 1, 64), ACL_SUCCESS);
///     assert_eq!(aclrtMallocHost(&mut pinned, 64), ACL_SUCCESS);
///     assert_eq!(aclrtMemcpyAsync(pinned, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
///     // Reading the pinned bytes before synchronising: a race.
///     soft::sanitize_host_access("my_read", pinned, 64, false);
///     assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
///     soft::sanitize_host_access("my_read", pinned, 64, false); // ordered now
///     assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
///     assert_eq!(aclrtFreeHost(pinned), ACL_SUCCESS);
///     assert_eq!(aclrtFree(dev), ACL_SUCCESS);
/// }
/// assert_eq!(watch.seen().iter().filter(|m| m.api == "my_read").count(), 1);
/// ```
pub fn sanitize_host_access(api: &'static str, address: *const std::ffi::c_void, len: usize, write: bool) {
    if !sanitize::on() || len == 0 {
        return;
    }
    let range = if write {
        Range::write(address as usize, len)
    } else {
        Range::read(address as usize, len)
    };
    host(api, &[range]);
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
pub(crate) fn rows(site: Option<sanitize::Site>, api: &'static str, dst: Rows, src: Rows) {
    if !sanitize::on() {
        return;
    }
    let translated: Vec<Translated> = [dst, src].into_iter().filter_map(rows_of).collect();
    match site {
        Some(site) => sanitize::stream_touched(site, api, &translated),
        None => sanitize::host_touched(api, &translated),
    }
}

/// Device memory at the program address `address` starts afresh: new
/// (`aclrtMalloc*`: unwritten, `origin` names the call), or shared with
/// another process (`None`: what it writes there is not seen here).
pub(crate) fn allocated_device(address: usize, len: usize, origin: Option<&'static str>) {
    if !sanitize::on() {
        return;
    }
    if let Some(bytes) = bytes_of(address, len) {
        sanitize::allocated_runs(&bytes, origin);
    }
}
