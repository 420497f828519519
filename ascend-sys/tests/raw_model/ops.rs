//! The operations a random sequence is made of, and their strategies.
//!
//! An operation names its targets by *choice* (a [`Pick`]: an index, taken
//! modulo the number of live objects of a kind, in creation order, plus an
//! offset), never by address:
//! the harness resolves a choice against the model when the operation runs,
//! so a sequence replays the same way whatever addresses the runtime hands
//! out, and shrinking (removing operations, lowering indices) keeps it
//! meaningful. Legal choices are the most likely; every illegal variant the
//! brief lists has its own, rarer, branch.

use proptest::prelude::*;

/// An index into the objects of a kind, taken modulo their number (it
/// shrinks towards the oldest object).
pub type Pick = u8;

/// An offset added to a chosen object's start.
#[derive(Debug, Clone, Copy)]
pub enum Delta {
    Start,
    /// A few bytes in (an interior address).
    Bytes(u16),
    /// Half a granule in (misaligned for VMM calls).
    HalfGranule,
    /// Whole granules in (the next slot of a range, or past its end).
    Granules(u8),
}

/// An address for a call that only looks it up (free, release, unmap,
/// map, access, retain).
#[derive(Debug, Clone, Copy)]
pub enum Spot {
    Null,
    Reservation(Pick, Delta),
    Mapping(Pick, Delta),
    /// The base of a released range.
    Released(Pick),
    DeviceAlloc(Pick, Delta),
    /// The start of a freed `aclrtMalloc` allocation.
    FreedDeviceAlloc(Pick),
    HostAlloc(Pick, Delta),
    /// The start of a freed `aclrtMallocHost` allocation.
    FreedHostAlloc(Pick),
    /// In the chosen range, the first granule-aligned address where the
    /// mapped allocation fits without overlapping a mapping (the range's
    /// base when there is none): a generator's aim at the legal path, not a
    /// prediction.
    FreeSlot(Pick),
}

/// A physical-memory handle.
#[derive(Debug, Clone, Copy)]
pub enum HandlePick {
    Null,
    /// One with references left.
    Live(Pick),
    /// Any handle the model has seen: live, freed while mapped, or gone.
    Seen(Pick),
    /// A value that was never a handle.
    Bogus,
}

/// Where a copy or memset starts in device memory.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Null,
    Reservation(Pick),
    Mapping(Pick),
    DeviceAlloc(Pick),
    FreedDeviceAlloc(Pick),
    /// Across the seam where a mapping ends and the next mapping of its
    /// range starts (a mapping when there is no such seam).
    Seam(Pick),
}

/// The offset of a copy inside its target (taken modulo the target's size).
#[derive(Debug, Clone, Copy)]
pub enum Offset {
    Start,
    Bytes(u32),
    /// `back` bytes before the end of granule `k` (copies across slots).
    BeforeGranuleEnd(u8, u16),
}

/// The length of a copy.
#[derive(Debug, Clone, Copy)]
pub enum Len {
    Small(u16),
    /// Exactly to the end of the target.
    ToEnd,
    /// Past the end of the target by this much.
    PastEnd(u16),
}

/// The host side of a copy.
#[derive(Debug, Clone, Copy)]
pub enum HostSide {
    /// A `Vec` (pageable memory).
    Pageable,
    /// A live `aclrtMallocHost` allocation, at an offset modulo its size.
    Pinned(Pick, u16),
}

/// How a copy's arguments are bent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyVariant {
    Normal,
    ZeroCount,
    /// `destMax` one less than `count`.
    ShortDestMax,
    /// `kind` 6, which `aclrtMemcpy` refuses.
    BadKind,
    NullHost,
}

/// A memory-access descriptor for `aclrtMemSetAccess`.
#[derive(Debug, Clone, Copy)]
pub enum DescPick {
    /// The mapped memory's own device.
    Owner,
    Device(u32),
    Host,
    /// A device id past the last device.
    BadDevice,
    /// Location type UNREGISTERED.
    BadType,
    /// READ only (only READWRITE is supported).
    BadFlags,
    /// Non-zero reserved bytes.
    BadRsv,
}

/// A location for `aclrtMemGetAccess`.
#[derive(Debug, Clone, Copy)]
pub enum LocPick {
    Owner,
    Device(u32),
    Host,
}

