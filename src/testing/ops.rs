//! A reusable lifecycle vocabulary: random sequences of VMM operations
//! ([`LifecycleOp`]) whose arguments are indices into whatever the driver
//! has alive, so that every interleaving and every drop order comes up.

use super::strategies::{access_descs, granule_multiple, physical_mem_prop};
use crate::share::ShareKind;
use crate::vmm::{AccessDesc, PhysicalMemProp};
use proptest::prelude::*;
use proptest::sample::Index;

/// How an owner is disposed of: by `Drop` (best effort, errors logged) or
/// by its explicit consuming method (`unmap`, `free`, `release`), whose
/// `Result` the driver checks.
///
/// A driver applies it to whichever owner a step disposes of:
///
/// ```
/// use ascend::testing::Disposal;
/// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
/// fn free(physical: PhysicalAlloc, how: Disposal) -> ascend::Result<()> {
///     match how {
///         Disposal::Drop => Ok(drop(physical)), // errors are only logged
///         Disposal::Explicit => physical.free(),  // errors are returned
///     }
/// }
/// let prop = PhysicalMemProp::device(&ascend::Device::new(0)?);
/// let granule = prop.round_up(1)?;
/// free(PhysicalAlloc::new(&prop, granule)?, Disposal::Drop)?;
/// free(PhysicalAlloc::new(&prop, granule)?, Disposal::Explicit)?;
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Disposal {
    /// Let it go out of scope.
    Drop,
    /// Call the consuming method and check its result.
    Explicit,
}

/// How a mapping is made.
///
/// ```
/// use ascend::testing::MapAccess;
/// use ascend::vmm::{MappedRegion, PhysicalAlloc, PhysicalMemProp, VirtualRange};
/// fn map<'a>(
///     range: &'a VirtualRange,
///     physical: &'a PhysicalAlloc,
///     access: MapAccess,
/// ) -> ascend::Result<MappedRegion<'a>> {
///     match access {
///         MapAccess::ReadWrite => range.map(0, physical),
///         MapAccess::NoAccess => range.map_no_access(0, physical),
///     }
/// }
/// let prop = PhysicalMemProp::device(&ascend::Device::new(0)?);
/// let granule = prop.round_up(1)?;
/// let (range, physical) = (VirtualRange::reserve(granule)?, PhysicalAlloc::new(&prop, granule)?);
/// let mut region = map(&range, &physical, MapAccess::ReadWrite)?;
/// region.as_mut_slice::<u8>()?.fill_bytes(7)?; // usable at once
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapAccess {
    /// [`VirtualRange::map`](crate::vmm::VirtualRange::map): readable and
    /// writable at once.
    ReadWrite,
    /// [`VirtualRange::map_no_access`](crate::vmm::VirtualRange::map_no_access):
    /// untouchable until [`LifecycleOp::SetAccess`].
    NoAccess,
}

