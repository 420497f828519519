//! `aclrtMemAllocManaged` and `aclrtMemManaged*`: managed (unified)
//! memory, a family with its own lock.
//!
//! A managed allocation is device memory of the device-memory family
//! ([`crate::soft::device_mem`]), placed at a 2 MiB-aligned physical offset and
//! counted in the device's capacity, whose device addresses are also mapped
//! for the host onto the same physical bytes ([`Arena::expose`]): copies,
//! memsets and pointer attributes treat it as device memory (it is
//! translated like any `aclrtMalloc` allocation), and the host dereferences
//! the very same address and sees the same bytes. `aclrtFree` frees it: this
//! family first takes the host mapping away, then hands the allocation back
//! to the device-memory family. A device reset by its last retain does the
//! same for every managed allocation of the device, before it frees the
//! device's memory ([`release_device`]).
//!
//! The family's own state is the advice and prefetch record of each
//! allocation, kept per 2 MiB page (the granule managed memory is allocated
//! in): advice and prefetches apply to every page their range touches, and
//! an attribute of a range is the pages' common value (or "none" when they
//! differ), as `aclrtMemManagedGetAttr(s)` report it.
//!
//! The sanitizer sees device-side accesses to managed memory as it sees
//! any device memory (copies and memsets translate it to the device view);
//! host accesses through the managed address are plain loads and stores it
//! cannot see (a program may announce them with
//! `soft::sanitize_host_access`, which checks them against queued work). So
//! managed memory starts with unknown contents for the sanitizer, not
//! unwritten: the host may have written it.
//!
//! Locking: one mutex of rank [`Rank::Managed`], held over a whole
//! allocation or free and over a device reset's free of the device's
//! memory (device memory's shards and space, contexts and the sharing
//! tables are taken under it), and taken under the streams' lock by a
//! prefetch.

use crate::soft::core::device_arena::Arena;
use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::device_mem;
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The granule of managed memory: sizes are rounded up to it, allocations
/// are aligned to it, and advice is kept per granule.
pub(crate) const GRANULE: u64 = 2 << 20;

/// The id attributes report for "no device" (`-2`) and for the host (`-1`).
pub(crate) const NO_ID: i32 = -2;
const HOST_ID: i32 = -1;

/// A managed-memory location, normalised (the calling thread's NUMA node is
/// node 0: the software device has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Location {
    pub(crate) kind: aclrtMemManagedLocationType,
    pub(crate) id: i32,
}

impl Location {
    /// The location as one id: the device id, `-1` for the host (any NUMA
    /// node of it).
    fn as_device_id(self) -> i32 {
        if self.kind == ACL_MEM_LOCATIONTYPE_DEVICE {
            self.id
        } else {
            HOST_ID
        }
    }
}

/// What one page has been told and where it was last prefetched to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Page {
    read_mostly: bool,
    preferred: Option<Location>,
    accessed_by: Vec<Location>,
    last_prefetch: Option<Location>,
}

/// One managed allocation.
struct Allocation {
    device: i32,
    /// The device-memory allocation's creation number: an entry whose
    /// allocation is no longer the one it was made for is stale
    /// ([`Managed::live`]). A device reset forgets the device's entries
    /// ([`release_device`]); the check remains a safety net.
    created: u64,
    /// Physical offset in the device's arena.
    offset: u64,
    /// Bytes reserved (a multiple of [`GRANULE`]).
    size: usize,
    pages: Vec<Page>,
}

#[derive(Default)]
struct Managed {
    /// Live managed allocations by start address.
    allocations: BTreeMap<usize, Allocation>,
}

/// The number of live managed allocations, published under the lock after
/// every change: [`free`], asked by every `aclrtFree`, takes the family's
/// lock only when one exists.
static LIVE: AtomicUsize = AtomicUsize::new(0);

impl Managed {
    /// Publishes the allocation count (call after inserting or removing).
    fn publish(&self) {
        LIVE.store(self.allocations.len(), Ordering::Release);
    }

