//! Runs a sequence of [`Op`]s against the software device and the model
//! side by side: resolve the op's choices against the model, ask the model
//! for the exact outcome, make the real call, compare the code (and the
//! data read, and the handle or flag returned), commit the effect, then
//! compare `soft::live()` with the model's counts.
//!
//! Resources the runtime created although the model said the call must
//! fail ("strays") are remembered so that the clean-up frees them too: a
//! failing case must not leak into the next one while proptest shrinks.

use super::model::{Env, Model, Outcome, Piece};
use super::ops::*;
use ascend_sys::*;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;

/// How often each interesting event happened since [`take_coverage`]: the
/// random test checks that its sequences reach every rule it claims to
/// test, not only the easy refusals.
static COVERAGE: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());

fn note(event: &'static str) {
    *COVERAGE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(event)
        .or_default() += 1;
}

/// The events counted so far, and a fresh count.
pub fn take_coverage() -> BTreeMap<&'static str, u64> {
    std::mem::take(&mut *COVERAGE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// A value that was never a physical-memory handle.
const BOGUS_HANDLE: usize = 0x7777_0000_0001_0000;

/// `aclrtMapMem` and `aclrtMemMapNoAccess`.
type MapFn = unsafe fn(*mut c_void, usize, usize, aclrtDrvMemHandle, u64) -> aclError;

/// What one step found wrong.
type Failure = String;

/// Resources the runtime created where the model predicted a failure.
#[derive(Default)]
struct Strays {
    device: Vec<usize>,
    host: Vec<usize>,
    handles: Vec<usize>,
    reservations: Vec<usize>,
    mappings: Vec<usize>,
}

/// The software device and the model, side by side.
pub struct World {
    pub model: Model,
    baseline: soft::Live,
    /// The primary context of each device; device 0's is current between
    /// steps.
    contexts: Vec<aclrtContext>,
    strays: Strays,
    finished: bool,
}

/// The `index`th of `items` (modulo their number), or `None` when there
/// are none.
fn pick<T>(items: &[T], index: Pick) -> Option<&T> {
    (!items.is_empty()).then(|| &items[usize::from(index) % items.len()])
}

/// A deterministic byte pattern.
fn pattern(seed: u8, len: usize) -> Vec<u8> {
    let block: Vec<u8> = (0..4099u32)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed ^ (i >> 8) as u8)
        .collect();
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let take = (len - out.len()).min(block.len());
        out.extend_from_slice(&block[..take]);
    }
    out
}

fn describe<T: std::fmt::Debug>(outcome: &Outcome<T>) -> String {
    match outcome {
        Ok(value) => format!("success ({value:?})"),
        Err(code) => format!("error {code}"),
    }
}

/// Compares a real code with the model's prediction: `Ok(Some(value))` for
/// a predicted success that happened, `Ok(None)` for the predicted error.
fn compare<T: std::fmt::Debug>(call: &str, predicted: Outcome<T>, actual: aclError) -> Result<Option<T>, Failure> {
    match predicted {
        Ok(value) if actual == ACL_SUCCESS => Ok(Some(value)),
        Err(code) if actual == code => Ok(None),
        other => Err(format!(
            "{call} returned {actual}, the model expected {}{}",
            describe(&other),
            if actual == ACL_SUCCESS {
                String::new()
            } else {
                format!(" (runtime message: {})", soft::recent_error().unwrap_or_default())
            }
        )),
    }
}

impl World {
    /// A world whose baseline is the live resources now.
    pub fn new(env: Env, contexts: Vec<aclrtContext>) -> Self {
        Self {
            model: Model::new(env),
            baseline: soft::live(),
            contexts,
            strays: Strays::default(),
            finished: false,
        }
    }

    fn granularity(&self) -> usize {
        self.model.env.granularity
    }

    fn delta(&self, delta: Delta) -> usize {
        match delta {
            Delta::Start => 0,
            Delta::Bytes(n) => usize::from(n),
            Delta::HalfGranule => self.granularity() / 2,
            Delta::Granules(k) => usize::from(k) * self.granularity(),
        }
    }

    /// The address a [`Spot`] names now (0 when nothing of its kind exists).
    fn spot(&self, spot: Spot) -> usize {
        let m = &self.model;
        let found = match spot {
            Spot::Null => None,
            Spot::Reservation(i, d) => pick(&m.reservations, i).map(|r| r.base + self.delta(d)),
            Spot::Mapping(i, d) => pick(&m.mappings, i).map(|x| x.address + self.delta(d)),
            Spot::Released(i) => pick(&m.released, i).copied(),
            Spot::DeviceAlloc(i, d) => pick(&m.device_allocs, i).map(|a| a.address + self.delta(d)),
            Spot::FreedDeviceAlloc(i) => pick(&m.freed_device, i).map(|(address, _)| *address),
            Spot::HostAlloc(i, d) => pick(&m.host_allocs, i).map(|a| a.address + self.delta(d)),
            Spot::FreedHostAlloc(i) => pick(&m.freed_host, i).copied(),
            Spot::FreeSlot(i) => pick(&m.reservations, i).map(|r| r.base),
        };
        found.unwrap_or(0)
    }

