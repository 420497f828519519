//! [`DevicePool::torch_snapshot`]: the pool's segments and memory history
//! as the pickle of PyTorch's `torch.cuda.memory._snapshot()`, which
//! `python -m torch.cuda._memory_viz` and <https://pytorch.org/memory_viz>
//! open.
//!
//! The schema (the keys PyTorch's `_memory_viz.py` and `MemoryViz.js`
//! read): a dict with `segments` and `device_traces`.
//!
//! - A segment: `device`, `address`, `total_size`, `allocated_size`,
//!   `active_size`, `requested_size`, `stream`, `segment_type` (`small` or
//!   `large`), `segment_pool_id`, `is_expandable` (always true), `frames`
//!   and `blocks`, which cover the segment's mapped bytes in address order
//!   (the viewer places each block after the previous one). A block:
//!   `address`, `size`, `requested_size`, `state` (`active_allocated` or
//!   `inactive`), `frames`.
//! - `device_traces`: one list per device up to the pool's, of entries
//!   `action`, `addr`, `size`, `stream`, `time_us`, `frames` (and
//!   `device_free` for `oom`, `user_metadata` for `user_defined`).
//!
//! The pool's own additions, where the viewer ignores extra keys: `tag` on
//! every segment and trace entry (the pool has one segment per tag and
//! size class, so the tag is also that segment's). A cached range with
//! work still queued is `inactive`, not torch's `active_pending_free`: it
//! is reusable at once (the next block inherits the work), where torch's
//! is not. Sizes are capacities (what [`PoolStats`](crate::pool::PoolStats)
//! counts); the pool does not keep the requested lengths, so
//! `requested_size` is the size. A sleeping tag has nothing mapped and no
//! segment in the snapshot. The viewer has no sleep, and needs every live
//! block inside a mapped segment: in the trace, a block live across a
//! sleep is freed before its range's unmap and allocated again after the
//! wake's map ([`viewer_trace`]). Integers are written as `i64`, which
//! the viewer's own unpickler reads as plain numbers.

use super::history::{HistoryAction, HistoryEvent, PoolHistory};
use super::snapshot::{BlockState, PoolSnapshot};
use crate::error::{Error, Result};
use crate::pool::device_pool::DevicePool;
use serde::Serialize;
use std::backtrace::Backtrace;
use std::collections::HashMap;
use std::path::Path;

mod viewer_trace;

#[derive(Serialize)]
struct Snapshot {
    segments: Vec<Segment>,
    device_traces: Vec<Vec<TraceEntry>>,
}

#[derive(Serialize)]
struct Segment {
    device: i32,
    address: i64,
    total_size: i64,
    allocated_size: i64,
    active_size: i64,
    requested_size: i64,
    stream: i64,
    segment_type: &'static str,
    segment_pool_id: (i64, i64),
    is_expandable: bool,
    frames: Vec<Frame>,
    blocks: Vec<Block>,
    tag: String,
}

#[derive(Serialize)]
struct Block {
    address: i64,
    size: i64,
    requested_size: i64,
    state: &'static str,
    frames: Vec<Frame>,
}

#[derive(Serialize)]
struct TraceEntry {
    action: &'static str,
    addr: i64,
    size: i64,
    stream: i64,
    time_us: i64,
    frames: Vec<Frame>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device_free: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_metadata: Option<&'static str>,
    tag: String,
}

/// A stack frame as torch writes one.
#[derive(Serialize, Clone)]
struct Frame {
    filename: String,
    line: i64,
    name: String,
}

impl DevicePool {
    /// The pool's segments and recorded memory history
    /// ([`DevicePool::record_memory_history`]) as a pickle in the schema
    /// of PyTorch's `torch.cuda.memory._snapshot()`: save it
    /// ([`DevicePool::write_torch_snapshot`]) and open it with
    /// `python -m torch.cuda._memory_viz trace_plot FILE -o out.html`
    /// (the active-memory timeline), `segment_plot`, or by dropping it on
    /// <https://pytorch.org/memory_viz>. What maps to what is in the
    /// [pools guide](crate::guide::pools).
    ///
    /// Needs the cargo feature `torch-snapshot` (off by default: it adds
    /// `serde` and `serde-pickle` to the build).
    ///
    /// # Errors
    ///
    /// The encoder's error, as [`Error::External`](crate::Error::External)
    /// (none is expected: every value is a number, a string, a list or a
    /// dict).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{DevicePool, HistoryOptions, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// pool.record_memory_history(Some(HistoryOptions::default()))?;
    /// let block = pool.alloc(4096)?;
    /// let pickle = pool.torch_snapshot()?;
    /// assert_eq!(pickle[0], 0x80); // a pickle's protocol header
    /// # drop(block);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "torch-snapshot")))]
    pub fn torch_snapshot(&self) -> Result<Vec<u8>> {
        let (snapshot, history) = {
            let mut state = self.shared.state();
            let snapshot = self.snapshot_locked(&mut state);
            (snapshot, state.history.history(self.device().id()))
        };
        let document = build(&snapshot, &history);
        serde_pickle::to_vec(&document, serde_pickle::SerOptions::new())
            .map_err(|error| Error::external("DevicePool::torch_snapshot: encoding the pickle", error))
    }