    /// The entry containing `address`, with its start, if it is still the
    /// device-memory allocation it was made for. A stale one (its device
    /// was reset, which frees every allocation of it) is dropped on the
    /// way, its range made inaccessible to the host again.
    fn live(&mut self, address: usize) -> Option<(usize, &mut Allocation)> {
        let (&start, allocation) = self.allocations.range(..=address).next_back()?;
        if address - start >= allocation.size {
            return None;
        }
        let current = device_mem::find(start).is_some_and(|(at, now)| at == start && now.created == allocation.created);
        if !current {
            self.forget_stale(start);
            return None;
        }
        self.allocations.get_mut(&start).map(|allocation| (start, allocation))
    }

    /// Drops the stale entry at `start` and conceals its range.
    fn forget_stale(&mut self, start: usize) {
        let removed = self.allocations.remove(&start);
        self.publish();
        if let Some(stale) = removed {
            log::debug!("software device: managed memory at {start:#x} was freed by a device reset");
            if let Ok(arena) = arena(stale.device) {
                arena.conceal(stale.offset, stale.size);
            }
        }
    }
}

static FAMILY: Mutex<Managed> = Mutex::new(Managed {
    allocations: BTreeMap::new(),
});

fn lock() -> Ranked<'static, Managed> {
    lock_order::lock(&FAMILY, Rank::Managed)
}

fn arena(device: i32) -> SoftResult<&'static Arena> {
    Ok(&started::core()?.device(device)?.arena)
}

/// `aclrtMemAllocManaged` after the ACL layer's checks: `size` 0 is the
/// runtime's `ACL_ERROR_RT_PARAM_INVALID`, no current device
/// `ACL_ERROR_RT_CONTEXT_NULL`; the size is rounded up to 2 MiB.
pub(crate) fn alloc(size: u64) -> SoftResult<usize> {
    if size == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
    }
    let device = current::require()?;
    let Some(reserved) = size
        .checked_next_multiple_of(GRANULE)
        .filter(|&reserved| usize::try_from(reserved).is_ok())
    else {
        return fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("size {size} overflows when rounded up to 2 MiB"),
        );
    };
    let mut managed = lock();
    let (address, offset) = device_mem::place_on(device, reserved, size, GRANULE, None)?;
    // Entries overlapping memory just placed are stale (a device reset
    // freed them): forgotten, and concealed before the new range is exposed.
    let end = address + reserved as usize;
    let overlapping: Vec<usize> = managed
        .allocations
        .range(..end)
        .filter(|(start, allocation)| **start + allocation.size > address)
        .map(|(start, _)| *start)
        .collect();
    for start in overlapping {
        managed.forget_stale(start);
    }
    let created = device_mem::find(address).map_or(0, |(_, allocation)| allocation.created);
    let arena = arena(device)?;
    if let Err(failure) = arena.expose(offset, reserved as usize) {
        if let Err(undone) = crate::soft::compose::device_free::free(address) {
            log::warn!(
                "software device: could not undo a managed allocation: {}",
                undone.message
            );
        }
        return Err(failure);
    }
    managed.allocations.insert(
        address,
        Allocation {
            device,
            created,
            offset,
            size: reserved as usize,
            pages: vec![Page::default(); (reserved / GRANULE) as usize],
        },
    );
    managed.publish();
    Ok(address)
}

/// `aclrtFree` of managed memory: `None` when `address` is not the start of
/// a live managed allocation (the device-memory family then decides),
/// otherwise the outcome of freeing it.
pub(crate) fn free(address: usize) -> Option<SoftResult> {
    // The address was handed out before this free (the caller's own order),
    // so a managed allocation at it was published before: none, no lock.
    if LIVE.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut managed = lock();
    let allocation = managed.allocations.remove(&address)?;
    managed.publish();
    Some(arena(allocation.device).and_then(|arena| {
        arena.conceal(allocation.offset, allocation.size);
        crate::soft::compose::device_free::free(address)
    }))
}