/// One step of a VMM lifecycle. Sizes are in granules; `Index` values pick
/// among the objects alive at that step (a driver skips a step whose list
/// is empty), so a shrunk failing sequence stays meaningful.
///
/// A driver keeps three lists — ranges, physical allocations (including
/// retained handles), mappings — in creation order, and a reference model
/// of what each step must do. The sequences deliberately contain steps the
/// runtime refuses (overlapping mappings, mappings past a range's end, two
/// devices in one range, a second export of a handle, touching a mapping
/// before access is granted): a driver checks the exact error.
///
/// ```
/// use ascend::testing::{LifecycleOp, OpBounds, lifecycle_ops};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// let mut runner = TestRunner::deterministic();
/// let ops = lifecycle_ops(OpBounds::default(), 200).new_tree(&mut runner).unwrap().current();
/// let mut reserved = 0;
/// for op in &ops {
///     match op {
///         LifecycleOp::Reserve { granules } => reserved += granules,
///         LifecycleOp::Write { len, .. } | LifecycleOp::Read { len, .. } => assert!((1..=512).contains(len)),
///         LifecycleOp::SetAccess { grants, .. } => assert!(!grants.is_empty()),
///         _ => {} // a driver handles every step
///     }
/// }
/// assert!(reserved > 0); // 200 steps always reserve something
/// ```
#[derive(Debug, Clone)]
pub enum LifecycleOp {
    /// `VirtualRange::reserve` of `granules` granules.
    Reserve {
        /// Size in granules.
        granules: usize,
    },
    /// `PhysicalAlloc::new(&prop, granules × granule)`.
    Allocate {
        /// Properties (location and attribute).
        prop: PhysicalMemProp,
        /// Size in granules.
        granules: usize,
    },
    /// Maps a physical allocation into a range at a granule offset.
    Map {
        /// Which range.
        range: Index,
        /// Which physical allocation.
        physical: Index,
        /// Which granule of the range the mapping starts at.
        slot: Index,
        /// With or without access.
        access: MapAccess,
    },
    /// `MappedRegion::set_access` with these grants.
    SetAccess {
        /// Which mapping.
        mapping: Index,
        /// The grants (non-empty, distinct locations).
        grants: Vec<AccessDesc>,
    },
    /// Writes `len` bytes derived from `seed` at a byte offset of a mapping
    /// (clipped to its end).
    Write {
        /// Which mapping.
        mapping: Index,
        /// Which byte of the mapping to start at.
        at: Index,
        /// How many bytes.
        len: usize,
        /// Seed of the byte pattern.
        seed: u8,
    },
    /// Reads `len` bytes at a byte offset of a mapping and compares them
    /// with what the model knows.
    Read {
        /// Which mapping.
        mapping: Index,
        /// Which byte of the mapping to start at.
        at: Index,
        /// How many bytes.
        len: usize,
    },
    /// `MappedRegion::retain_physical`: a new owned reference to the mapped
    /// allocation (which may then be freed while still mapped).
    Retain {
        /// Which mapping.
        mapping: Index,
    },
    /// `PhysicalAlloc::export` (at most once per allocation per process).
    Export {
        /// Which physical allocation.
        physical: Index,
        /// Which kind of shareable handle.
        kind: ShareKind,
    },
    /// Unmaps a mapping.
    Unmap {
        /// Which mapping.
        mapping: Index,
        /// By drop or by `unmap`.
        how: Disposal,
    },
    /// Frees a physical allocation that no mapping borrows (the borrow
    /// rules forbid the others: a driver skips them).
    Free {
        /// Which physical allocation.
        physical: Index,
        /// By drop or by `free`.
        how: Disposal,
    },
    /// Releases a range that no mapping borrows (a driver skips the
    /// others).
    Release {
        /// Which range.
        range: Index,
        /// By drop or by `release`.
        how: Disposal,
    },
}

/// Bounds for [`lifecycle_ops`].
///
/// ```
/// use ascend::testing::{LifecycleOp, OpBounds, lifecycle_ops};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// let bounds = OpBounds { max_io: 16, max_range_granules: 2, ..OpBounds::default() };
/// assert_eq!(bounds.devices, 2);
/// let mut runner = TestRunner::deterministic();
/// let ops = lifecycle_ops(bounds, 100).new_tree(&mut runner).unwrap().current();
/// assert!(ops.iter().all(|op| match op {
///     LifecycleOp::Reserve { granules } => *granules <= 2,
///     LifecycleOp::Write { len, .. } | LifecycleOp::Read { len, .. } => *len <= 16,
///     _ => true,
/// }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpBounds {
    /// Number of devices properties may name (`Device::count()`).
    pub devices: u32,
    /// Largest range, in granules.
    pub max_range_granules: usize,
    /// Largest physical allocation, in granules.
    pub max_physical_granules: usize,
    /// Largest read or write, in bytes.
    pub max_io: usize,
}

impl Default for OpBounds {
    /// Two devices, ranges of up to 4 granules, allocations of up to 2,
    /// reads and writes of up to 512 bytes.
    fn default() -> Self {
        Self {
            devices: 2,
            max_range_granules: 4,
            max_physical_granules: 2,
            max_io: 512,
        }
    }
}

