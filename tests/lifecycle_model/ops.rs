//! The steps of a case: the VMM vocabulary of `ascend::testing` plus
//! device buffers, pinned host buffers, host registrations, streams,
//! events and peer access. Objects are named by `Index` into what is alive.

use crate::held::RegisterHow;
use ascend::testing::strategies::device_id;
use ascend::testing::{Disposal, LifecycleOp, OpBounds, lifecycle_op};
use proptest::prelude::*;
use proptest::sample::Index;

/// How a device or pinned buffer is freed.
#[derive(Debug, Clone, Copy)]
pub enum FreeHow {
    Drop,
    Free,
    FreeWithDeviceSync,
}

/// One step.
#[derive(Debug, Clone)]
pub enum Step {
    Vmm(LifecycleOp),
    /// `DeviceBuf::zeroed` (no seed) or `from_slice`.
    BufAlloc {
        device: i32,
        len: usize,
        seed: Option<u8>,
    },
    BufWrite {
        buf: Index,
        at: Index,
        len: usize,
        seed: u8,
    },
    BufRead {
        buf: Index,
    },
    /// `dst.copy_from_device(src)` over the shorter length.
    BufCopy {
        dst: Index,
        src: Index,
    },
    BufFree {
        buf: Index,
        how: FreeHow,
    },
    PeerEnable {
        from: i32,
        to: i32,
    },
    PeerDisable {
        from: i32,
        to: i32,
    },
    PinnedAlloc {
        device: i32,
        len: usize,
        seed: u8,
    },
    PinnedWrite {
        pinned: Index,
        seed: u8,
    },
    PinnedFree {
        pinned: Index,
        how: FreeHow,
    },
    Register {
        device: i32,
        pages: usize,
        how: RegisterHow,
        seed: u8,
    },
    /// Writes through the registration, then copies the registered bytes
    /// into a device buffer (they stay ordinary host memory for copies).
    RegisterUse {
        registration: Index,
        buf: Index,
        seed: u8,
    },
    Unregister {
        registration: Index,
        how: Disposal,
    },
    StreamNew {
        device: i32,
    },
    /// Pinned → device buffer on a stream of the buffer's device.
    Upload {
        stream: Index,
        pinned: Index,
        buf: Index,
    },
    /// Device buffer → pinned on a stream of the buffer's device.
    Download {
        stream: Index,
        buf: Index,
        pinned: Index,
    },
    Memset {
        stream: Index,
        buf: Index,
        value: u8,
    },
    /// Device → device on a stream, both buffers on the stream's device.
    StreamCopy {
        stream: Index,
        dst: Index,
        src: Index,
    },
    StreamDestroy {
        stream: Index,
        how: Disposal,
    },
    EventNew {
        device: i32,
    },
    /// Records an event of the stream's device in a scope, then waits for it.
    Record {
        stream: Index,
        event: Index,
    },
    EventDestroy {
        event: Index,
        how: Disposal,
    },
    /// Raw `aclrtReleaseMemAddress` of a range that still has mappings:
    /// the types forbid it, and the runtime must refuse it too.
    ProbeRelease {
        range: Index,
    },
    /// Raw `aclrtMapMem` over a live mapping (the safe API refuses the
    /// overlap in Rust first): the runtime must refuse it too.
    ProbeMapOver {
        mapping: Index,
    },
}

fn disposal() -> impl Strategy<Value = Disposal> {
    prop_oneof![Just(Disposal::Drop), Just(Disposal::Explicit)]
}

fn free_how() -> impl Strategy<Value = FreeHow> {
    prop_oneof![
        Just(FreeHow::Drop),
        Just(FreeHow::Free),
        Just(FreeHow::FreeWithDeviceSync)
    ]
}

fn register_how() -> impl Strategy<Value = RegisterHow> {
    prop_oneof![
        Just(RegisterHow::V1),
        Just(RegisterHow::V2Mapped),
        Just(RegisterHow::V2Pinned)
    ]
}

fn index() -> impl Strategy<Value = Index> {
    any::<Index>()
}

/// Buffers, pinned memory and registrations.
fn memory_step(devices: u32) -> impl Strategy<Value = Step> {
    let device = device_id(devices);
    prop_oneof![
        3 => (device.clone(), 1usize..=2048, proptest::option::of(any::<u8>()))
            .prop_map(|(device, len, seed)| Step::BufAlloc { device, len, seed }),
        2 => (index(), index(), 1usize..=512, any::<u8>())
            .prop_map(|(buf, at, len, seed)| Step::BufWrite { buf, at, len, seed }),
        2 => index().prop_map(|buf| Step::BufRead { buf }),
        2 => (index(), index()).prop_map(|(dst, src)| Step::BufCopy { dst, src }),
        2 => (index(), free_how()).prop_map(|(buf, how)| Step::BufFree { buf, how }),
        1 => (device.clone(), device.clone()).prop_map(|(from, to)| Step::PeerEnable { from, to }),
        1 => (device.clone(), device.clone()).prop_map(|(from, to)| Step::PeerDisable { from, to }),
        2 => (device.clone(), 1usize..=2048, any::<u8>())
            .prop_map(|(device, len, seed)| Step::PinnedAlloc { device, len, seed }),
        1 => (index(), any::<u8>()).prop_map(|(pinned, seed)| Step::PinnedWrite { pinned, seed }),
        2 => (index(), free_how()).prop_map(|(pinned, how)| Step::PinnedFree { pinned, how }),
        1 => (device, 1usize..=3, register_how(), any::<u8>())
            .prop_map(|(device, pages, how, seed)| Step::Register { device, pages, how, seed }),
        1 => (index(), index(), any::<u8>())
            .prop_map(|(registration, buf, seed)| Step::RegisterUse { registration, buf, seed }),
        1 => (index(), disposal()).prop_map(|(registration, how)| Step::Unregister { registration, how }),
    ]
}

/// Streams and events.
fn stream_step(devices: u32) -> impl Strategy<Value = Step> {
    let device = device_id(devices);
    prop_oneof![
        2 => device.clone().prop_map(|device| Step::StreamNew { device }),
        3 => (index(), index(), index()).prop_map(|(stream, pinned, buf)| Step::Upload { stream, pinned, buf }),
        3 => (index(), index(), index()).prop_map(|(stream, buf, pinned)| Step::Download { stream, buf, pinned }),
        1 => (index(), index(), any::<u8>()).prop_map(|(stream, buf, value)| Step::Memset { stream, buf, value }),
        1 => (index(), index(), index()).prop_map(|(stream, dst, src)| Step::StreamCopy { stream, dst, src }),
        1 => (index(), disposal()).prop_map(|(stream, how)| Step::StreamDestroy { stream, how }),
        1 => device.prop_map(|device| Step::EventNew { device }),
        1 => (index(), index()).prop_map(|(stream, event)| Step::Record { stream, event }),
        1 => (index(), disposal()).prop_map(|(event, how)| Step::EventDestroy { event, how }),
    ]
}

/// Sequences of up to `max` steps over `devices` devices.
pub fn steps(devices: u32, max: usize) -> impl Strategy<Value = Vec<Step>> {
    let bounds = OpBounds {
        devices,
        ..OpBounds::default()
    };
    let probe = prop_oneof![
        index().prop_map(|range| Step::ProbeRelease { range }),
        index().prop_map(|mapping| Step::ProbeMapOver { mapping }),
    ];
    let step = prop_oneof![
        10 => lifecycle_op(bounds).prop_map(Step::Vmm),
        6 => memory_step(devices),
        4 => stream_step(devices),
        1 => probe,
    ];
    proptest::collection::vec(step, 1..=max)
}
