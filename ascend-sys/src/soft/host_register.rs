//! Host registration (`aclrtHostRegister*`, `acl-behaviour.md` §5): host
//! ranges registered with the device.
//!
//! - A registration covers `[ptr, ptr + size)` of the caller's host memory,
//!   which stays ordinary host memory for copies.
//! - A *mapped* registration (V1 always; V2 with `ACL_HOST_REG_MAPPED`,
//!   `IOMEMORY` or `READONLY`) also gets a **device pointer**: a real address
//!   range reserved `PROT_NONE` in the process (released on unregister), so
//!   a host dereference faults. The docs say such pointers are for device
//!   kernels only and "cannot be used for memory operations": copies and
//!   memsets touching one are refused (see [`refuse_device_window`]).
//! - A *pinned* registration (V2 `ACL_HOST_REG_PINNED` alone) has no device
//!   pointer.
//!
//! Ranges may not overlap (`ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`), and
//! unregistering takes the registered base address only.

use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// The page size host registration works in (pointers must be aligned to it).
pub(crate) const PAGE: usize = 4096;

/// The `aclrtHostRegister` (V1) type bits accepted.
const V1_TYPES: u32 = ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY;
/// The V2 flag bits that register a mapping.
const V2_MAPPED: u32 = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY;
/// Every V2 flag bit.
const V2_ALL: u32 = V2_MAPPED | ACL_HOST_REG_PINNED;

/// The `aclrtHostMemMapCapabilities` accelerator types (0 to 9).
const HAC_TYPES: u32 = ACL_RT_HAC_TYPE_CCU + 1;

/// A device address range reserved `PROT_NONE`: the device pointer of a
/// mapped registration. Unreserved when dropped.
#[derive(Debug)]
struct DeviceWindow {
    address: usize,
    length: usize,
}

impl DeviceWindow {
    fn reserve(length: usize) -> SoftResult<Self> {
        // SAFETY: a fresh inaccessible anonymous reservation at an address
        // the kernel picks; nothing else refers to that range.
        match unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                length,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        } {
            Ok(address) => Ok(Self {
                address: address as usize,
                length,
            }),
            Err(error) => fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("could not reserve {length} bytes of device addresses: {error}"),
            ),
        }
    }
}

impl Drop for DeviceWindow {
    fn drop(&mut self) {
        // SAFETY: the range was mapped in `reserve` with this length, and
        // this window is its only owner.
        if let Err(error) = unsafe { munmap(self.address as *mut c_void, self.length) } {
            log::warn!("software device: could not release a host-registration device range: {error}");
        }
    }
}

/// One registered host range.
#[derive(Debug)]
struct Registration {
    size: usize,
    /// The device current when it was registered.
    device: i32,
    /// The flags as given (V1 types are recorded as `ACL_HOST_REG_MAPPED`
    /// plus their own bits).
    flags: u32,
    /// The device pointer of a mapped registration.
    window: Option<DeviceWindow>,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    created: u64,
}

/// Every registered host range: this family's state, behind its own lock.
#[derive(Debug)]
struct Registrations {
    /// Registrations by host base address.
    by_host: BTreeMap<usize, Registration>,
    /// Device pointers of mapped registrations: window start → (window
    /// length, host base).
    by_device: BTreeMap<usize, (usize, usize)>,
}

static REGISTRATIONS: Mutex<Registrations> = Mutex::new(Registrations {
    by_host: BTreeMap::new(),
    by_device: BTreeMap::new(),
});

/// The family's state, locked ([`Rank::Registrations`]).
fn registrations() -> Ranked<'static, Registrations> {
    lock_order::lock(&REGISTRATIONS, Rank::Registrations)
}

/// Number of live registrations and the host bytes they cover.
pub(crate) fn live() -> (usize, u64) {
    let registrations = registrations();
    let bytes = registrations.by_host.values().map(|r| r.size as u64).sum();
    (registrations.by_host.len(), bytes)
}

/// One line per live registration, for the leak report.
pub(crate) fn report() -> Vec<String> {
    registrations().report().collect()
}

/// The registrations created at or after sequence number `since`.
pub(crate) fn created_since(since: u64) -> Vec<LiveResource> {
    registrations().created_since(since).collect()
}

/// The device `address` belongs to, when it is inside the device pointer
/// of a mapped registration.
pub(crate) fn window_device(address: usize) -> Option<i32> {
    registrations().window_device(address)
}

/// Whether host address `address` is inside a registered range.
pub(crate) fn is_registered_host(address: usize) -> bool {
    registrations().containing(address).is_some()
}

