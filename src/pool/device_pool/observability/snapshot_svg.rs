//! [`PoolSnapshot::to_svg`]: the segment map as a picture that reads on its
//! own, also as a PNG and on a dark viewer.
//!
//! Layout, top to bottom: a white background over the whole image; a title
//! with the pool's totals and three lines of its other statistics; a legend;
//! then one row per segment: a label, the bytes per block state, a bar
//! scaled to the segment's reserved addresses (its blocks at their offsets,
//! the unmapped rest hatched) and, when that part is a fraction of the bar,
//! the same blocks again in a bar of their own width ("enlarged").

use super::snapshot::{BlockSnapshot, BlockState, PoolSnapshot, SegmentSnapshot};
use crate::byte_units::human_bytes;
use crate::pool::device_pool::statistics::stats::PoolStats;
use std::fmt::Write;

/// Left and right margin, and the space above and below the content.
pub(in crate::pool) const MARGIN: f64 = 20.0;
/// The width of a segment's bar (the whole of its reserved addresses).
pub(in crate::pool) const BAR_WIDTH: f64 = 1000.0;
/// The height of a bar.
const BAR_HEIGHT: f64 = 22.0;
/// The gap between a segment's bar and its enlarged mapped part.
const LENS_GAP: f64 = 18.0;
/// The space after a segment's row.
const ROW_GAP: f64 = 22.0;
/// The image's width.
pub(in crate::pool) const WIDTH: f64 = BAR_WIDTH + 2.0 * MARGIN;
/// The colour of text.
pub(in crate::pool) const INK: &str = "#1a1a1a";
/// The colour of secondary text.
pub(in crate::pool) const MUTED: &str = "#4d4d4d";
/// The colour that marks an asleep segment.
const ASLEEP: &str = "#b00020";
/// The fill of unmapped addresses (a hatch pattern defined in the image).
const UNMAPPED_FILL: &str = "url(#unmapped)";
/// The narrowest a block is drawn, so that every block shows.
const MIN_BLOCK_PX: f64 = 1.0;
/// Chunk boundaries closer than this many pixels are not drawn.
const MIN_CHUNK_PX: f64 = 4.0;

impl PoolSnapshot {
    /// The snapshot as an SVG picture that reads on its own (the same as a
    /// PNG, on a light or dark viewer):
    ///
    /// - a white background over the whole image;
    /// - a title with the device and the totals (allocated, reserved, the
    ///   number of segments) and three lines with the rest of [`PoolStats`];
    /// - a legend: a swatch per block state (allocated, free, free with
    ///   pending work), the hatching of unmapped addresses (reserved, not
    ///   mapped), and the mark of
    ///   a chunk boundary;
    /// - per segment, a label (tag, small or large pool, **asleep** when it
    ///   is, `mapped X of Y`, the chunk size, the bytes per state) and a bar
    ///   scaled to the segment's reserved addresses: its blocks at their
    ///   offsets, coloured by state, the unmapped rest hatched. When the
    ///   blocks span less than the whole bar (a few MiB mapped of a GiB
    ///   reserved), a second bar below shows them enlarged to the full
    ///   width. An asleep segment's blocks keep their offsets and are drawn
    ///   faded over unmapped addresses.
    ///
    /// Sizes are in binary units (`B`, `KiB`, `MiB`, `GiB`, ...); tags are
    /// XML-escaped. Block rectangles have `class="block"` (in the bars to
    /// scale) or `class="enlarged"`, each with a `<title>` tooltip; with no
    /// segments the picture says so in a line of text.
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(3 << 20)?;
    /// let snapshot = pool.snapshot();
    /// let svg = snapshot.to_svg();
    /// let blocks: usize = snapshot.segments.iter().map(|segment| segment.blocks.len()).sum();
    /// assert_eq!(svg.matches("class=\"block\"").count(), blocks);
    /// assert!(svg.contains("3.00 MiB"), "the block's size, in human units");
    /// assert!(svg.contains(">allocated</text>"), "the legend");
    /// drop(block);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn to_svg(&self) -> String {
        let mut body = String::new();
        let mut y = title(&mut body, self.device, &self.stats, &self.segments);
        y = legend(&mut body, y);
        if self.segments.is_empty() {
            text(
                &mut body,
                MARGIN,
                y + 14.0,
                "",
                "The pool has no segments: no tag has reserved addresses yet.",
            );
            y += 14.0 + ROW_GAP;
        }
        for segment in &self.segments {
            y = segment_row(&mut body, segment, y);
        }
        document(y + MARGIN - ROW_GAP, &body)
    }
}