    /// [`Spot::FreeSlot`] for `size` bytes in the range starting at `base`.
    fn free_slot(&self, base: usize, size: usize) -> usize {
        let granule = self.granularity();
        let Some(range) = self.model.reservations.iter().find(|r| r.base == base) else {
            return base;
        };
        (0..range.size / granule)
            .map(|k| base + k * granule)
            .find(|&address| {
                address + size <= base + range.size
                    && !self
                        .model
                        .mappings
                        .iter()
                        .any(|x| address < x.address + x.size && x.address < address + size)
            })
            .unwrap_or(base)
    }

    fn handle(&self, handle: HandlePick) -> usize {
        let m = &self.model;
        match handle {
            HandlePick::Null => 0,
            HandlePick::Bogus => BOGUS_HANDLE,
            HandlePick::Live(i) => {
                let live: Vec<usize> = m.physicals.iter().filter(|p| p.refs > 0).map(|p| p.handle).collect();
                pick(&live, i).copied().unwrap_or(BOGUS_HANDLE)
            }
            HandlePick::Seen(i) => {
                let seen: Vec<usize> = m
                    .physicals
                    .iter()
                    .map(|p| p.handle)
                    .chain(m.gone_handles.iter().copied())
                    .collect();
                pick(&seen, i).copied().unwrap_or(BOGUS_HANDLE)
            }
        }
    }

    /// The start and size of a copy's target (`None` for NULL). When
    /// nothing of the chosen kind exists, the same pick goes to the next
    /// kind that has something (mapping, range, allocation, freed
    /// allocation), so that few copies degenerate into NULL.
    fn target(&self, target: Target) -> Option<(usize, usize)> {
        let m = &self.model;
        let in_kind = |kind: usize, i: Pick| match kind {
            0 => pick(&m.mappings, i).map(|x| (x.address, x.size)),
            1 => pick(&m.reservations, i).map(|r| (r.base, r.size)),
            2 => pick(&m.device_allocs, i).map(|a| (a.address, a.size)),
            _ => pick(&m.freed_device, i).copied(),
        };
        let (first, i) = match target {
            Target::Null => return None,
            Target::Mapping(i) | Target::Seam(i) => (0, i),
            Target::Reservation(i) => (1, i),
            Target::DeviceAlloc(i) => (2, i),
            Target::FreedDeviceAlloc(i) => (3, i),
        };
        (0..4).find_map(|step| in_kind((first + step) % 4, i))
    }

    /// The device address and length of a copy: always starting inside a
    /// live reservation, a live allocation or a freed allocation's arena
    /// range, never in memory the process does not own.
    fn device_span(&self, target: Target, offset: Offset, len: Len) -> (usize, usize) {
        if let Target::Seam(i) = target
            && let Some(seam) = self.seam(i)
        {
            // 1..=2048 bytes before the seam, 1..=2048 bytes after it.
            let before = 1 + match offset {
                Offset::Start => 0,
                Offset::Bytes(n) => n as usize,
                Offset::BeforeGranuleEnd(_, back) => usize::from(back),
            } % 2048;
            let after = 1 + match len {
                Len::Small(n) | Len::PastEnd(n) => usize::from(n),
                Len::ToEnd => 0,
            } % 2048;
            return (seam - before, before + after);
        }
        let Some((start, extent)) = self.target(target) else {
            let len = match len {
                Len::Small(n) | Len::PastEnd(n) => usize::from(n),
                Len::ToEnd => 1,
            };
            return (0, len);
        };
        let at = match offset {
            Offset::Start => 0,
            Offset::Bytes(n) => n as usize % extent,
            Offset::BeforeGranuleEnd(k, back) => {
                ((usize::from(k) + 1) * self.granularity()).saturating_sub(usize::from(back)) % extent
            }
        };
        let len = match len {
            Len::Small(n) => usize::from(n),
            Len::ToEnd => extent - at,
            Len::PastEnd(n) => extent - at + usize::from(n),
        };
        (start + at, len)
    }

    /// The `i`th address (modulo their number) where one mapping ends and
    /// another begins.
    fn seam(&self, i: Pick) -> Option<usize> {
        let m = &self.model;
        let seams: Vec<usize> = m
            .mappings
            .iter()
            .map(|x| x.address + x.size)
            .filter(|end| m.mappings.iter().any(|y| y.address == *end))
            .collect();
        pick(&seams, i).copied()
    }

    /// The host address of a copy's host side: a live pinned allocation at
    /// an offset inside it, or `None` for pageable memory.
    fn pinned(&self, host: HostSide) -> Option<(usize, usize)> {
        let HostSide::Pinned(i, offset) = host else {
            return None;
        };
        pick(&self.model.host_allocs, i).map(|alloc| {
            let at = usize::from(offset) % alloc.size;
            (alloc.address + at, alloc.size - at)
        })
    }

    /// Makes `device` current (through its primary context).
    fn switch_to(&self, device: i32) {
        if let Some(&context) = self.contexts.get(device as usize) {
            // SAFETY: a live primary context (the devices stay set).
            let code = unsafe { aclrtSetCurrentContext(context) };
            assert_eq!(code, ACL_SUCCESS, "aclrtSetCurrentContext({device})");
        }
    }