fn disposal() -> impl Strategy<Value = Disposal> + Clone {
    prop_oneof![Just(Disposal::Drop), Just(Disposal::Explicit)]
}

fn share_kind() -> impl Strategy<Value = ShareKind> + Clone {
    prop_oneof![
        Just(ShareKind::V1),
        Just(ShareKind::V2Default),
        Just(ShareKind::V2Fabric),
    ]
}

/// One [`LifecycleOp`] within `bounds`, weighted towards mapping, reading
/// and writing (creation and disposal come often enough that lists stay
/// short and every order of disposal appears).
///
/// ```
/// use ascend::testing::{LifecycleOp, OpBounds, lifecycle_op};
/// use proptest::prelude::*;
/// let one_device = OpBounds { devices: 1, ..OpBounds::default() };
/// proptest!(ProptestConfig::with_cases(32), |(op in lifecycle_op(one_device))| {
///     if let LifecycleOp::Allocate { prop, granules } = op {
///         prop_assert!((1..=2).contains(&granules));
///         prop_assert!(prop.location() != ascend::vmm::MemLocation::Device(1)); // one device only
///     }
/// });
/// ```
pub fn lifecycle_op(bounds: OpBounds) -> impl Strategy<Value = LifecycleOp> {
    let io = 1..=bounds.max_io.max(1);
    prop_oneof![
        2 => (1..=bounds.max_range_granules.max(1)).prop_map(|granules| LifecycleOp::Reserve { granules }),
        3 => (physical_mem_prop(bounds.devices), granule_multiple(1, bounds.max_physical_granules))
            .prop_map(|(prop, granules)| LifecycleOp::Allocate { prop, granules }),
        5 => (any::<Index>(), any::<Index>(), any::<Index>(), prop_oneof![
                3 => Just(MapAccess::ReadWrite),
                1 => Just(MapAccess::NoAccess),
            ])
            .prop_map(|(range, physical, slot, access)| LifecycleOp::Map { range, physical, slot, access }),
        1 => (any::<Index>(), access_descs(bounds.devices, 3))
            .prop_map(|(mapping, grants)| LifecycleOp::SetAccess { mapping, grants }),
        4 => (any::<Index>(), any::<Index>(), io.clone(), any::<u8>())
            .prop_map(|(mapping, at, len, seed)| LifecycleOp::Write { mapping, at, len, seed }),
        4 => (any::<Index>(), any::<Index>(), io)
            .prop_map(|(mapping, at, len)| LifecycleOp::Read { mapping, at, len }),
        1 => any::<Index>().prop_map(|mapping| LifecycleOp::Retain { mapping }),
        1 => (any::<Index>(), share_kind()).prop_map(|(physical, kind)| LifecycleOp::Export { physical, kind }),
        3 => (any::<Index>(), disposal()).prop_map(|(mapping, how)| LifecycleOp::Unmap { mapping, how }),
        2 => (any::<Index>(), disposal()).prop_map(|(physical, how)| LifecycleOp::Free { physical, how }),
        2 => (any::<Index>(), disposal()).prop_map(|(range, how)| LifecycleOp::Release { range, how }),
    ]
}

/// Sequences of up to `max_len` [`LifecycleOp`]s. A failing sequence
/// shrinks by dropping steps and simplifying each one.
///
/// ```
/// use ascend::testing::{LifecycleOp, OpBounds, lifecycle_ops};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// let mut runner = TestRunner::deterministic();
/// let ops = lifecycle_ops(OpBounds::default(), 40).new_tree(&mut runner).unwrap().current();
/// assert!(ops.len() <= 40);
/// for op in &ops {
///     if let LifecycleOp::Reserve { granules } = op {
///         assert!((1..=4).contains(granules));
///     }
/// }
/// ```
pub fn lifecycle_ops(bounds: OpBounds, max_len: usize) -> impl Strategy<Value = Vec<LifecycleOp>> {
    proptest::collection::vec(lifecycle_op(bounds), 0..=max_len)
}