/// `n` with a comma between groups of three digits: `12,345,678`.
pub(in crate::pool) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `n` and a noun, plural unless `n` is 1: `1 block`, `3 blocks`,
/// `2 retries`.
fn counted(n: u64, noun: &str) -> String {
    let plural = match noun.strip_suffix('y') {
        _ if n == 1 => noun.to_owned(),
        Some(stem) => format!("{stem}ies"),
        None => format!("{noun}s"),
    };
    format!("{} {plural}", grouped(n))
}

/// `part` of `whole` as a percentage that never shows a non-zero part as
/// `0%` or a partial one as `100%`.
fn percent(part: usize, whole: usize) -> String {
    if whole == 0 || part == 0 {
        return "0%".to_owned();
    }
    let share = 100.0 * part as f64 / whole as f64;
    match share {
        s if part == whole => format!("{s:.0}%"),
        s if s < 0.01 => "<0.01%".to_owned(),
        s if s < 1.0 => format!("{s:.2}%"),
        s if s < 99.5 => format!("{s:.1}%"),
        _ => ">99.5%".to_owned(),
    }
}

/// The whole document around `body`, `height` pixels high.
pub(in crate::pool) fn document(height: f64, body: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"13\" \
         fill=\"{INK}\">\n\
         <rect class=\"background\" x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>\n\
         <defs><pattern id=\"unmapped\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f2f2f2\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c4c4c4\" stroke-width=\"2\"/></pattern></defs>\n\
         {body}</svg>\n"
    )
}

/// A `<text>` at (`x`, `y`) with extra `attributes` and `markup` (escaped
/// by the caller).
pub(in crate::pool) fn text(out: &mut String, x: f64, y: f64, attributes: &str, markup: &str) {
    let _ = writeln!(out, "<text x=\"{x:.1}\" y=\"{y:.1}\"{attributes}>{markup}</text>");
}

/// The title and the statistics lines, at the top; returns the y below
/// them.
fn title(out: &mut String, device: i32, stats: &PoolStats, segments: &[SegmentSnapshot]) -> f64 {
    let addresses: usize = segments.iter().map(|segment| segment.capacity).sum();
    let headline = format!(
        "Device {device} pool: {} allocated, {} reserved (mapped), {}",
        human_bytes(stats.allocated),
        human_bytes(stats.reserved),
        counted(segments.len() as u64, "segment")
    );
    text(
        out,
        MARGIN,
        MARGIN + 12.0,
        " font-size=\"17\" font-weight=\"bold\"",
        &headline,
    );
    let peaks = format!(
        "Peaks: {} allocated, {} reserved. Active (allocated or awaiting work): {}, peak {}. \
         Address space: {}.",
        human_bytes(stats.allocated_peak),
        human_bytes(stats.reserved_peak),
        human_bytes(stats.active),
        human_bytes(stats.active_peak),
        human_bytes(addresses)
    );
    text(out, MARGIN, MARGIN + 34.0, &format!(" fill=\"{MUTED}\""), &peaks);
    let counts = format!(
        "Blocks: {} handed out, {} given back, {} when out of memory. Chunks: {} mapped, {} unmapped.",
        grouped(stats.allocations),
        grouped(stats.frees),
        counted(stats.retries, "retry"),
        grouped(stats.chunks_mapped),
        grouped(stats.chunks_unmapped),
    );
    text(out, MARGIN, MARGIN + 52.0, &format!(" fill=\"{MUTED}\""), &counts);
    let sleeps = format!(
        "Sleep: {}, {}; offloaded to host: {} (spare {}).",
        counted(stats.sleeps, "sleep"),
        counted(stats.wakes, "wake"),
        human_bytes(stats.offloaded),
        human_bytes(stats.offload_spare)
    );
    text(out, MARGIN, MARGIN + 70.0, &format!(" fill=\"{MUTED}\""), &sleeps);
    MARGIN + 84.0
}