/// A device id for `aclrtMallocPhysical`.
#[derive(Debug, Clone, Copy)]
pub enum DevicePick {
    Id(u32),
    /// Exactly the device count (one past the last).
    Count,
    /// 64 (past the largest configurable count).
    Big,
    /// -1 as the `u32` the struct carries.
    Negative,
}

/// A broken field of `aclrtPhysicalMemProp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropFault {
    None,
    HandleType,
    AllocationType,
    LocationUnregistered,
    LocationManaged,
}

/// A size for `aclrtMalloc`.
#[derive(Debug, Clone, Copy)]
pub enum MallocSize {
    Bytes(u32),
    Zero,
    /// Near `usize::MAX`: rounding overflows.
    Overflow,
    /// More than the device holds.
    TooBig,
}

/// A size for a mapping relative to the physical allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapSize {
    Exact,
    /// One granule more.
    Larger,
    /// Half of it.
    Half,
    Zero,
}

/// An `expectPtr` for `aclrtReserveMemAddress`.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    None,
    /// The base of a live range (in use).
    LiveBase(Pick),
    /// Half a granule into a live range (misaligned and in use).
    Misaligned(Pick),
}

/// One raw call (or a small group: a copy also prepares its host side).
#[derive(Debug, Clone)]
pub enum Op {
    Malloc {
        size: MallocSize,
        policy: u32,
        null_out: bool,
    },
    Free(Spot),
    MallocHost {
        size: u16,
        null_out: bool,
    },
    FreeHost(Spot),
    MallocPhysical {
        /// Size in granules (0: size 0).
        granules: u8,
        /// Add 4 KiB (not a multiple of the granularity).
        odd: bool,
        too_big: bool,
        device: DevicePick,
        attr: u32,
        fault: PropFault,
        flags: bool,
        null_out: bool,
    },
    FreePhysical(HandlePick),
    Reserve {
        granules: u8,
        odd: bool,
        flags: u8,
        alignment: bool,
        expect: Expect,
        null_out: bool,
    },
    Release(Spot),
    Map {
        at: Spot,
        handle: HandlePick,
        size: MapSize,
        offset: bool,
        flags: bool,
        no_access: bool,
    },
    Unmap(Spot),
    SetAccess {
        at: Spot,
        size: MapSize,
        descs: Vec<DescPick>,
        null_desc: bool,
    },
    GetAccess {
        at: Spot,
        location: LocPick,
    },
    Retain(Spot),
    Write {
        target: Target,
        offset: Offset,
        len: Len,
        host: HostSide,
        seed: u8,
        variant: CopyVariant,
    },
    Read {
        target: Target,
        offset: Offset,
        len: Len,
        host: HostSide,
        variant: CopyVariant,
    },
    Memset {
        target: Target,
        offset: Offset,
        len: Len,
        /// Passed as an `i32` with high bits set (the runtime keeps 8).
        value: u16,
        variant: CopyVariant,
    },
}

fn delta() -> impl Strategy<Value = Delta> {
    prop_oneof![
        8 => Just(Delta::Start),
        1 => (1u16..4096).prop_map(Delta::Bytes),
        1 => Just(Delta::HalfGranule),
        2 => (1u8..=4).prop_map(Delta::Granules),
    ]
}

/// Any address a lookup may be given.
fn any_spot() -> impl Strategy<Value = Spot> {
    prop_oneof![
        1 => Just(Spot::Null),
        2 => (any::<Pick>(), delta()).prop_map(|(i, d)| Spot::Reservation(i, d)),
        2 => (any::<Pick>(), delta()).prop_map(|(i, d)| Spot::Mapping(i, d)),
        1 => any::<Pick>().prop_map(Spot::Released),
        1 => (any::<Pick>(), delta()).prop_map(|(i, d)| Spot::DeviceAlloc(i, d)),
        1 => any::<Pick>().prop_map(Spot::FreedDeviceAlloc),
        1 => (any::<Pick>(), delta()).prop_map(|(i, d)| Spot::HostAlloc(i, d)),
        1 => any::<Pick>().prop_map(Spot::FreedHostAlloc),
    ]
}

/// Addresses for lookups: mostly starts of live objects of the kind the
/// call wants (`favoured`), sometimes anything else.
fn spot(favoured: BoxedStrategy<Spot>) -> impl Strategy<Value = Spot> {
    prop_oneof![4 => favoured, 1 => any_spot()]
}