    /// Runs one operation.
    pub fn step(&mut self, op: &Op) -> Result<(), Failure> {
        match op {
            Op::Malloc { size, policy, null_out } => self.malloc(*size, *policy, *null_out),
            Op::Free(at) => self.free(self.spot(*at)),
            Op::MallocHost { size, null_out } => self.malloc_host(usize::from(*size), *null_out),
            Op::FreeHost(at) => self.free_host(self.spot(*at)),
            Op::MallocPhysical {
                granules,
                odd,
                too_big,
                device,
                attr,
                fault,
                flags,
                null_out,
            } => self.malloc_physical(*granules, *odd, *too_big, *device, *attr, *fault, *flags, *null_out),
            Op::FreePhysical(handle) => self.free_physical(self.handle(*handle)),
            Op::Reserve {
                granules,
                odd,
                flags,
                alignment,
                expect,
                null_out,
            } => self.reserve(*granules, *odd, *flags, *alignment, *expect, *null_out),
            Op::Release(at) => self.release(self.spot(*at)),
            Op::Map {
                at,
                handle,
                size,
                offset,
                flags,
                no_access,
            } => {
                let handle = self.handle(*handle);
                let mut address = self.spot(*at);
                if let (Spot::FreeSlot(_), Some(physical)) =
                    (at, self.model.physicals.iter().find(|p| p.handle == handle))
                {
                    address = self.free_slot(address, physical.size);
                }
                self.map(address, handle, *size, *offset, *flags, *no_access)
            }
            Op::Unmap(at) => self.unmap(self.spot(*at)),
            Op::SetAccess {
                at,
                size,
                descs,
                null_desc,
            } => self.set_access(self.spot(*at), *size, descs, *null_desc),
            Op::GetAccess { at, location } => self.get_access(self.spot(*at), *location),
            Op::Retain(at) => self.retain(self.spot(*at)),
            Op::Write {
                target,
                offset,
                len,
                host,
                seed,
                variant,
            } => {
                let (device, len) = self.device_span(*target, *offset, *len);
                self.write(device, len, *host, *seed, *variant)
            }
            Op::Read {
                target,
                offset,
                len,
                host,
                variant,
            } => {
                let (device, len) = self.device_span(*target, *offset, *len);
                self.read(device, len, *host, *variant)
            }
            Op::Memset {
                target,
                offset,
                len,
                value,
                variant,
            } => {
                let (device, len) = self.device_span(*target, *offset, *len);
                self.memset(device, len, *value, *variant)
            }
        }
    }

    fn malloc(&mut self, size: MallocSize, policy: u32, null_out: bool) -> Result<(), Failure> {
        let size = match size {
            MallocSize::Bytes(n) => n as usize,
            MallocSize::Zero => 0,
            MallocSize::Overflow => usize::MAX - 7,
            MallocSize::TooBig => self.model.env.capacity + 4096,
        };
        let predicted = self.model.malloc(null_out, size, policy, 0);
        let mut address = null_mut();
        let out: *mut *mut c_void = if null_out { null_mut() } else { &mut address };
        // SAFETY: `out` is NULL or a valid out-pointer.
        let code = unsafe { aclrtMalloc(out, size, policy) };
        if code == ACL_SUCCESS && predicted.is_err() {
            self.strays.device.push(address as usize);
        }
        let call = format!("aclrtMalloc(size {size}, policy {policy:#x})");
        if let Some(reserved) = compare(&call, predicted, code)? {
            if !(address as usize).is_multiple_of(512) {
                return Err(format!("{call} returned {address:?}, not 512-byte aligned"));
            }
            self.model.commit_malloc(address as usize, reserved, 0);
            note("aclrtMalloc succeeded");
        } else {
            note("aclrtMalloc refused");
        }
        Ok(())
    }

    fn free(&mut self, address: usize) -> Result<(), Failure> {
        let predicted = self.model.free(address);
        // SAFETY: the runtime validates the pointer; nothing is dereferenced.
        let code = unsafe { aclrtFree(address as *mut c_void) };
        if let Some(index) = compare(&format!("aclrtFree({address:#x})"), predicted, code)? {
            self.model.commit_free(index);
            note("aclrtFree succeeded");
        } else {
            note("aclrtFree refused");
        }
        Ok(())
    }

    fn malloc_host(&mut self, size: usize, null_out: bool) -> Result<(), Failure> {
        let predicted = self.model.malloc_host(null_out, size);
        let mut address = null_mut();
        let out: *mut *mut c_void = if null_out { null_mut() } else { &mut address };
        // SAFETY: `out` is NULL or a valid out-pointer.
        let code = unsafe { aclrtMallocHost(out, size) };
        if code == ACL_SUCCESS && predicted.is_err() {
            self.strays.host.push(address as usize);
        }
        let call = format!("aclrtMallocHost(size {size})");
        if let Some(rounded) = compare(&call, predicted, code)? {
            if !(address as usize).is_multiple_of(64) {
                return Err(format!("{call} returned {address:?}, not 64-byte aligned"));
            }
            self.model.commit_malloc_host(address as usize, rounded);
        }
        Ok(())
    }