    /// Writes [`DevicePool::torch_snapshot`] to `path`.
    ///
    /// # Errors
    ///
    /// [`Error::External`](crate::Error::External) with the file's
    /// [`std::io::Error`] as its source (its context names the path), or
    /// the encoder's error.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, HistoryOptions, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let path = std::env::temp_dir().join(format!("pool-{}.pickle", std::process::id()));
    /// pool.write_torch_snapshot(&path)?;
    /// assert!(std::fs::metadata(&path)?.len() > 0);
    /// # std::fs::remove_file(&path)?;
    /// // The file's error: its I/O error is the source.
    /// let error = pool.write_torch_snapshot("/no/such/directory/pool.pickle").unwrap_err();
    /// assert!(error.to_string().contains("/no/such/directory/pool.pickle"), "{error}");
    /// let io = std::error::Error::source(&error).and_then(|source| source.downcast_ref::<std::io::Error>());
    /// assert_eq!(io.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "torch-snapshot")))]
    pub fn write_torch_snapshot(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.torch_snapshot()?).map_err(|error| {
            Error::external(
                format!("DevicePool::write_torch_snapshot: writing {}", path.display()),
                error,
            )
        })
    }
}

/// The document of `snapshot` and `history`.
fn build(snapshot: &PoolSnapshot, history: &PoolHistory) -> Snapshot {
    // The frames of each live block's allocation, when still recorded.
    let mut alloc_frames: HashMap<usize, &Backtrace> = HashMap::new();
    for event in &history.events {
        if let (HistoryAction::Alloc, Some(backtrace)) = (event.action, &event.backtrace) {
            alloc_frames.insert(event.address, backtrace);
        }
    }
    let frames_at = |address: usize| alloc_frames.get(&address).map_or_else(Vec::new, |bt| frames(bt));
    let device = snapshot.device;
    let segments = snapshot
        .segments
        .iter()
        .filter(|segment| !segment.asleep && segment.mapped > 0)
        .map(|segment| {
            let blocks: Vec<Block> = segment
                .blocks
                .iter()
                .map(|block| {
                    let address = segment.base + block.offset;
                    let allocated = block.state == BlockState::Allocated;
                    Block {
                        address: int(address),
                        size: int(block.size),
                        requested_size: int(block.size),
                        state: if allocated { "active_allocated" } else { "inactive" },
                        frames: if allocated { frames_at(address) } else { Vec::new() },
                    }
                })
                .collect();
            let allocated: i64 = blocks
                .iter()
                .filter(|block| block.state == "active_allocated")
                .map(|block| block.size)
                .sum();
            Segment {
                device,
                address: int(segment.base),
                total_size: int(segment.mapped),
                allocated_size: allocated,
                active_size: allocated,
                requested_size: allocated,
                stream: 0,
                segment_type: segment.pool,
                segment_pool_id: (0, 0),
                is_expandable: true,
                frames: Vec::new(),
                blocks,
                tag: segment.tag.clone(),
            }
        })
        .collect();
    let mut device_traces: Vec<Vec<TraceEntry>> = (0..=device.max(0)).map(|_| Vec::new()).collect();
    let start = history.started_unix_us;
    let live_at_end = snapshot.segments.iter().flat_map(|segment| {
        segment
            .blocks
            .iter()
            .filter(|block| block.state == BlockState::Allocated)
            .map(|block| (segment.base + block.offset, block.size))
    });
    if let Some(trace) = device_traces.last_mut() {
        let events = viewer_trace::viewer_events(&history.events, live_at_end);
        trace.extend(events.iter().map(|event| trace_entry(event, start)));
    }
    Snapshot {
        segments,
        device_traces,
    }
}

fn trace_entry(event: &HistoryEvent, start_unix_us: u64) -> TraceEntry {
    let action = event.action;
    TraceEntry {
        action: action.torch_name(),
        addr: int(event.address),
        size: int(event.size),
        stream: int(event.stream),
        time_us: int(start_unix_us.saturating_add(event.time_ns / 1000)),
        frames: event.backtrace.as_deref().map_or_else(Vec::new, frames),
        device_free: (action == HistoryAction::Oom).then(|| int(event.free)),
        user_metadata: action.user_metadata(),
        tag: event.tag.to_string(),
    }
}

/// `value` as the pickle's integer. Signed: serde-pickle writes a `u64`
/// of 2^31 or more in 9 bytes (a sign byte more), which the web viewer's
/// unpickler reads as a `BigInt` that its arithmetic then refuses; an
/// `i64` takes at most 8, a plain number there. Pool addresses and sizes
/// fit (a larger value is written as `i64::MAX`).
fn int(value: impl TryInto<i64>) -> i64 {
    value.try_into().unwrap_or(i64::MAX)
}

/// The frames of `backtrace`, innermost first (as torch's), read from its
/// text: `N: name` lines, each followed by an `at file:line:column` line
/// when the location is known.
fn frames(backtrace: &Backtrace) -> Vec<Frame> {
    let text = backtrace.to_string();
    let mut frames: Vec<Frame> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(location) = line.strip_prefix("at ") {
            let mut parts = location.rsplitn(3, ':');
            let (_column, line, file) = (parts.next(), parts.next(), parts.next());
            if let (Some(frame), Some(line), Some(file)) = (frames.last_mut(), line, file) {
                frame.filename = file.to_owned();
                frame.line = line.parse().unwrap_or(0);
            }
        } else if let Some((number, name)) = line.split_once(": ")
            && number.chars().all(|c| c.is_ascii_digit())
        {
            frames.push(Frame {
                filename: "??".to_owned(),
                line: 0,
                name: name.to_owned(),
            });
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backtrace_text_becomes_frames() {
        let frames = frames(&Backtrace::force_capture());
        // Captured here, so this test's function is one of the frames
        // (with debug info, at this file).
        let here = frames
            .iter()
            .find(|frame| frame.name.contains("backtrace_text_becomes_frames"));
        assert!(
            here.is_some(),
            "{:?}",
            frames.iter().map(|f| &f.name).collect::<Vec<_>>()
        );
    }
}