fn start_of(kind: fn(Pick, Delta) -> Spot) -> BoxedStrategy<Spot> {
    any::<Pick>().prop_map(move |i| kind(i, Delta::Start)).boxed()
}

/// A handle that is not a live one.
fn bad_handle() -> impl Strategy<Value = HandlePick> {
    prop_oneof![
        3 => any::<Pick>().prop_map(HandlePick::Seen),
        1 => Just(HandlePick::Bogus),
        1 => Just(HandlePick::Null),
    ]
}

fn handle() -> impl Strategy<Value = HandlePick> {
    prop_oneof![
        5 => any::<Pick>().prop_map(HandlePick::Live),
        1 => bad_handle(),
    ]
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        6 => any::<Pick>().prop_map(Target::Mapping),
        2 => any::<Pick>().prop_map(Target::Seam),
        3 => any::<Pick>().prop_map(Target::Reservation),
        5 => any::<Pick>().prop_map(Target::DeviceAlloc),
        1 => any::<Pick>().prop_map(Target::FreedDeviceAlloc),
        1 => Just(Target::Null),
    ]
}

fn offset() -> impl Strategy<Value = Offset> {
    prop_oneof![
        4 => Just(Offset::Start),
        3 => any::<u32>().prop_map(Offset::Bytes),
        3 => (0u8..4, 1u16..2048).prop_map(|(k, back)| Offset::BeforeGranuleEnd(k, back)),
    ]
}

fn len() -> impl Strategy<Value = Len> {
    prop_oneof![
        6 => (1u16..4096).prop_map(Len::Small),
        1 => Just(Len::ToEnd),
        2 => (1u16..64).prop_map(Len::PastEnd),
    ]
}

fn host_side() -> impl Strategy<Value = HostSide> {
    prop_oneof![
        3 => Just(HostSide::Pageable),
        1 => (any::<Pick>(), any::<u16>()).prop_map(|(i, off)| HostSide::Pinned(i, off)),
    ]
}

fn copy_variant() -> impl Strategy<Value = CopyVariant> {
    prop_oneof![
        16 => Just(CopyVariant::Normal),
        1 => Just(CopyVariant::ZeroCount),
        1 => Just(CopyVariant::ShortDestMax),
        1 => Just(CopyVariant::BadKind),
        1 => Just(CopyVariant::NullHost),
    ]
}

fn desc() -> impl Strategy<Value = DescPick> {
    prop_oneof![
        6 => Just(DescPick::Owner),
        2 => (0u32..2).prop_map(DescPick::Device),
        2 => Just(DescPick::Host),
        1 => Just(DescPick::BadDevice),
        1 => Just(DescPick::BadType),
        1 => Just(DescPick::BadFlags),
        1 => Just(DescPick::BadRsv),
    ]
}

fn malloc() -> impl Strategy<Value = Op> {
    let size = prop_oneof![
        12 => (1u32..70_000).prop_map(MallocSize::Bytes),
        1 => Just(MallocSize::Zero),
        1 => Just(MallocSize::Overflow),
        1 => Just(MallocSize::TooBig),
    ];
    // Values 0–7 are policies; anything else (a bit-OR included) is the
    // default one.
    let policy = prop_oneof![
        6 => Just(ascend_sys::ACL_MEM_MALLOC_HUGE_FIRST),
        2 => Just(ascend_sys::ACL_MEM_MALLOC_NORMAL_ONLY),
        1 => Just(0x1234u32),
        1 => Just(0x100 | ascend_sys::ACL_MEM_MALLOC_HUGE1G_ONLY),
    ];
    (size, policy, prop::bool::weighted(0.05)).prop_map(|(size, policy, null_out)| Op::Malloc {
        size,
        policy,
        null_out,
    })
}

fn malloc_host() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (1u16..16_384).prop_map(|size| Op::MallocHost { size, null_out: false }),
        1 => Just(Op::MallocHost { size: 0, null_out: false }),
        1 => (1u16..64).prop_map(|size| Op::MallocHost { size, null_out: true }),
    ]
}

