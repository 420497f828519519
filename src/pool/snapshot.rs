//! [`PoolSnapshot`]: a pool's segments and blocks at one moment, as JSON and
//! as an SVG segment map (drawn in `snapshot_svg.rs`).

use super::stats::PoolStats;
use std::fmt::Write;

/// What one range of a segment holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockState {
    /// A live block.
    Allocated,
    /// Cached, free to reuse.
    Free,
    /// Cached, with work of its former block that may still be queued.
    FreePending,
}

impl BlockState {
    fn name(self) -> &'static str {
        match self {
            BlockState::Allocated => "allocated",
            BlockState::Free => "free",
            BlockState::FreePending => "free_pending",
        }
    }
}

/// One range of a segment's mapped part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockSnapshot {
    /// Offset in the segment.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
    /// What it holds.
    pub state: BlockState,
}

/// One of the pool's expandable segments.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentSnapshot {
    /// The tag whose memory it holds.
    pub tag: String,
    /// `"small"` or `"large"`.
    pub pool: &'static str,
    /// Whether the tag is asleep (nothing mapped; its blocks keep their
    /// offsets).
    pub asleep: bool,
    /// The first device address.
    pub base: usize,
    /// Bytes of addresses reserved.
    pub capacity: usize,
    /// Bytes mapped.
    pub mapped: usize,
    /// Bytes per chunk.
    pub chunk: usize,
    /// The ranges of the mapped part, in offset order.
    pub blocks: Vec<BlockSnapshot>,
}

/// A pool's segments, blocks and statistics at one moment
/// ([`DevicePool::snapshot`](super::DevicePool::snapshot)).
///
/// [`PoolSnapshot::to_json`] writes this document:
///
/// ```text
/// { "device": 0,
///   "stats": { "allocated": 4096, "allocated_peak": 4096, "reserved": 2097152, ... },
///   "segments": [
///     { "tag": "default", "pool": "small", "asleep": false,
///       "base": "0x7f...", "capacity": 1073741824,
///       "mapped": 2097152, "chunk": 2097152,
///       "blocks": [ { "offset": 0, "size": 4096, "state": "allocated" },
///                   { "offset": 4096, "size": 2093056, "state": "free" } ] },
///     { "pool": "large", ... } ] }
/// ```
///
/// There are two segments (small, large) per tag. `stats` also holds
/// `sleeps`, `wakes` and `offloaded` (host bytes of sleeping tags).
/// `state` is `allocated`, `free`, or `free_pending` (cached memory whose
/// former block's work may still be queued). Sizes and offsets are bytes;
/// `base` is a hexadecimal string. [`PoolSnapshot::to_svg`] draws the same
/// as a picture: a bar per segment scaled to its reserved addresses, a
/// rectangle per range coloured by state, the unmapped rest hatched, with a
/// title, a legend and sizes in binary units.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolSnapshot {
    /// The device id.
    pub device: i32,
    /// The statistics at the same moment.
    pub stats: PoolStats,
    /// Per tag (the default tag first), its small pool's segment, then
    /// its large one's.
    pub segments: Vec<SegmentSnapshot>,
}

impl PoolSnapshot {
    /// The snapshot as the JSON document described on the type.
    pub fn to_json(&self) -> String {
        let s = &self.stats;
        let mut out = format!(
            "{{\"device\":{},\"stats\":{{\"allocated\":{},\"allocated_peak\":{},\"reserved\":{},\"reserved_peak\":{},\
             \"active\":{},\"active_peak\":{},\"allocations\":{},\"frees\":{},\"retries\":{},\"chunks_mapped\":{},\
             \"chunks_unmapped\":{},\"sleeps\":{},\"wakes\":{},\"offloaded\":{}}},\"segments\":[",
            self.device,
            s.allocated,
            s.allocated_peak,
            s.reserved,
            s.reserved_peak,
            s.active,
            s.active_peak,
            s.allocations,
            s.frees,
            s.retries,
            s.chunks_mapped,
            s.chunks_unmapped,
            s.sleeps,
            s.wakes,
            s.offloaded
        );
        for (index, segment) in self.segments.iter().enumerate() {
            let _ = write!(
                out,
                "{}{{\"tag\":{},\"pool\":\"{}\",\"asleep\":{},\"base\":\"{:#x}\",\"capacity\":{},\"mapped\":{},\
                 \"chunk\":{},\"blocks\":[",
                if index > 0 { "," } else { "" },
                json_string(&segment.tag),
                segment.pool,
                segment.asleep,
                segment.base,
                segment.capacity,
                segment.mapped,
                segment.chunk
            );
            for (at, block) in segment.blocks.iter().enumerate() {
                let _ = write!(
                    out,
                    "{}{{\"offset\":{},\"size\":{},\"state\":\"{}\"}}",
                    if at > 0 { "," } else { "" },
                    block.offset,
                    block.size,
                    block.state.name()
                );
            }
            out.push_str("]}");
        }
        out.push_str("]}");
        out
    }
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