/// A device reset by its last retain, with managed memory locked
/// throughout (no managed allocation of the device can start meanwhile):
/// `decide` says whether the device's memory goes (the device was not set
/// again meanwhile), handing on what `free` needs; if it does, the device's
/// managed allocations are forgotten and made inaccessible to the host,
/// and only then does `free` free the device's memory (theirs included),
/// so a host access through a stale managed address cannot reach bytes the
/// device hands out again. Returns how many managed allocations went, and
/// what `free` returned.
pub(crate) fn release_device<S, T>(
    device: i32,
    decide: impl FnOnce() -> SoftResult<Option<S>>,
    free: impl FnOnce(S) -> T,
) -> SoftResult<(usize, Option<T>)> {
    let mut managed = lock();
    let Some(state) = decide()? else {
        return Ok((0, None));
    };
    let starts: Vec<usize> = managed
        .allocations
        .iter()
        .filter(|(_, allocation)| allocation.device == device)
        .map(|(&start, _)| start)
        .collect();
    for &start in &starts {
        if let Some(allocation) = managed.allocations.remove(&start)
            && let Ok(arena) = arena(allocation.device)
        {
            arena.conceal(allocation.offset, allocation.size);
        }
    }
    managed.publish();
    Ok((starts.len(), Some(free(state))))
}

/// The device of the managed allocation containing `address`, if any.
pub(crate) fn device_of(address: usize) -> Option<i32> {
    lock().live(address).map(|(_, allocation)| allocation.device)
}

/// The pages of `[address, address + size)`, which must lie in one managed
/// allocation (`ACL_ERROR_RT_PARAM_INVALID` otherwise: the driver's
/// INVALID_VALUE).
fn pages_of<'a>(managed: &'a mut Managed, address: usize, size: usize, role: &str) -> SoftResult<&'a mut [Page]> {
    let Some((start, allocation)) = managed.live(address) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{role} {address:#x} is not managed memory (aclrtMemAllocManaged)"),
        );
    };
    let offset = address - start;
    if size > allocation.size - offset {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{role} range of {size} bytes at {address:#x} runs past the end of its managed allocation \
                 ({} bytes at {start:#x})",
                allocation.size
            ),
        );
    }
    let first = offset / GRANULE as usize;
    let last = (offset + size - 1) / GRANULE as usize;
    Ok(&mut allocation.pages[first..=last])
}

/// The number of devices, for the runtime's device-id checks.
fn device_count() -> SoftResult<i32> {
    Ok(started::core()?.devices.len() as i32)
}

/// The runtime's check of a location naming a device: its id must be a
/// device id (`ACL_ERROR_RT_PARAM_INVALID`).
pub(crate) fn check_device_id(location: aclrtMemManagedLocation, what: &str) -> SoftResult {
    if location.type_ == ACL_MEM_LOCATIONTYPE_DEVICE {
        let count = device_count()?;
        if location.id < 0 || location.id >= count {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("{what} id {} is not a device id [0, {}]", location.id, count - 1),
            );
        }
    }
    Ok(())
}

/// The runtime's conversion of a location for the driver (an INVALID or
/// unknown type is `ACL_ERROR_RT_PARAM_INVALID`), then the software
/// device's own rule: a host NUMA node must be node 0.
pub(crate) fn convert(location: aclrtMemManagedLocation, what: &str) -> SoftResult<Location> {
    let normal = match location.type_ {
        ACL_MEM_LOCATIONTYPE_DEVICE | ACL_MEM_LOCATIONTYPE_HOST | ACL_MEM_LOCATIONTYPE_HOST_NUMA => Location {
            kind: location.type_,
            id: location.id,
        },
        ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT => Location {
            kind: ACL_MEM_LOCATIONTYPE_HOST_NUMA,
            id: 0,
        },
        other => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("{what} type {other} is not a location type (1 to 4)"),
            );
        }
    };
    if normal.kind == ACL_MEM_LOCATIONTYPE_HOST_NUMA && normal.id != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{what} NUMA node {} does not exist (the software device has node 0)",
                normal.id
            ),
        );
    }
    Ok(Location {
        id: if normal.kind == ACL_MEM_LOCATIONTYPE_HOST {
            0
        } else {
            normal.id
        },
        ..normal
    })
}