/// What the legend shows: a swatch's fill and its label.
const LEGEND: [(&str, &str); 4] = [
    ("#D55E00", "allocated"),
    ("#009E73", "free"),
    ("#F0E442", "free with pending work"),
    (UNMAPPED_FILL, "unmapped addresses"),
];

/// The legend from `top`; returns the y below it.
fn legend(out: &mut String, top: f64) -> f64 {
    const SWATCH: f64 = 14.0;
    // About the width of a character of the 13-pixel font.
    const CHAR: f64 = 7.5;
    out.push_str("<g class=\"legend\">\n");
    let mut x = MARGIN;
    for (fill, label) in LEGEND {
        let _ = writeln!(
            out,
            "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{SWATCH}\" height=\"{SWATCH}\" fill=\"{fill}\" \
             stroke=\"#333333\" stroke-width=\"0.5\"/>"
        );
        text(out, x + SWATCH + 6.0, top + 11.5, "", label);
        x += SWATCH + 6.0 + CHAR * label.len() as f64 + 22.0;
    }
    let _ = writeln!(
        out,
        "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333333\" stroke-width=\"1\"/>",
        top + SWATCH
    );
    text(out, x + 6.0, top + 11.5, "", "chunk boundary");
    out.push_str("</g>\n");
    top + SWATCH + 26.0
}

/// A block state's fill (the legend's).
fn fill(state: BlockState) -> &'static str {
    match state {
        BlockState::Allocated => LEGEND[0].0,
        BlockState::Free => LEGEND[1].0,
        BlockState::FreePending => LEGEND[2].0,
    }
}

/// A block state's label (the legend's).
fn label(state: BlockState) -> &'static str {
    match state {
        BlockState::Allocated => LEGEND[0].1,
        BlockState::Free => LEGEND[1].1,
        BlockState::FreePending => LEGEND[2].1,
    }
}

/// Where a bar is drawn and how many bytes its width stands for.
#[derive(Clone, Copy)]
struct Bar {
    top: f64,
    bytes: usize,
}

impl Bar {
    /// The x of byte `offset`.
    fn x(self, offset: usize) -> f64 {
        MARGIN + self.width(offset)
    }

    /// The width of `bytes`.
    fn width(self, bytes: usize) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            BAR_WIDTH * (bytes as f64 / self.bytes as f64)
        }
    }
}

/// One segment's row from `top`; returns the y below it.
fn segment_row(out: &mut String, segment: &SegmentSnapshot, top: f64) -> f64 {
    segment_label(out, segment, top);
    let bar = Bar {
        top: top + 40.0,
        bytes: segment.capacity,
    };
    let _ = writeln!(
        out,
        "<g class=\"segment\"><title>{} {} pool at {:#x}</title>",
        xml_text(&segment.tag),
        segment.pool,
        segment.base
    );
    capacity_bar(out, segment, bar);
    let mut bottom = bar.top + BAR_HEIGHT;
    let span = blocks_span(segment);
    if span > 0 && span < segment.capacity {
        bottom = enlarged(out, segment, bar, span);
    }
    out.push_str("</g>\n");
    bottom + ROW_GAP
}

/// `segment`'s bar to scale: its mapped part's blocks at their offsets, the
/// unmapped rest hatched.
fn capacity_bar(out: &mut String, segment: &SegmentSnapshot, bar: Bar) {
    let unmapped_x = bar.x(segment.mapped.min(segment.capacity));
    let _ = writeln!(
        out,
        "<rect class=\"unmapped\" x=\"{unmapped_x:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{BAR_HEIGHT}\" \
         fill=\"{UNMAPPED_FILL}\"/>",
        bar.top,
        (MARGIN + BAR_WIDTH - unmapped_x).max(0.0)
    );
    blocks(out, segment, bar, "block");
    // The mapped part outlined (a line even when it is thinner than one).
    let stroke = if segment.mapped > 0 { "#1a1a1a" } else { "none" };
    let _ = writeln!(
        out,
        "<rect class=\"mapped\" x=\"{MARGIN}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{BAR_HEIGHT}\" fill=\"none\" \
         stroke=\"{stroke}\" stroke-width=\"1\"/>",
        bar.top,
        bar.width(segment.mapped.min(segment.capacity))
    );
    frame(out, bar);
}

