//! Virtual memory management: reserve addresses, allocate physical memory,
//! map one into the other.
//!
//! ```text
//! VirtualRange::reserve ─┐
//! PhysicalAlloc::new ────┼─> range.map(offset, &physical) -> MappedRegion<'_>
//!                        │      (borrows both: neither can be freed,
//!                        │       released or moved while the mapping lives)
//! drop(MappedRegion)  = aclrtUnmapMem
//! drop(PhysicalAlloc) = aclrtFreePhysical
//! drop(VirtualRange)  = aclrtReleaseMemAddress
//! ```
//!
//! The order reserve → allocate → map → unmap → free → release is enforced
//! by the borrow checker: any other order does not compile. For example, the
//! physical allocation cannot be freed while mapped:
//!
//! ```compile_fail,E0505
//! use ascend::Device;
//! use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
//! let device = Device::new(0)?;
//! let prop = PhysicalMemProp::device(&device);
//! let granule = prop.round_up(1)?;
//! let range = VirtualRange::reserve(granule)?;
//! let physical = PhysicalAlloc::new(&prop, granule)?;
//! let region = range.map(0, &physical)?;
//! physical.free()?; // error: cannot move out of `physical` because it is borrowed
//! drop(region);
//! # Ok::<(), ascend::Error>(())
//! ```
//!
//! Rules types cannot express — sizes and offsets that are multiples of the
//! granularity, mappings inside the range and not overlapping, one mapping
//! at a time per physical allocation — are checked in Rust before the call
//! and reported as [`Error::InvalidArgument`](crate::Error::InvalidArgument).
//!
//! Why one mapping at a time: a mapping hands out an exclusive view
//! ([`MappedRegion::as_mut_slice`]), and a second mapping of the same
//! physical memory (through the same [`PhysicalAlloc`], a handle retained
//! from the first mapping, or a second import of the same export) would be
//! a second exclusive view of the same bytes. Code that wants aliased
//! mappings on purpose uses the raw `ascend_sys` calls.

//! ## Owned forms
//!
//! Structures that keep mappings (a tensor's storage, an allocator's
//! segments) cannot hold a `MappedRegion<'a>` next to what it borrows.
//! [`OwnedMapping`] holds [`Arc`](std::sync::Arc) shares of its range and
//! physical memory instead: the order is the same — unmapped before the
//! memory is freed and the range released — but kept by ownership at run
//! time, and the mapping is `'static + Send + Sync`.
//! [`ExpandableSegment`] builds on it: one reservation that grows and
//! shrinks chunk by chunk, transactionally, with views across chunks.
//! [`SharedSegment`] shares one in an `Arc` and carves it into owned,
//! never-overlapping [`SegmentBlock`]s: the ground a sub-allocator stands
//! on, with no `unsafe` in the allocator.

mod granule;
mod map_slot;
pub(crate) mod mapped;
mod owned_mapping;
mod physical;
mod properties;
mod range;
mod segment;

pub use crate::memory::location::MemLocation;
pub use crate::share::segment_export::SegmentExport;
pub use crate::share::shared_segment::{SegmentBlock, SharedSegment};
pub(crate) use map_slot::MapSlot;
pub use mapped::{Access, AccessDesc, MappedRegion};
pub use owned_mapping::{OwnedMapping, UnmapError};
pub use physical::PhysicalAlloc;
pub use properties::{Granularity, MemAttr, PhysicalMemProp};
pub(crate) use range::sealed;
pub use range::{Mappable, VirtualRange};
pub use segment::ExpandableSegment;