/// `aclrtMemManagedAdvise` after the ACL layer's checks, in the runtime's
/// order: `advise` past `UNSET_ACCESSED_BY` and a device id out of range
/// (`ACL_ERROR_RT_PARAM_INVALID`), no current device
/// (`ACL_ERROR_RT_CONTEXT_NULL`), then the driver's (software device's
/// choice): the range in one managed allocation, and a valid location for
/// the advice that uses one (preferred location, accessed-by).
pub(crate) fn advise(address: usize, size: u64, advise: u32, location: aclrtMemManagedLocation) -> SoftResult {
    if advise > ACL_MEM_ADVISE_UNSET_ACCESSED_BY {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("advise {advise} is out of range [0, {ACL_MEM_ADVISE_UNSET_ACCESSED_BY}]"),
        );
    }
    check_device_id(location, "location")?;
    current::require()?;
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let uses_location = matches!(
        advise,
        ACL_MEM_ADVISE_SET_PREFERRED_LOCATION | ACL_MEM_ADVISE_SET_ACCESSED_BY | ACL_MEM_ADVISE_UNSET_ACCESSED_BY
    );
    let target = if uses_location {
        Some(convert(location, "location")?)
    } else {
        None
    };
    let mut managed = lock();
    let pages = pages_of(&mut managed, address, size, "ptr")?;
    for page in pages {
        match (advise, target) {
            (ACL_MEM_ADVISE_SET_READ_MOSTLY, _) => page.read_mostly = true,
            (ACL_MEM_ADVISE_UNSET_READ_MOSTLY, _) => page.read_mostly = false,
            (ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, target) => page.preferred = target,
            (ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, _) => page.preferred = None,
            (ACL_MEM_ADVISE_SET_ACCESSED_BY, Some(target)) if !page.accessed_by.contains(&target) => {
                page.accessed_by.push(target);
                page.accessed_by.sort_unstable();
            }
            (ACL_MEM_ADVISE_UNSET_ACCESSED_BY, Some(target)) => page.accessed_by.retain(|&held| held != target),
            _ => {}
        }
    }
    Ok(())
}

/// One attribute query: its attribute, where to write and how many bytes.
pub(crate) struct Query {
    pub(crate) attribute: aclrtMemManagedRangeAttribute,
    pub(crate) data: *mut std::ffi::c_void,
    pub(crate) size: usize,
}

/// The runtime's range check of an attribute (`ACL_ERROR_RT_PARAM_INVALID`).
pub(crate) fn check_attribute(attribute: aclrtMemManagedRangeAttribute) -> SoftResult {
    if !(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY..=ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID).contains(&attribute) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "attribute {attribute} is out of range [{ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY}, \
                 {ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID}]"
            ),
        );
    }
    Ok(())
}

/// The pages' common value, if they all have the same.
fn common<T: PartialEq + Copy>(pages: &[Page], value: impl Fn(&Page) -> T) -> Option<T> {
    let first = value(pages.first()?);
    pages.iter().all(|page| value(page) == first).then_some(first)
}