impl Registrations {
    /// One line per live registration, for the leak report.
    fn report(&self) -> impl Iterator<Item = String> + '_ {
        self.by_host.iter().map(|(base, r)| {
            let window = r
                .window
                .as_ref()
                .map_or_else(String::new, |w| format!(", device pointer {:#x}", w.address));
            format!(
                "host registration {base:#x}: {} bytes on device {} (flags {:#x}{window})",
                r.size, r.device, r.flags
            )
        })
    }

    /// The registrations created at or after sequence number `since`.
    fn created_since(&self, since: u64) -> impl Iterator<Item = LiveResource> + '_ {
        self.by_host
            .iter()
            .filter(move |(_, r)| r.created >= since)
            .map(|(&base, r)| {
                let window = r
                    .window
                    .as_ref()
                    .map_or_else(String::new, |w| format!(", device pointer {:#x}", w.address));
                LiveResource::new(ResourceKind::HostRegistration, base, r.size as u64, r.created)
                    .on(r.device)
                    .detail(format!("flags {:#x}{window}", r.flags))
            })
    }

    /// The registration containing host address `address`: its base.
    fn containing(&self, address: usize) -> Option<(usize, &Registration)> {
        let (&base, registration) = self.by_host.range(..=address).next_back()?;
        (address - base < registration.size).then_some((base, registration))
    }

    /// The first registration overlapping `[start, end)`: its base.
    fn overlapping(&self, start: usize, end: usize) -> Option<usize> {
        let (&base, registration) = self.by_host.range(..end).next_back()?;
        (base + registration.size > start).then_some(base)
    }

    /// The device this address belongs to, when it is inside the device
    /// pointer of a mapped registration.
    fn window_device(&self, address: usize) -> Option<i32> {
        let (&start, &(length, host)) = self.by_device.range(..=address).next_back()?;
        if address - start >= length {
            return None;
        }
        self.by_host.get(&host).map(|r| r.device)
    }

    /// The device pointer overlapping `[start, end)`, if any: its start and
    /// the host base it belongs to.
    fn window_overlapping(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        let (&window, &(length, host)) = self.by_device.range(..end).next_back()?;
        (window + length > start).then_some((window, host))
    }
}

/// Refuses `[address, end)` when it touches the device pointer of a mapped
/// host registration: those addresses are for device kernels only, and the
/// docs forbid memory operations on them (the runtime leaves the outcome to
/// the driver; the software device returns `ACL_ERROR_RT_PARAM_INVALID`, see
/// `docs/runtime-choices.md`). Cheap when nothing is registered.
pub(crate) fn refuse_device_window(address: usize, end: usize, role: &str) -> SoftResult {
    let registrations = registrations();
    if registrations.by_device.is_empty() {
        return Ok(());
    }
    match registrations.window_overlapping(address, end) {
        Some((start, host)) => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{role} {address:#x} is (or runs into) the device pointer {start:#x} of the host memory registered at {host:#x}; such pointers are for device kernels and cannot be used for memory copies or sets"
            ),
        ),
        None => Ok(()),
    }
}

/// The checks both register calls share after their flag checks: a current
/// context, a 4 KiB-aligned host range that is not device memory, and no
/// overlap with a registered range. Returns the current device, the range
/// length as `usize`, and the family's state.
fn check_range(address: usize, size: u64) -> SoftResult<(i32, usize, Ranked<'static, Registrations>)> {
    let device = current::require()?;
    if !address.is_multiple_of(PAGE) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("ptr {address:#x} is not aligned to the 4 KiB page size"),
        );
    }
    let Some((length, end)) = usize::try_from(size)
        .ok()
        .filter(|&length| length <= isize::MAX as usize)
        .and_then(|length| Some((length, address.checked_add(length)?)))
    else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("ptr {address:#x} + size {size} wraps around the address space"),
        );
    };
    let core = started::core()?;
    if let Some(owner) = core.device_of(address) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("ptr {address:#x} is a device address (device {owner}), not host memory"),
        );
    }
    let registrations = registrations();
    if let Some((start, host)) = registrations.window_overlapping(address, end) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "range {address:#x}+{length} overlaps the device pointer {start:#x} of the host memory registered at {host:#x}, not host memory"
            ),
        );
    }
    if let Some(base) = registrations.overlapping(address, end) {
        return fail(
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            format!("range {address:#x}+{length} overlaps the host memory already registered at {base:#x}"),
        );
    }
    Ok((device, length, registrations))
}

/// Records a registration, reserving a device pointer when `mapped`.
fn insert(
    registrations: &mut Registrations,
    address: usize,
    length: usize,
    device: i32,
    flags: u32,
    mapped: bool,
) -> SoftResult<Option<usize>> {
    let window = if mapped {
        Some(DeviceWindow::reserve(length.next_multiple_of(PAGE))?)
    } else {
        None
    };
    let pointer = window.as_ref().map(|w| w.address);
    if let Some(w) = &window {
        crate::soft::core::address_map::insert(w.address, w.length);
        registrations.by_device.insert(w.address, (w.length, address));
    }
    registrations.by_host.insert(
        address,
        Registration {
            size: length,
            device,
            flags,
            window,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(pointer)
}

/// `aclrtHostRegister` after the ACL layer's checks: returns the device
/// pointer. Type bits other than `IOMEMORY` and `READONLY` are refused with
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, as the runtime does.
pub(crate) fn register_v1(address: usize, size: u64, kind: aclrtHostRegisterType) -> SoftResult<usize> {
    if kind & !V1_TYPES != 0 {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "type {kind:#x} is not supported (only combinations of ACL_HOST_REGISTER_IOMEMORY 0x4 and ACL_HOST_REGISTER_READONLY 0x8, or 0)"
            ),
        );
    }
    let (device, length, mut registrations) = check_range(address, size)?;
    let pointer = insert(
        &mut registrations,
        address,
        length,
        device,
        ACL_HOST_REG_MAPPED | kind,
        true,
    )?;
    pointer.map_or_else(
        || {
            fail(
                ACL_ERROR_RT_INTERNAL_ERROR,
                "mapped registration without a device pointer",
            )
        },
        Ok,
    )
}