/// The label lines of `segment`'s row from `top`.
fn segment_label(out: &mut String, segment: &SegmentSnapshot, top: f64) {
    let capacity = segment.capacity;
    let mut line = format!(
        "<tspan font-weight=\"bold\">{}</tspan>, {} pool: mapped {} of {} ({}), {} chunks",
        xml_text(&segment.tag),
        segment.pool,
        human_bytes(segment.mapped),
        human_bytes(capacity),
        percent(segment.mapped, capacity),
        human_bytes(segment.chunk)
    );
    if segment.asleep {
        let _ = write!(
            line,
            " <tspan fill=\"{ASLEEP}\" font-weight=\"bold\">ASLEEP: nothing mapped, blocks keep their offsets</tspan>"
        );
    }
    text(out, MARGIN, top + 14.0, "", &line);
    text(
        out,
        MARGIN,
        top + 32.0,
        &format!(" fill=\"{MUTED}\""),
        &state_totals(&segment.blocks),
    );
}

/// `blocks` summed per state: `allocated 4.00 KiB in 1 block; free ...`.
fn state_totals(blocks: &[BlockSnapshot]) -> String {
    let parts: Vec<String> = [BlockState::Allocated, BlockState::FreePending, BlockState::Free]
        .into_iter()
        .filter_map(|state| {
            let of_state = blocks.iter().filter(|block| block.state == state);
            let (count, bytes) = of_state.fold((0u64, 0usize), |(count, bytes), block| {
                (count + 1, bytes.saturating_add(block.size))
            });
            (count > 0).then(|| format!("{} {} in {}", label(state), human_bytes(bytes), counted(count, "block")))
        })
        .collect();
    if parts.is_empty() {
        "no blocks".to_owned()
    } else {
        parts.join("; ")
    }
}

/// The bytes from offset 0 to the end of `segment`'s last block or mapped
/// part, whichever is further (an asleep segment maps nothing but keeps
/// its blocks).
fn blocks_span(segment: &SegmentSnapshot) -> usize {
    let last = segment
        .blocks
        .iter()
        .map(|block| block.offset.saturating_add(block.size))
        .max();
    last.unwrap_or(0).max(segment.mapped).min(segment.capacity)
}

/// `segment`'s blocks in `bar`, with `class`, and its chunk boundaries.
fn blocks(out: &mut String, segment: &SegmentSnapshot, bar: Bar, class: &str) {
    let faded = if segment.asleep { " fill-opacity=\"0.45\"" } else { "" };
    for block in &segment.blocks {
        let width = bar.width(block.size).max(MIN_BLOCK_PX);
        // A thin white edge tells neighbours apart where it leaves colour.
        let outline = if width >= 6.0 {
            " stroke=\"#ffffff\" stroke-width=\"0.75\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<rect class=\"{class}\" x=\"{:.2}\" y=\"{:.1}\" width=\"{width:.2}\" height=\"{BAR_HEIGHT}\" fill=\"{}\"\
             {faded}{outline}><title>{}: {} at offset {}</title></rect>",
            bar.x(block.offset),
            bar.top,
            fill(block.state),
            label(block.state),
            human_bytes(block.size),
            human_bytes(block.offset)
        );
    }
    chunk_lines(out, segment, bar);
}