fn legal_physical() -> impl Strategy<Value = Op> {
    let attr = prop_oneof![
        6 => Just(ascend_sys::ACL_MEM_HUGE),
        1 => Just(ascend_sys::ACL_MEM_NORMAL),
        1 => Just(ascend_sys::ACL_HBM_MEM_HUGE),
    ];
    let granules = prop_oneof![3 => Just(1u8), 1 => 2u8..=3];
    (granules, prop_oneof![3 => Just(0u32), 1 => Just(1u32)], attr).prop_map(|(granules, id, attr)| {
        Op::MallocPhysical {
            granules,
            odd: false,
            too_big: false,
            device: DevicePick::Id(id),
            attr,
            fault: PropFault::None,
            flags: false,
            null_out: false,
        }
    })
}

/// A legal `aclrtMallocPhysical` with one argument broken.
fn broken_physical() -> impl Strategy<Value = Op> {
    (legal_physical(), 0u8..16).prop_map(|(op, which)| {
        let Op::MallocPhysical {
            granules, device, attr, ..
        } = op
        else {
            return op;
        };
        let (mut granules, mut odd, mut too_big, mut device, mut attr) = (granules, false, false, device, attr);
        let (mut fault, mut flags, mut null_out) = (PropFault::None, false, false);
        match which {
            0 => granules = 0,
            1 => odd = true,
            2 => too_big = true,
            3 => device = DevicePick::Count,
            4 => device = DevicePick::Big,
            5 => device = DevicePick::Negative,
            6 => attr = ascend_sys::ACL_DDR_MEM_HUGE,
            7 => attr = ascend_sys::ACL_HBM_MEM,
            8 => attr = 99,
            9 => attr = ascend_sys::ACL_MEM_HUGE1G,
            10 => fault = PropFault::HandleType,
            11 => fault = PropFault::AllocationType,
            12 => fault = PropFault::LocationUnregistered,
            13 => fault = PropFault::LocationManaged,
            14 => flags = true,
            _ => null_out = true,
        }
        Op::MallocPhysical {
            granules,
            odd,
            too_big,
            device,
            attr,
            fault,
            flags,
            null_out,
        }
    })
}

fn legal_reserve() -> impl Strategy<Value = Op> {
    let granules = prop_oneof![1 => Just(1u8), 3 => 2u8..=4];
    (granules, prop_oneof![6 => Just(0u8), 1 => Just(1u8)]).prop_map(|(granules, flags)| Op::Reserve {
        granules,
        odd: false,
        flags,
        alignment: false,
        expect: Expect::None,
        null_out: false,
    })
}

/// A legal `aclrtReserveMemAddress` with one argument broken.
fn broken_reserve() -> impl Strategy<Value = Op> {
    (legal_reserve(), 0u8..7, any::<Pick>()).prop_map(|(op, which, pick)| {
        let Op::Reserve {
            mut granules,
            mut odd,
            mut flags,
            mut alignment,
            mut expect,
            mut null_out,
        } = op
        else {
            return op;
        };
        match which {
            0 => granules = 0,
            1 => odd = true,
            2 => flags = 2,
            3 => alignment = true,
            4 => expect = Expect::LiveBase(pick),
            5 => expect = Expect::Misaligned(pick),
            _ => null_out = true,
        }
        Op::Reserve {
            granules,
            odd,
            flags,
            alignment,
            expect,
            null_out,
        }
    })
}

fn legal_map() -> impl Strategy<Value = Op> {
    let at = prop_oneof![
        3 => any::<Pick>().prop_map(Spot::FreeSlot),
        1 => (any::<Pick>(), 0u8..4).prop_map(|(range, slot)| Spot::Reservation(range, Delta::Granules(slot))),
    ];
    (at, any::<Pick>(), prop::bool::weighted(0.25)).prop_map(|(at, handle, no_access)| Op::Map {
        at,
        handle: HandlePick::Live(handle),
        size: MapSize::Exact,
        offset: false,
        flags: false,
        no_access,
    })
}

/// A legal-looking `aclrtMapMem` with one argument broken (an overlap or a
/// mapping past the end comes from the legal one's own slot choice).
fn broken_map() -> impl Strategy<Value = Op> {
    (legal_map(), 0u8..7, any_spot(), bad_handle()).prop_map(|(op, which, spot, bad)| {
        let Op::Map {
            mut at,
            mut handle,
            mut size,
            mut offset,
            mut flags,
            no_access,
        } = op
        else {
            return op;
        };
        match which {
            0 => at = spot,
            1 => handle = bad,
            2 => size = MapSize::Larger,
            3 => size = MapSize::Half,
            4 => size = MapSize::Zero,
            5 => offset = true,
            _ => flags = true,
        }
        Op::Map {
            at,
            handle,
            size,
            offset,
            flags,
            no_access,
        }
    })
}

