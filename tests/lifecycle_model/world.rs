//! The driver: real safe objects side by side with the model of what they
//! must do, stepped together and compared after every step.

use crate::held::{HeldMapping, HeldRegistration, MapHow};
use crate::ops::{FreeHow, Step};
use ascend::host_register::AlignedHostBuf;
use ascend::share::{ImportedAlloc, ShareKind};
use ascend::stream::{Event, Stream};
use ascend::sys::{self, soft};
use ascend::testing::{Disposal, LifecycleOp, MapAccess};
use ascend::vmm::{Granularity, MemLocation, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Device, DeviceBuf, Error, PinnedHostBuf};
use proptest::prelude::*;
use proptest::sample::Index;
use std::collections::BTreeSet;
use std::rc::Rc;

#[path = "world/memory.rs"]
mod memory;
#[path = "world/streams.rs"]
mod streams;
#[path = "world/vmm.rs"]
mod vmm;

type Outcome = Result<(), TestCaseError>;

/// What a step must return.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Ok,
    /// Refused in Rust before any call.
    Invalid,
    /// Refused by the runtime: this API, this code.
    Code(&'static str, sys::aclError),
}

fn check<T>(what: &str, result: &ascend::Result<T>, expect: Expect) -> Outcome {
    let matches = match (result, expect) {
        (Ok(_), Expect::Ok) => true,
        (Err(Error::InvalidArgument { .. }), Expect::Invalid) => true,
        (Err(Error::Acl { api, code, .. }), Expect::Code(want_api, want_code)) => {
            *api == want_api && code.0 == want_code
        }
        _ => false,
    };
    let got = match result {
        Ok(_) => "Ok".to_string(),
        Err(error) => format!("{error:?}"),
    };
    prop_assert!(matches, "{what}: expected {expect:?}, got {got}");
    Ok(())
}

/// Disposal by `Drop`, which reports nothing.
fn dropped<T>(value: T) -> ascend::Result<()> {
    drop(value);
    Ok(())
}

/// A byte pattern from a seed.
fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

/// The model of one physical memory object (shared by every handle
/// reference to it).
struct Memory {
    size: usize,
    device: Option<i32>,
    bytes: Vec<u8>,
    known: Vec<bool>,
    refs: usize,
    mappings: usize,
    exported: bool,
}

impl Memory {
    fn alive(&self) -> bool {
        self.refs > 0 || self.mappings > 0
    }
}

struct RangeObj {
    id: u64,
    real: Rc<VirtualRange>,
    granules: usize,
    /// The device whose memory the range maps (while it maps any).
    device: Option<i32>,
    maps: usize,
}

struct PhysObj {
    id: u64,
    real: Rc<PhysicalAlloc>,
    memory: usize,
    maps: usize,
}

struct MapObj {
    held: HeldMapping,
    range: u64,
    physical: u64,
    memory: usize,
    offset: usize,
    accessible: bool,
}

struct BufObj {
    real: DeviceBuf<u8>,
    device: i32,
    bytes: Vec<u8>,
}

struct PinnedObj {
    real: PinnedHostBuf<u8>,
    device: i32,
    bytes: Vec<u8>,
}

struct RegObj {
    held: HeldRegistration,
    bytes: Vec<u8>,
}

struct StreamObj {
    real: Stream,
    device: i32,
}

struct EventObj {
    real: Event,
    device: i32,
}

/// Everything live in a case. Fields drop in order: borrowers first.
struct World {
    mappings: Vec<MapObj>,
    registrations: Vec<RegObj>,
    events: Vec<EventObj>,
    streams: Vec<StreamObj>,
    physicals: Vec<PhysObj>,
    ranges: Vec<RangeObj>,
    bufs: Vec<BufObj>,
    pinned: Vec<PinnedObj>,
    memories: Vec<Memory>,
    peers: BTreeSet<(i32, i32)>,
    granule: usize,
    baseline: soft::Live,
    next_id: u64,
}

impl Drop for World {
    fn drop(&mut self) {
        // Peer access is process-wide: leave none enabled for the next case.
        for &(from, to) in &self.peers {
            if let (Ok(from), Ok(to)) = (Device::new(from), Device::new(to)) {
                let _ = from.disable_peer_access(&to);
            }
        }
    }
}

fn device(id: i32) -> Device {
    Device::new(id).expect("a device of the software device")
}