/// Lines at `segment`'s chunk boundaries inside its mapped part, when they
/// are far enough apart in `bar` to be told apart.
fn chunk_lines(out: &mut String, segment: &SegmentSnapshot, bar: Bar) {
    if segment.chunk == 0 || bar.width(segment.chunk) < MIN_CHUNK_PX {
        return;
    }
    for boundary in (segment.chunk..segment.mapped.min(bar.bytes)).step_by(segment.chunk) {
        let x = bar.x(boundary);
        let _ = writeln!(
            out,
            "<line x1=\"{x:.2}\" y1=\"{:.1}\" x2=\"{x:.2}\" y2=\"{:.1}\" stroke=\"#333333\" stroke-width=\"1\"/>",
            bar.top,
            bar.top + BAR_HEIGHT
        );
    }
}

/// A thin frame around `bar`.
fn frame(out: &mut String, bar: Bar) {
    let _ = writeln!(
        out,
        "<rect class=\"frame\" x=\"{MARGIN}\" y=\"{:.1}\" width=\"{BAR_WIDTH}\" height=\"{BAR_HEIGHT}\" fill=\"none\" \
         stroke=\"#808080\" stroke-width=\"0.75\"/>",
        bar.top
    );
}

/// The first `span` bytes of `segment`, drawn under `above` (its bar to
/// scale) at the full width, with a lens joining the two; returns the
/// bottom of the enlarged bar.
fn enlarged(out: &mut String, segment: &SegmentSnapshot, above: Bar, span: usize) -> f64 {
    let bar = Bar {
        top: above.top + BAR_HEIGHT + LENS_GAP,
        bytes: span,
    };
    let (left, right) = (MARGIN, above.x(span));
    let _ = writeln!(
        out,
        "<polygon class=\"lens\" points=\"{left:.2},{:.1} {right:.2},{:.1} {:.2},{:.1} {left:.2},{:.1}\" \
         fill=\"#dfe7f2\"/>",
        above.top + BAR_HEIGHT,
        above.top + BAR_HEIGHT,
        MARGIN + BAR_WIDTH,
        bar.top,
        bar.top
    );
    let caption = if segment.asleep {
        format!("below: the {} its blocks span, enlarged", human_bytes(span))
    } else {
        format!("below: the mapped {}, enlarged", human_bytes(span))
    };
    text(
        out,
        MARGIN + BAR_WIDTH,
        above.top + BAR_HEIGHT + 13.0,
        &format!(" text-anchor=\"end\" font-size=\"11\" fill=\"{MUTED}\""),
        &caption,
    );
    blocks(out, segment, bar, "enlarged");
    frame(out, bar);
    bar.top + BAR_HEIGHT
}

/// `text` with the characters XML reserves escaped, and the characters it
/// cannot hold (control characters other than tab, newline and carriage
/// return) shown as `\u{..}`.
pub(in crate::pool) fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_and_shares_never_round_to_the_ends() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
        assert_eq!(counted(1, "block"), "1 block");
        assert_eq!(counted(2, "block"), "2 blocks");
        assert_eq!(counted(0, "retry"), "0 retries");
        assert_eq!(counted(1, "retry"), "1 retry");
        assert_eq!(percent(0, 10), "0%");
        assert_eq!(percent(1, 1 << 30), "<0.01%");
        assert_eq!(percent(2 << 20, 1 << 30), "0.20%");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(999, 1000), ">99.5%");
        assert_eq!(percent(7, 7), "100%");
    }

    #[test]
    fn text_the_xml_cannot_hold_is_escaped_or_shown() {
        assert_eq!(xml_text("a\"b\\c<d>&e\n"), "a\"b\\c&lt;d&gt;&amp;e\n");
        assert_eq!(xml_text("x\u{1}y"), "x\\u{1}y");
    }

    #[test]
    fn an_empty_pool_says_so() {
        let snapshot = PoolSnapshot {
            device: 3,
            stats: PoolStats::default(),
            segments: Vec::new(),
        };
        let svg = snapshot.to_svg();
        assert!(svg.contains("The pool has no segments"), "{svg}");
        assert!(svg.contains("Device 3 pool: 0 B allocated"), "{svg}");
        assert_eq!(
            svg.matches("<rect").count(),
            6,
            "the background and the legend's swatches: {svg}"
        );
    }
}
