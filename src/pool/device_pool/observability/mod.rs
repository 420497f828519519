//! Looking into a [`DevicePool`](super::DevicePool): the memory history
//! (`history.rs`, turned on and read in `recording.rs`), snapshots of its
//! segments and blocks (`snapshot.rs`) drawn as SVG (`snapshot_svg.rs`,
//! `timeline_svg.rs`), and the pickle PyTorch's memory viewer opens
//! (`torch_snapshot/`, with the feature `torch-snapshot`).

pub(super) mod history;
mod recording;
pub(super) mod snapshot;
mod snapshot_svg;
mod timeline_svg;
// Its dependencies (serde, serde-pickle) are the feature's.
#[cfg(feature = "torch-snapshot")]
mod torch_snapshot;

pub use history::{HistoryAction, HistoryEvent, HistoryOptions, PoolHistory};
pub use snapshot::{BlockSnapshot, BlockState, PoolSnapshot, SegmentSnapshot};