/// Runs one case: every step on the real objects and the model.
pub fn run(steps: &[Step]) -> Outcome {
    let granule = PhysicalMemProp::device(&device(0))
        .granularity(Granularity::Minimum)
        .expect("granularity");
    let mut world = World {
        mappings: Vec::new(),
        registrations: Vec::new(),
        events: Vec::new(),
        streams: Vec::new(),
        physicals: Vec::new(),
        ranges: Vec::new(),
        bufs: Vec::new(),
        pinned: Vec::new(),
        memories: Vec::new(),
        peers: BTreeSet::new(),
        granule,
        baseline: soft::live(),
        next_id: 0,
    };
    for (number, step) in steps.iter().enumerate() {
        let what = format!("step {number} {step:?}");
        world.step(&what, step)?;
        world.check_counts(&what)?;
    }
    world.tear_down()
}

/// Picks an element of a non-empty length.
fn pick(index: &Index, len: usize) -> Option<usize> {
    (len > 0).then(|| index.index(len))
}

impl World {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn step(&mut self, what: &str, step: &Step) -> Outcome {
        match step {
            Step::Vmm(op) => self.vmm(what, op),
            Step::ProbeRelease { .. } | Step::ProbeMapOver { .. } => self.probe(what, step),
            Step::StreamNew { .. }
            | Step::StreamDestroy { .. }
            | Step::EventNew { .. }
            | Step::EventDestroy { .. }
            | Step::Upload { .. }
            | Step::Download { .. }
            | Step::Memset { .. }
            | Step::StreamCopy { .. }
            | Step::Record { .. } => self.stream_step(what, step),
            _ => self.memory_step(what, step),
        }
    }

    /// The index of a buffer on `device`, chosen by `index`.
    fn buf_on(&self, device: i32, index: &Index) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.bufs[b].device == device)
            .collect();
        pick(index, candidates.len()).map(|i| candidates[i])
    }

    /// The model's counts, relative to the baseline, against `soft::live()`.
    fn check_counts(&self, what: &str) -> Outcome {
        let live = soft::live();
        let base = &self.baseline;
        let alive: Vec<&Memory> = self.memories.iter().filter(|m| m.alive()).collect();
        let physical_bytes: u64 = alive.iter().map(|m| m.size as u64).sum();
        let exports = self.memories.iter().filter(|m| m.exported && m.refs > 0).count();
        let counts = [
            (
                "device_allocations",
                live.device_allocations,
                base.device_allocations + self.bufs.len(),
            ),
            (
                "host_allocations",
                live.host_allocations,
                base.host_allocations + self.pinned.len(),
            ),
            (
                "host_registrations",
                live.host_registrations,
                base.host_registrations + self.registrations.len(),
            ),
            (
                "physical_allocations",
                live.physical_allocations,
                base.physical_allocations + alive.len(),
            ),
            ("reservations", live.reservations, base.reservations + self.ranges.len()),
            ("mappings", live.mappings, base.mappings + self.mappings.len()),
            ("streams", live.streams, base.streams + self.streams.len()),
            ("events", live.events, base.events + self.events.len()),
            (
                "shareable_exports",
                live.shareable_exports,
                base.shareable_exports + exports,
            ),
            ("shareable_imports", live.shareable_imports, base.shareable_imports),
            ("contexts", live.contexts, base.contexts),
            ("ipc_keys", live.ipc_keys, base.ipc_keys),
            ("ipc_imports", live.ipc_imports, base.ipc_imports),
        ];
        for (name, actual, expected) in counts {
            prop_assert_eq!(actual, expected, "after {}: live {} differs from the model", what, name);
        }
        prop_assert_eq!(
            live.physical_bytes,
            base.physical_bytes + physical_bytes,
            "after {}: live physical_bytes differs from the model",
            what
        );
        Ok(())
    }

    /// Disposes of everything left, in a legal order, checking the counts
    /// return to the baseline.
    fn tear_down(mut self) -> Outcome {
        while let Some(obj) = self.mappings.pop() {
            check("tear-down unmap", &obj.held.unmap(), Expect::Ok)?;
        }
        while let Some(obj) = self.registrations.pop() {
            let (result, buffer) = obj.held.into_buffer(true);
            check("tear-down unregister", &result, Expect::Ok)?;
            prop_assert_eq!(&buffer[..], &obj.bytes[..], "tear-down: host bytes after unregistering");
        }
        self.events.clear();
        self.streams.clear();
        self.physicals.clear();
        self.ranges.clear();
        self.bufs.clear();
        self.pinned.clear();
        let live = soft::live();
        prop_assert_eq!(
            live,
            self.baseline,
            "after tear-down the live resources differ: {}",
            soft::leak_report()
        );
        Ok(())
    }
}
