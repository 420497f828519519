//! [`PoolSnapshot`]: a pool's segments and blocks at one moment, as JSON and
//! as an SVG segment map (drawn in `snapshot_svg.rs`).

use crate::pool::device_pool::statistics::stats::PoolStats;
use std::fmt::Write;

/// What one range of a segment holds ([`BlockSnapshot::state`]).
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{BlockState, DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// # let stream = Arc::new(ascend::stream::Stream::new(&device)?);
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let used = pool.alloc(3 << 20)?; // a large block, freed to the segment's free list
/// used.fill_bytes(0, &stream)?;
/// drop(used);
/// let kept = pool.alloc(4096)?;
/// let mut pending = 0;
/// for block in pool.snapshot().segments.iter().flat_map(|segment| &segment.blocks) {
///     match block.state {
///         BlockState::Allocated => assert_eq!(block.size, 4096),
///         BlockState::FreePending => pending += block.size, // may wait for the memset
///         _ => {} // BlockState::Free, and states added later
///     }
/// }
/// assert_eq!(pending, 20 << 20); // the large chunk, coalesced
/// # drop(kept);
/// # Ok::<(), ascend::Error>(())
/// ```
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

/// One range of a segment's mapped part ([`SegmentSnapshot::blocks`]).
///
/// ```
/// # use ascend::pool::{BlockState, DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// # let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let block = pool.alloc(4096)?;
/// let snapshot = pool.snapshot();
/// let first = snapshot.segments[0].blocks[0]; // the small pool's first range
/// assert_eq!((first.offset, first.size, first.state), (0, 4096, BlockState::Allocated));
/// assert_eq!(snapshot.segments[0].base + first.offset, block.device_ptr() as usize);
/// # Ok::<(), ascend::Error>(())
/// ```
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

/// One of the pool's expandable segments ([`PoolSnapshot::segments`]).
///
/// ```
/// # use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// # let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let weights = pool.alloc_tagged(4096, "weights")?;
/// let snapshot = pool.snapshot();
/// let mapped: Vec<_> = snapshot.segments.iter().filter(|segment| segment.mapped > 0).collect();
/// assert_eq!(mapped.len(), 1);
/// let segment = mapped[0];
/// assert_eq!((segment.tag.as_str(), segment.pool, segment.asleep), ("weights", "small", false));
/// assert_eq!((segment.mapped, segment.chunk), (2 << 20, 2 << 20));
/// # drop(weights);
/// # Ok::<(), ascend::Error>(())
/// ```
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
/// ([`DevicePool::snapshot`](crate::pool::DevicePool::snapshot)).
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
///
/// ```
/// # use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// # let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let block = pool.alloc(4096)?;
/// let snapshot = pool.snapshot();
/// assert_eq!(snapshot.device, device.id());
/// assert_eq!(snapshot.stats.allocated, 4096);
/// assert_eq!(snapshot.segments.len(), 2); // the default tag's small and large pools
/// # drop(block);
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(4096)?;
    /// let json = pool.snapshot().to_json(); // e.g. for a memory viewer
    /// assert!(json.starts_with(r#"{"device":0,"stats":{"allocated":4096,"#));
    /// assert!(json.contains(r#"{"offset":0,"size":4096,"state":"allocated"}"#));
    /// # drop(block);
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