/// The 32-bit values of `attribute` for `pages`, and whether the answer is
/// an array (accessed-by) rather than one value.
fn answer(pages: &[Page], attribute: aclrtMemManagedRangeAttribute) -> (Vec<i32>, bool) {
    let kind = |location: Option<Location>| location.map_or(ACL_MEM_LOCATIONTYPE_INVALID as i32, |l| l.kind as i32);
    let id = |location: Option<Location>| location.map_or(NO_ID, |l| l.id);
    let as_device = |location: Option<Location>| location.map_or(NO_ID, Location::as_device_id);
    let preferred = common(pages, |page| page.preferred).flatten();
    let prefetched = common(pages, |page| page.last_prefetch).flatten();
    let one = |value: i32| (vec![value], false);
    match attribute {
        ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY => one(i32::from(pages.iter().all(|page| page.read_mostly))),
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION => one(as_device(preferred)),
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE => one(kind(preferred)),
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID => one(id(preferred)),
        ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION => one(as_device(prefetched)),
        ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE => one(kind(prefetched)),
        ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID => one(id(prefetched)),
        _ => {
            // Accessed-by: the locations set for every page of the range.
            let mut all: Vec<i32> = pages
                .first()
                .map(|first| {
                    first
                        .accessed_by
                        .iter()
                        .filter(|location| pages.iter().all(|page| page.accessed_by.contains(location)))
                        .map(|location| location.as_device_id())
                        .collect()
                })
                .unwrap_or_default();
            all.dedup();
            (all, true)
        }
    }
}

/// `aclrtMemManagedGetAttr(s)` after the runtime's argument checks: the
/// range must lie in one managed allocation and each destination take its
/// answer (4 bytes for one value; a non-zero multiple of 4 for
/// accessed-by, holding every id, the rest filled with -2); every query is
/// checked before any is written (`ACL_ERROR_RT_PARAM_INVALID`).
///
/// # Safety
///
/// Each query's `data` must be valid for writes of its `size` bytes.
pub(crate) unsafe fn get_attributes(address: usize, size: usize, queries: &[Query]) -> SoftResult {
    let mut managed = lock();
    let pages = pages_of(&mut managed, address, size, "ptr")?;
    let mut answers = Vec::with_capacity(queries.len());
    for (index, query) in queries.iter().enumerate() {
        if query.data.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, format!("data[{index}] is NULL"));
        }
        let (values, array) = answer(pages, query.attribute);
        let fits = if array {
            query.size >= 4 && query.size.is_multiple_of(4) && values.len() * 4 <= query.size
        } else {
            query.size == 4
        };
        if !fits {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "data size {} does not fit attribute {} ({})",
                    query.size,
                    query.attribute,
                    if array {
                        format!("a multiple of 4 bytes, at least {}", (values.len() * 4).max(4))
                    } else {
                        "4 bytes".to_owned()
                    }
                ),
            );
        }
        answers.push(values);
    }
    for (query, values) in queries.iter().zip(answers) {
        // The values, then -2 up to `size` (written in place: `size` comes
        // from the caller and may be large).
        let padding = std::iter::repeat_n(NO_ID, query.size / 4 - values.len());
        for (index, value) in values.into_iter().chain(padding).enumerate() {
            // SAFETY: the caller guarantees `data` holds `size` bytes, and
            // `index < size / 4` (`values` fits, checked above); unaligned
            // writes, as C may pass any address.
            unsafe { query.data.cast::<i32>().add(index).write_unaligned(value) };
        }
    }
    Ok(())
}

/// Checks that each `(address, size)` range lies in one managed allocation
/// and, when all do, records `location` as the last prefetch location of
/// their pages (a prefetch is recorded when it is queued).
pub(crate) fn prefetched(ranges: &[(usize, usize, Location)]) -> SoftResult {
    let mut managed = lock();
    for (index, &(address, size, _)) in ranges.iter().enumerate() {
        if size == 0 {
            return fail(ACL_ERROR_RT_PARAM_INVALID, format!("size of range {index} is 0"));
        }
        pages_of(&mut managed, address, size, &format!("range {index}"))?;
    }
    for &(address, size, location) in ranges {
        for page in pages_of(&mut managed, address, size, "ptr")? {
            page.last_prefetch = Some(location);
        }
    }
    Ok(())
}