    fn free_host(&mut self, address: usize) -> Result<(), Failure> {
        let predicted = self.model.free_host(address);
        // SAFETY: the runtime validates the pointer against its table; every
        // address the model names is a table lookup, never host memory that
        // something else owns.
        let code = unsafe { aclrtFreeHost(address as *mut c_void) };
        if let Some(index) = compare(&format!("aclrtFreeHost({address:#x})"), predicted, code)? {
            self.model.commit_free_host(index);
            note("aclrtFreeHost succeeded");
        } else {
            note("aclrtFreeHost refused");
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn malloc_physical(
        &mut self,
        granules: u8,
        odd: bool,
        too_big: bool,
        device: DevicePick,
        attr: u32,
        fault: PropFault,
        flags: bool,
        null_out: bool,
    ) -> Result<(), Failure> {
        let env = &self.model.env;
        let granule = env.granularity_of(attr).unwrap_or(env.granularity);
        let size = if too_big {
            (env.capacity + 1).next_multiple_of(granule)
        } else {
            usize::from(granules) * env.granularity + if odd { 4096 } else { 0 }
        };
        let id = match device {
            DevicePick::Id(id) => id,
            DevicePick::Count => env.device_count,
            DevicePick::Big => 64,
            DevicePick::Negative => u32::MAX,
        };
        let prop = aclrtPhysicalMemProp {
            handleType: if fault == PropFault::HandleType {
                ACL_MEM_HANDLE_TYPE_POSIX
            } else {
                ACL_MEM_HANDLE_TYPE_NONE
            },
            allocationType: if fault == PropFault::AllocationType {
                1
            } else {
                ACL_MEM_ALLOCATION_TYPE_PINNED
            },
            memAttr: attr,
            location: aclrtMemLocation {
                id,
                type_: match fault {
                    PropFault::LocationUnregistered => ACL_MEM_LOCATION_TYPE_UNREGISTERED,
                    PropFault::LocationManaged => ACL_MEM_LOCATION_TYPE_MANAGED,
                    _ => ACL_MEM_LOCATION_TYPE_DEVICE,
                },
            },
            reserve: 0,
        };
        let flags = u64::from(flags);
        let predicted = self.model.malloc_physical(null_out, size, &prop, flags);
        let mut handle = null_mut();
        let out: *mut aclrtDrvMemHandle = if null_out { null_mut() } else { &mut handle };
        // SAFETY: `out` is NULL or a valid out-pointer; `prop` is valid.
        let code = unsafe { aclrtMallocPhysical(out, size, &prop, flags) };
        if code == ACL_SUCCESS && predicted.is_err() {
            self.strays.handles.push(handle as usize);
        }
        let call = format!("aclrtMallocPhysical(size {size:#x}, device {id}, attr {attr}, {fault:?}, flags {flags})");
        if let Some((device, granularity)) = compare(&call, predicted, code)? {
            if handle.is_null() {
                return Err(format!("{call} succeeded with a NULL handle"));
            }
            self.model
                .commit_malloc_physical(handle as usize, size, device, granularity);
            note("aclrtMallocPhysical succeeded");
        } else {
            note("aclrtMallocPhysical refused");
        }
        Ok(())
    }

    fn free_physical(&mut self, handle: usize) -> Result<(), Failure> {
        let predicted = self.model.free_physical(handle);
        let mapped = self
            .model
            .physicals
            .iter()
            .any(|p| p.handle == handle && p.mappings > 0);
        // SAFETY: handles are opaque tokens the runtime validates.
        let code = unsafe { aclrtFreePhysical(handle as aclrtDrvMemHandle) };
        if compare(&format!("aclrtFreePhysical({handle:#x})"), predicted, code)?.is_some() {
            self.model.commit_free_physical(handle);
            note(if mapped {
                "aclrtFreePhysical while mapped (deferred)"
            } else {
                "aclrtFreePhysical succeeded"
            });
        } else {
            note(if mapped {
                "aclrtFreePhysical of a spent handle still mapped refused"
            } else {
                "aclrtFreePhysical refused"
            });
        }
        Ok(())
    }

    fn reserve(
        &mut self,
        granules: u8,
        odd: bool,
        flags: u8,
        alignment: bool,
        expect: Expect,
        null_out: bool,
    ) -> Result<(), Failure> {
        let granule = self.granularity();
        let size = usize::from(granules) * granule + if odd { 4096 } else { 0 };
        let alignment = if alignment { granule } else { 0 };
        let expect = match expect {
            Expect::None => 0,
            Expect::LiveBase(i) => pick(&self.model.reservations, i).map_or(0, |r| r.base),
            Expect::Misaligned(i) => pick(&self.model.reservations, i).map_or(0, |r| r.base + granule / 2),
        };
        let flags = u64::from(flags);
        let predicted = self.model.reserve(null_out, size, alignment, expect, flags);
        let mut base = null_mut();
        let out: *mut *mut c_void = if null_out { null_mut() } else { &mut base };
        // SAFETY: `out` is NULL or a valid out-pointer; `expect` is a hint
        // the runtime checks (it never replaces a mapping).
        let code = unsafe { aclrtReserveMemAddress(out, size, alignment, expect as *mut c_void, flags) };
        if code == ACL_SUCCESS && predicted.is_err() {
            self.strays.reservations.push(base as usize);
        }
        let call = format!(
            "aclrtReserveMemAddress(size {size:#x}, alignment {alignment:#x}, expectPtr {expect:#x}, flags {flags})"
        );
        if let Some(exact) = compare(&call, predicted, code)? {
            let base = base as usize;
            let align = self.model.reservation_alignment(size);
            if !base.is_multiple_of(align) || exact.is_some_and(|exact| exact != base) {
                return Err(format!(
                    "{call} returned {base:#x}: the model wants a multiple of {align:#x} (and {exact:x?})"
                ));
            }
            self.model.commit_reserve(base, size);
            note("aclrtReserveMemAddress succeeded");
        } else {
            note("aclrtReserveMemAddress refused");
        }
        Ok(())
    }

    fn release(&mut self, address: usize) -> Result<(), Failure> {
        let predicted = self.model.release(address);
        let mapped = self
            .model
            .reservations
            .iter()
            .any(|r| r.base == address && r.mappings > 0);
        // SAFETY: the runtime validates the address against its table.
        let code = unsafe { aclrtReleaseMemAddress(address as *mut c_void) };
        if let Some(index) = compare(&format!("aclrtReleaseMemAddress({address:#x})"), predicted, code)? {
            self.model.commit_release(index);
            note("aclrtReleaseMemAddress succeeded");
        } else {
            note(if mapped {
                "aclrtReleaseMemAddress while mapped refused"
            } else {
                "aclrtReleaseMemAddress refused"
            });
        }
        Ok(())
    }

    fn map(
        &mut self,
        address: usize,
        handle: usize,
        size: MapSize,
        offset: bool,
        flags: bool,
        no_access: bool,
    ) -> Result<(), Failure> {
        let granule = self.granularity();
        let full = self
            .model
            .physicals
            .iter()
            .find(|p| p.handle == handle)
            .map_or(granule, |p| p.size);
        let size = match size {
            MapSize::Exact => full,
            MapSize::Larger => full + granule,
            MapSize::Half => full / 2,
            MapSize::Zero => 0,
        };
        let offset = if offset { granule } else { 0 };
        let flags = u64::from(flags);
        let predicted = self.model.map(address, size, offset, handle, flags);
        let (api, function): (&str, MapFn) = if no_access {
            ("aclrtMemMapNoAccess", aclrtMemMapNoAccess)
        } else {
            ("aclrtMapMem", aclrtMapMem)
        };
        // SAFETY: addresses and handles are validated by the runtime; a
        // mapping touches no host memory.
        let code = unsafe { function(address as *mut c_void, size, offset, handle as aclrtDrvMemHandle, flags) };
        if code == ACL_SUCCESS && predicted.is_err() {
            self.strays.mappings.push(address);
        }
        let call =
            format!("{api}({address:#x}, size {size:#x}, offset {offset:#x}, handle {handle:#x}, flags {flags})");
        if compare(&call, predicted, code)?.is_some() {
            self.model.commit_map(address, size, handle, !no_access);
            note(if no_access {
                "aclrtMemMapNoAccess succeeded"
            } else {
                "aclrtMapMem succeeded"
            });
        } else {
            note("aclrtMapMem refused");
        }
        Ok(())
    }

    fn unmap(&mut self, address: usize) -> Result<(), Failure> {
        let predicted = self.model.unmap(address);
        let interior = self
            .model
            .mappings
            .iter()
            .any(|x| x.address < address && address < x.address + x.size);
        // SAFETY: the runtime validates the address against its table.
        let code = unsafe { aclrtUnmapMem(address as *mut c_void) };
        if let Some(index) = compare(&format!("aclrtUnmapMem({address:#x})"), predicted, code)? {
            self.model.commit_unmap(index);
            note("aclrtUnmapMem succeeded");
        } else {
            note(if interior {
                "aclrtUnmapMem of an interior address refused"
            } else {
                "aclrtUnmapMem refused"
            });
        }
        Ok(())
    }

    /// The device of the physical memory mapped at `address` (device 0
    /// when none).
    fn owner_device(&self, address: usize) -> u32 {
        let m = &self.model;
        m.mappings
            .iter()
            .find(|x| (x.address..x.address + x.size).contains(&address))
            .and_then(|x| m.physicals.iter().find(|p| p.handle == x.handle))
            .map_or(0, |p| p.device as u32)
    }

    fn set_access(
        &mut self,
        address: usize,
        size: MapSize,
        picks: &[DescPick],
        null_desc: bool,
    ) -> Result<(), Failure> {
        let granule = self.granularity();
        let full = self
            .model
            .mappings
            .iter()
            .find(|x| x.address == address)
            .map_or(granule, |x| x.size);
        let size = match size {
            MapSize::Exact => full,
            MapSize::Larger => full + granule,
            MapSize::Half | MapSize::Zero => full / 2,
        };
        let owner = self.owner_device(address);
        let mut descs: Vec<aclrtMemAccessDesc> = picks
            .iter()
            .map(|pick| {
                let (type_, id) = match pick {
                    DescPick::Owner => (ACL_MEM_LOCATION_TYPE_DEVICE, owner),
                    DescPick::Device(id) => (ACL_MEM_LOCATION_TYPE_DEVICE, *id),
                    DescPick::Host => (ACL_MEM_LOCATION_TYPE_HOST, 0),
                    DescPick::BadDevice => (ACL_MEM_LOCATION_TYPE_DEVICE, self.model.env.device_count),
                    DescPick::BadType => (ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0),
                    DescPick::BadFlags | DescPick::BadRsv => (ACL_MEM_LOCATION_TYPE_DEVICE, owner),
                };
                let mut rsv = [0u8; 12];
                if matches!(pick, DescPick::BadRsv) {
                    rsv[3] = 1;
                }
                aclrtMemAccessDesc {
                    flags: if matches!(pick, DescPick::BadFlags) {
                        ACL_RT_MEM_ACCESS_FLAGS_READ
                    } else {
                        ACL_RT_MEM_ACCESS_FLAGS_READWRITE
                    },
                    location: aclrtMemLocation { id, type_ },
                    rsv,
                }
            })
            .collect();
        let predicted = self
            .model
            .set_access(address, size, (!null_desc).then_some(descs.as_slice()));
        let count = descs.len();
        let desc_ptr = if null_desc { null_mut() } else { descs.as_mut_ptr() };
        // SAFETY: `desc_ptr` is NULL or points at `count` descriptors.
        let code = unsafe { aclrtMemSetAccess(address as *mut c_void, size, desc_ptr, count) };
        let call = format!("aclrtMemSetAccess({address:#x}, size {size:#x}, {picks:?}, null desc {null_desc})");
        if let Some(grants) = compare(&call, predicted, code)? {
            self.model.commit_set_access(address, grants);
            note("aclrtMemSetAccess succeeded");
        } else {
            note("aclrtMemSetAccess refused");
        }
        Ok(())
    }

    fn get_access(&mut self, address: usize, location: LocPick) -> Result<(), Failure> {
        let location = match location {
            LocPick::Owner => aclrtMemLocation {
                id: self.owner_device(address),
                type_: ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            LocPick::Device(id) => aclrtMemLocation {
                id,
                type_: ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            LocPick::Host => aclrtMemLocation {
                id: 0,
                type_: ACL_MEM_LOCATION_TYPE_HOST,
            },
        };
        let predicted = self.model.get_access(address, location);
        let mut raw_location = location;
        let mut flag = 0u64;
        // SAFETY: valid pointers; the address is only looked up.
        let code = unsafe { aclrtMemGetAccess(address as *mut c_void, &mut raw_location, &mut flag) };
        let call = format!("aclrtMemGetAccess({address:#x}, {location:?})");
        if let Some(expected) = compare(&call, predicted, code)? {
            if flag != expected {
                return Err(format!("{call} reported flag {flag:#x}, the model has {expected:#x}"));
            }
            note("aclrtMemGetAccess succeeded");
        }
        Ok(())
    }

    fn retain(&mut self, address: usize) -> Result<(), Failure> {
        let predicted = self.model.retain(address);
        let spent = predicted
            .as_ref()
            .is_ok_and(|handle| self.model.physicals.iter().any(|p| p.handle == *handle && p.refs == 0));
        let mut handle = null_mut();
        // SAFETY: a valid out-pointer; the address is only looked up.
        let code = unsafe { aclrtMemRetainAllocationHandle(address as *mut c_void, &mut handle) };
        if code == ACL_SUCCESS && predicted.is_err() {
            self.strays.handles.push(handle as usize);
        }
        let call = format!("aclrtMemRetainAllocationHandle({address:#x})");
        if let Some(expected) = compare(&call, predicted, code)? {
            if handle as usize != expected {
                self.strays.handles.push(handle as usize);
                return Err(format!(
                    "{call} returned handle {handle:?}, the model has {expected:#x}"
                ));
            }
            self.model.commit_retain(expected);
            note(if spent {
                "aclrtMemRetainAllocationHandle of a freed, still mapped handle"
            } else {
                "aclrtMemRetainAllocationHandle succeeded"
            });
        }
        Ok(())
    }

    /// The arguments of a copy of `len` bytes after `variant` bent them:
    /// `(dest_max, count, kind)`.
    fn copy_arguments(len: usize, variant: CopyVariant, kind: aclrtMemcpyKind) -> (usize, usize, aclrtMemcpyKind) {
        match variant {
            CopyVariant::ZeroCount => (len, 0, kind),
            CopyVariant::ShortDestMax => (len - 1, len, kind),
            CopyVariant::BadKind => (len, len, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE),
            CopyVariant::Normal | CopyVariant::NullHost => (len, len, kind),
        }
    }

    /// Whether `[device, device + len)` overlaps a mapping made without
    /// access that has not been granted any.
    fn touches_no_access(&self, device: usize, len: usize) -> bool {
        self.model
            .mappings
            .iter()
            .any(|x| !x.accessible && device < x.address + x.size && x.address < device.saturating_add(len))
    }

    /// Runs `call` with the device of `pieces` current, then device 0.
    fn on_device_of(&self, pieces: &Outcome<Vec<Piece>>, call: impl FnOnce() -> aclError) -> aclError {
        let device = pieces.as_ref().ok().and_then(|p| self.model.device_of(p)).unwrap_or(0);
        self.switch_to(device);
        let code = call();
        self.switch_to(0);
        code
    }

    fn write(
        &mut self,
        device: usize,
        len: usize,
        host: HostSide,
        seed: u8,
        variant: CopyVariant,
    ) -> Result<(), Failure> {
        let data = pattern(seed, len);
        let (host_address, pinned) = match self.pinned(host) {
            Some((address, room)) => {
                // SAFETY: `room` bytes of a live pinned allocation start at
                // `address`; only those are written.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, len.min(room)) };
                (address, true)
            }
            None => (data.as_ptr() as usize, false),
        };
        let host_address = if variant == CopyVariant::NullHost {
            0
        } else {
            host_address
        };
        let (dest_max, count, kind) = Self::copy_arguments(len, variant, ACL_MEMCPY_HOST_TO_DEVICE);
        let predicted = self.model.memcpy(device, host_address, dest_max, count, kind);
        // SAFETY: the host side is `data` or a pinned allocation (a range
        // running past it is refused by the runtime); the device side starts
        // in memory the model knows.
        let code = self.on_device_of(&predicted, || unsafe {
            aclrtMemcpy(
                device as *mut c_void,
                dest_max,
                host_address as *const c_void,
                count,
                kind,
            )
        });
        let call = format!(
            "aclrtMemcpy(dst {device:#x}, destMax {dest_max}, src {host_address:#x}{}, count {count}, kind {kind})",
            if pinned { " (pinned)" } else { "" }
        );
        let refused_no_access = predicted.is_err() && self.touches_no_access(device, len);
        if let Some(pieces) = compare(&call, predicted, code)? {
            self.model.commit_write(&pieces, &data);
            note(match pieces.len() {
                0 => "aclrtMemcpy of nothing",
                1 => "aclrtMemcpy to the device succeeded",
                _ => "aclrtMemcpy across adjacent mappings succeeded",
            });
        } else if refused_no_access {
            note("aclrtMemcpy into a no-access mapping refused");
        } else {
            note("aclrtMemcpy refused");
        }
        Ok(())
    }

    fn read(&mut self, device: usize, len: usize, host: HostSide, variant: CopyVariant) -> Result<(), Failure> {
        let mut buffer = vec![0xEEu8; len];
        let (host_address, pinned) = match self.pinned(host) {
            Some((address, _)) => (address, true),
            None => (buffer.as_mut_ptr() as usize, false),
        };
        let host_address = if variant == CopyVariant::NullHost {
            0
        } else {
            host_address
        };
        let (dest_max, count, kind) = Self::copy_arguments(len, variant, ACL_MEMCPY_DEVICE_TO_HOST);
        let predicted = self.model.memcpy(device, host_address, dest_max, count, kind);
        if let Ok(pieces) = &predicted {
            self.write_unknown(device, pieces)?;
        }
        // SAFETY: as in `write`; the host side has room for `count` bytes
        // (the buffer has `len`; a pinned range that is too short is
        // refused by the runtime).
        let code = self.on_device_of(&predicted, || unsafe {
            aclrtMemcpy(
                host_address as *mut c_void,
                dest_max,
                device as *const c_void,
                count,
                kind,
            )
        });
        let call = format!(
            "aclrtMemcpy(dst {host_address:#x}{}, destMax {dest_max}, src {device:#x}, count {count}, kind {kind})",
            if pinned { " (pinned)" } else { "" }
        );
        if let Some(pieces) = compare(&call, predicted, code)?
            && !pieces.is_empty()
        {
            let read: &[u8] = if pinned {
                // SAFETY: the copy succeeded as predicted, so `count` bytes
                // at `host_address` lie inside a live pinned allocation.
                unsafe { std::slice::from_raw_parts(host_address as *const u8, count) }
            } else {
                &buffer
            };
            if let Some(wrong) = self.model.check_read(&pieces, read) {
                return Err(format!("{call}: {wrong}"));
            }
            note("aclrtMemcpy to the host checked");
            if pieces.len() > 1 {
                note("aclrtMemcpy across adjacent mappings succeeded");
            }
        }
        Ok(())
    }

    /// Writes zeros into the bytes of `pieces` (a read of device memory
    /// from `device`, predicted to succeed) the model does not know, and
    /// records them: a read of bytes nothing wrote is a read of
    /// uninitialised memory, which the sanitizer reports, and their value
    /// means nothing. Not an operation of the sequence: not counted.
    fn write_unknown(&mut self, device: usize, pieces: &[Piece]) -> Result<(), Failure> {
        for piece in pieces {
            let Some(runs) = self.model.unknown_runs(piece) else {
                continue;
            };
            for (offset, len) in runs {
                let address = device + piece.at + (offset - piece.offset);
                let run = [Piece {
                    owner: piece.owner,
                    offset,
                    at: 0,
                    len,
                }];
                // SAFETY: the bytes lie in device memory the model knows to
                // be mapped and accessible (the read of them is predicted to
                // succeed).
                let code = self.on_device_of(&Ok(run.to_vec()), || unsafe {
                    aclrtMemset(address as *mut c_void, len, 0, len)
                });
                if code != ACL_SUCCESS {
                    return Err(format!(
                        "aclrtMemset({address:#x}, {len}, 0, {len}) of bytes nothing wrote before a read: {code}"
                    ));
                }
                self.model.commit_fill(&run, 0);
            }
        }
        Ok(())
    }

    fn memset(&mut self, device: usize, len: usize, value: u16, variant: CopyVariant) -> Result<(), Failure> {
        let (max_count, count) = match variant {
            CopyVariant::ZeroCount => (len, 0),
            CopyVariant::ShortDestMax => (len - 1, len),
            _ => (len, len),
        };
        // High bits the runtime drops: only the low 8 bits are the value.
        let raw_value = i32::from(value) | 0x0012_0000;
        let predicted = self.model.memset(device, max_count, count);
        // SAFETY: the device side starts in memory the model knows; the
        // runtime refuses anything else.
        let code = self.on_device_of(&predicted, || unsafe {
            aclrtMemset(device as *mut c_void, max_count, raw_value, count)
        });
        let call = format!("aclrtMemset({device:#x}, maxCount {max_count}, value {raw_value:#x}, count {count})");
        if let Some(pieces) = compare(&call, predicted, code)? {
            self.model.commit_fill(&pieces, value as u8);
            note(if pieces.len() > 1 {
                "aclrtMemset across adjacent mappings succeeded"
            } else {
                "aclrtMemset succeeded"
            });
        }
        Ok(())
    }

    /// Compares `soft::live()` with the baseline plus the model's counts.
    pub fn check_counts(&self) -> Result<(), Failure> {
        let c = self.model.counts();
        let b = self.baseline;
        // `Live` is non-exhaustive: start from the baseline, add the model.
        let mut expected = b;
        expected.device_allocations += c.device_allocations;
        expected.device_bytes += c.device_bytes;
        expected.host_allocations += c.host_allocations;
        expected.host_bytes += c.host_bytes;
        expected.physical_allocations += c.physical_allocations;
        expected.physical_bytes += c.physical_bytes;
        expected.reservations += c.reservations;
        expected.mappings += c.mappings;
        let actual = soft::live();
        if actual == expected {
            Ok(())
        } else {
            Err(format!(
                "soft::live() disagrees with the model\n  runtime: {actual:?}\n  model:   {expected:?}\nleak report:\n{}",
                soft::leak_report()
            ))
        }
    }

    /// Undoes everything the model holds, every call checked against the
    /// model (unmap, free each handle reference, release, free), and checks
    /// that the device is back at the baseline.
    pub fn finish(mut self) -> Result<(), Failure> {
        self.finished = true;
        while let Some(mapping) = self.model.mappings.first() {
            self.unmap(mapping.address)?;
        }
        while let Some(physical) = self.model.physicals.iter().find(|p| p.refs > 0) {
            self.free_physical(physical.handle)?;
        }
        while let Some(range) = self.model.reservations.first() {
            self.release(range.base)?;
        }
        while let Some(alloc) = self.model.device_allocs.first() {
            self.free(alloc.address)?;
        }
        while let Some(alloc) = self.model.host_allocs.first() {
            self.free_host(alloc.address)?;
        }
        self.check_counts()
    }

    /// Best-effort clean-up after a failure: every resource the model or
    /// the strays know, errors ignored.
    fn scrub(&mut self) {
        let m = &self.model;
        // SAFETY (every call below): addresses and handles the runtime gave
        // out, released at most once each by the runtime's own checks.
        unsafe {
            for address in m
                .mappings
                .iter()
                .map(|x| x.address)
                .chain(self.strays.mappings.iter().copied())
            {
                aclrtUnmapMem(address as *mut c_void);
            }
            for physical in &m.physicals {
                for _ in 0..physical.refs {
                    aclrtFreePhysical(physical.handle as aclrtDrvMemHandle);
                }
            }
            for &handle in &self.strays.handles {
                aclrtFreePhysical(handle as aclrtDrvMemHandle);
            }
            for base in m
                .reservations
                .iter()
                .map(|r| r.base)
                .chain(self.strays.reservations.iter().copied())
            {
                aclrtReleaseMemAddress(base as *mut c_void);
            }
            for address in m
                .device_allocs
                .iter()
                .map(|a| a.address)
                .chain(self.strays.device.iter().copied())
            {
                aclrtFree(address as *mut c_void);
            }
            for address in m
                .host_allocs
                .iter()
                .map(|a| a.address)
                .chain(self.strays.host.iter().copied())
            {
                aclrtFreeHost(address as *mut c_void);
            }
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if !self.finished {
            self.scrub();
        }
        self.switch_to(0);
    }
}

/// Sets up the software device for a run: every device set on this thread
/// (their primary contexts stay valid), device 0 current, and the public
/// facts the model needs.
pub fn setup() -> (Env, Vec<aclrtContext>) {
    select_backend(BackendRequest::Software).expect("the software device");
    let mut count = 0u32;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
    let mut contexts = Vec::new();
    for device in 0..count as i32 {
        let mut context = null_mut();
        // SAFETY: no pointer arguments / a valid out-pointer.
        unsafe {
            assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
            assert_eq!(aclrtGetCurrentContext(&mut context), ACL_SUCCESS);
        }
        contexts.push(context);
    }
    // SAFETY: a live primary context.
    assert_eq!(unsafe { aclrtSetCurrentContext(contexts[0]) }, ACL_SUCCESS);
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    assert_eq!(
        unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) },
        ACL_SUCCESS
    );
    // The attributes §7 accepts for device memory.
    let accepted = [
        ACL_HBM_MEM_HUGE,
        ACL_HBM_MEM_NORMAL,
        ACL_HBM_MEM_HUGE1G,
        ACL_MEM_NORMAL,
        ACL_MEM_HUGE,
        ACL_MEM_HUGE1G,
        ACL_MEM_P2P_NORMAL,
        ACL_MEM_P2P_HUGE,
        ACL_MEM_P2P_HUGE1G,
    ];
    let granularities = accepted
        .iter()
        .map(|&attr| {
            let mut prop = aclrtPhysicalMemProp {
                handleType: ACL_MEM_HANDLE_TYPE_NONE,
                allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
                memAttr: attr,
                location: aclrtMemLocation {
                    id: 0,
                    type_: ACL_MEM_LOCATION_TYPE_DEVICE,
                },
                reserve: 0,
            };
            let mut granularity = 0usize;
            // SAFETY: valid pointers.
            let code = unsafe {
                aclrtMemGetAllocationGranularity(&mut prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &mut granularity)
            };
            assert_eq!(code, ACL_SUCCESS, "granularity of attr {attr}");
            (attr, granularity)
        })
        .collect::<Vec<_>>();
    let granularity = granularities
        .iter()
        .find(|(attr, _)| *attr == ACL_MEM_HUGE)
        .map(|(_, g)| *g)
        .expect("huge-page granularity");
    let env = Env {
        device_count: count,
        capacity: total,
        granularities,
        granularity,
    };
    (env, contexts)
}

/// Undoes [`setup`]'s device retains.
pub fn teardown(contexts: &[aclrtContext]) {
    for device in (0..contexts.len() as i32).rev() {
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(device) }, ACL_SUCCESS);
    }
}