/// `aclrtHostRegisterV2` after the ACL layer's checks. `ACL_HOST_REG_PINNED`
/// on memory that is already page-locked (from `aclrtMallocHost`) is refused
/// with `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED` (the docs call it an
/// error without a code; see `docs/runtime-choices.md`). `page_locked`
/// answers where pinned host memory overlapping `[address, end)` starts, if
/// any (the caller asks the pinned host memory family); it is called with
/// this family's lock held, which ranks before that family's.
pub(crate) fn register_v2(
    address: usize,
    size: u64,
    flag: u32,
    page_locked: impl FnOnce(usize, usize) -> Option<usize>,
) -> SoftResult {
    if flag & V2_ALL == 0 || flag & !V2_ALL != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "flag {flag:#x} is not a non-empty combination of ACL_HOST_REG_MAPPED 0x2, ACL_HOST_REG_IOMEMORY 0x4, ACL_HOST_REG_READONLY 0x8 and ACL_HOST_REG_PINNED 0x10000000"
            ),
        );
    }
    let (device, length, mut registrations) = check_range(address, size)?;
    if flag & ACL_HOST_REG_PINNED != 0 {
        let end = address + length;
        if let Some(start) = page_locked(address, end) {
            return fail(
                ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                format!(
                    "ACL_HOST_REG_PINNED: range {address:#x}+{length} is already page-locked (aclrtMallocHost memory at {start:#x})"
                ),
            );
        }
    }
    insert(&mut registrations, address, length, device, flag, flag & V2_MAPPED != 0)?;
    Ok(())
}

/// `aclrtHostGetDevicePointer` after the ACL layer's checks: the device
/// pointer of the mapped registration whose base is exactly `address`;
/// anything else is `ACL_ERROR_RT_PARAM_INVALID`, as in the runtime.
pub(crate) fn device_pointer(address: usize) -> SoftResult<usize> {
    current::require()?;
    started::core()?;
    let registrations = registrations();
    if let Some(registration) = registrations.by_host.get(&address) {
        return match &registration.window {
            Some(window) => Ok(window.address),
            None => fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("pHost {address:#x} is registered without a device mapping (ACL_HOST_REG_PINNED only)"),
            ),
        };
    }
    let why = match registrations.containing(address) {
        Some((base, _)) => {
            format!("pHost {address:#x} is inside the registration at {base:#x}; pass its base address")
        }
        None => format!("pHost {address:#x} is not registered host memory"),
    };
    fail(ACL_ERROR_RT_PARAM_INVALID, why)
}

/// `aclrtHostUnregister` after the ACL layer's checks: only a registered
/// base address; the device pointer, if any, is released.
pub(crate) fn unregister(address: usize) -> SoftResult {
    current::require()?;
    started::core()?;
    let mut registrations = registrations();
    let Some(registration) = registrations.by_host.remove(&address) else {
        let why = match registrations.containing(address) {
            Some((base, _)) => format!("ptr {address:#x} is inside the registration at {base:#x}, not its base"),
            None => {
                format!("ptr {address:#x} is not registered host memory (never registered, or already unregistered)")
            }
        };
        return fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, why);
    };
    if let Some(window) = &registration.window {
        registrations.by_device.remove(&window.address);
        crate::soft::core::address_map::remove(window.address);
    }
    // Dropping the registration releases its device addresses.
    drop(registration);
    Ok(())
}

/// `aclrtHostMemMapCapabilities` after the ACL layer's checks. The software
/// device's "DMA engines" (its copy paths, PCIe DMA and SDMA) can reach host
/// memory; it has no compute or other engines, so every other accelerator
/// type answers `NOT_SUPPORTED`.
pub(crate) fn map_capabilities(device: u32, hac: aclrtHacType) -> SoftResult<aclrtHostMemMapCapability> {
    let count = started::core()?.devices.len();
    if usize::try_from(device).map_or(true, |index| index >= count) {
        return fail(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!("deviceId {device} is out of range (the software device has {count} device(s))"),
        );
    }
    if hac >= HAC_TYPES {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("hacType {hac} is not an aclrtHacType (0 to {})", HAC_TYPES - 1),
        );
    }
    current::require()?;
    Ok(match hac {
        ACL_RT_HAC_TYPE_PCIEDMA | ACL_RT_HAC_TYPE_SDMA => ACL_RT_HOST_MEM_MAP_SUPPORTED,
        _ => ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED,
    })
}