fn set_access() -> impl Strategy<Value = Op> {
    let size = prop_oneof![14 => Just(MapSize::Exact), 1 => Just(MapSize::Half), 1 => Just(MapSize::Larger)];
    let descs = prop_oneof![1 => Just(Vec::new()), 14 => prop::collection::vec(desc(), 1..=2)];
    (spot(start_of(Spot::Mapping)), size, descs, prop::bool::weighted(0.05)).prop_map(|(at, size, descs, null_desc)| {
        Op::SetAccess {
            at,
            size,
            descs,
            null_desc,
        }
    })
}

fn write() -> impl Strategy<Value = Op> {
    (target(), offset(), len(), host_side(), any::<u8>(), copy_variant()).prop_map(
        |(target, offset, len, host, seed, variant)| Op::Write {
            target,
            offset,
            len,
            host,
            seed,
            variant,
        },
    )
}

fn read() -> impl Strategy<Value = Op> {
    (target(), offset(), len(), host_side(), copy_variant()).prop_map(|(target, offset, len, host, variant)| Op::Read {
        target,
        offset,
        len,
        host,
        variant,
    })
}

fn memset() -> impl Strategy<Value = Op> {
    let variant = prop_oneof![
        14 => Just(CopyVariant::Normal),
        1 => Just(CopyVariant::ZeroCount),
        1 => Just(CopyVariant::ShortDestMax),
    ];
    (target(), offset(), len(), any::<u16>(), variant).prop_map(|(target, offset, len, value, variant)| Op::Memset {
        target,
        offset,
        len,
        value,
        variant,
    })
}

fn location() -> impl Strategy<Value = LocPick> {
    prop_oneof![
        Just(LocPick::Owner),
        (0u32..2).prop_map(LocPick::Device),
        Just(LocPick::Host),
    ]
}

/// One operation, weighted towards building up and using VMM state (the
/// destructive calls are rarer than the constructive ones, so sequences
/// reach deep states).
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => malloc(),
        2 => spot(start_of(Spot::DeviceAlloc)).prop_map(Op::Free),
        2 => malloc_host(),
        1 => spot(start_of(Spot::HostAlloc)).prop_map(Op::FreeHost),
        6 => legal_physical(),
        2 => broken_physical(),
        2 => handle().prop_map(Op::FreePhysical),
        5 => legal_reserve(),
        1 => broken_reserve(),
        2 => spot(start_of(Spot::Reservation)).prop_map(Op::Release),
        10 => legal_map(),
        3 => broken_map(),
        3 => spot(
            prop_oneof![
                3 => start_of(Spot::Mapping),
                1 => (any::<Pick>(), prop_oneof![(1u16..4096).prop_map(Delta::Bytes), Just(Delta::HalfGranule)])
                    .prop_map(|(i, d)| Spot::Mapping(i, d)),
            ]
            .boxed()
        )
        .prop_map(Op::Unmap),
        3 => set_access(),
        2 => (spot(start_of(Spot::Mapping)), location()).prop_map(|(at, location)| Op::GetAccess { at, location }),
        2 => spot(
            prop_oneof![
                start_of(Spot::Mapping),
                (any::<Pick>(), delta()).prop_map(|(i, d)| Spot::Mapping(i, d)),
            ]
            .boxed()
        )
        .prop_map(Op::Retain),
        8 => write(),
        6 => read(),
        3 => memset(),
    ]
}

/// A case: a few constructive calls first (ranges, physical memory, device
/// and host allocations), so that the random part starts with something to
/// map, copy into and free; then up to `max` random operations. Both parts
/// shrink.
pub fn sequence(max: usize) -> impl Strategy<Value = Vec<Op>> {
    let constructive = prop_oneof![
        3 => legal_reserve(),
        3 => legal_physical(),
        1 => malloc(),
        1 => malloc_host(),
    ];
    (
        prop::collection::vec(constructive, 0..=6),
        prop::collection::vec(op(), 1..=max),
    )
        .prop_map(|(mut prelude, body)| {
            prelude.extend(body);
            prelude
        })
}
