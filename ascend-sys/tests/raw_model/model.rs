//! The reference model: what each raw call must answer, from the documented
//! rules alone (`acl-behaviour.md` §4–§7 and the software device's choices
//! in `docs/runtime-choices.md` and `docs/software-device.md`).
//!
//! It is plain Rust data and never calls the software device: the harness
//! asks it for a prediction, makes the real call, compares, and only then
//! commits the prediction's effect. Every prediction is one exact code; the
//! order of the checks is the layering of the runtime (the ACL layer's
//! `ACL_ERROR_INVALID_PARAM` checks first, then the argument checks of the
//! call alone, then the handle, then the relations between the arguments
//! and the state).

use super::bytes::Bytes;
use ascend_sys::*;

/// What `aclrtMemGetAccess` reports for a location never granted.
pub const NEVER_SET: u64 = 0x7FFF_FFFF;

/// The padding `aclrtMalloc` adds after rounding up to 32 bytes (§4, #5),
/// except for the 1 GiB-page policies.
const MALLOC_PAD: usize = 32;

/// A prediction: the value a success carries, or the exact error code.
pub type Outcome<T> = Result<T, aclError>;

/// Facts the runtime states publicly, read once at the start.
#[derive(Debug, Clone)]
pub struct Env {
    /// `aclrtGetDeviceCount`.
    pub device_count: u32,
    /// Bytes per device (`aclrtGetMemInfo` total).
    pub capacity: usize,
    /// `aclrtMemGetAllocationGranularity` (MINIMUM) of each memory
    /// attribute the device accepts, as `(attr, granularity)`.
    pub granularities: Vec<(aclrtMemAttr, usize)>,
    /// The granularity reservations use (that of huge pages).
    pub granularity: usize,
}

impl Env {
    /// The granularity of an attribute the device accepts (§7's table).
    pub fn granularity_of(&self, attr: aclrtMemAttr) -> Option<usize> {
        self.granularities
            .iter()
            .find(|(known, _)| *known == attr)
            .map(|(_, granularity)| *granularity)
    }
}

/// A live `aclrtMalloc` allocation.
pub struct DeviceAlloc {
    pub address: usize,
    /// Bytes reserved after rounding and padding (copies may use them all).
    pub size: usize,
    pub device: i32,
    pub bytes: Bytes,
}

/// A live `aclrtMallocHost` allocation.
pub struct HostAlloc {
    pub address: usize,
    /// Bytes after rounding up to 32.
    pub size: usize,
}

/// A physical allocation that still exists: handle references left, or
/// freed while mapped (its memory lives until the last unmap).
pub struct Physical {
    pub handle: usize,
    pub size: usize,
    pub device: i32,
    pub granularity: usize,
    /// `aclrtMallocPhysical` + retains − `aclrtFreePhysical`.
    pub refs: u32,
    pub mappings: u32,
    pub bytes: Bytes,
}

/// A live reserved range.
pub struct Reservation {
    pub base: usize,
    pub size: usize,
    pub mappings: u32,
    /// The device of its mappings while it has any (one device per range).
    pub device: Option<i32>,
}

/// A live mapping.
pub struct Mapping {
    pub address: usize,
    pub size: usize,
    pub handle: usize,
    /// False after `aclrtMemMapNoAccess` until `aclrtMemSetAccess`.
    pub accessible: bool,
    /// Locations granted READWRITE, as `(type, id)`.
    pub granted: Vec<(aclrtMemLocationType, u32)>,
}

/// Whose bytes a run of a copy touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The `aclrtMalloc` allocation starting here.
    Device(usize),
    /// The physical allocation with this handle.
    Physical(usize),
}

/// `len` bytes at `offset` of `owner`, for bytes `at..at + len` of a copy.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub owner: Owner,
    pub offset: usize,
    pub at: usize,
    pub len: usize,
}

/// The live resources, as `ascend_sys::soft::live()` counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub device_allocations: usize,
    pub device_bytes: u64,
    pub host_allocations: usize,
    pub host_bytes: u64,
    pub physical_allocations: usize,
    pub physical_bytes: u64,
    pub reservations: usize,
    pub mappings: usize,
}

/// The whole model.
pub struct Model {
    pub env: Env,
    pub device_allocs: Vec<DeviceAlloc>,
    /// `(address, size)` of freed `aclrtMalloc` allocations, oldest first.
    pub freed_device: Vec<(usize, usize)>,
    pub host_allocs: Vec<HostAlloc>,
    /// Addresses of freed `aclrtMallocHost` allocations (never touched:
    /// the host allocator may reuse them).
    pub freed_host: Vec<usize>,
    pub physicals: Vec<Physical>,
    /// Handles whose memory is gone.
    pub gone_handles: Vec<usize>,
    pub reservations: Vec<Reservation>,
    /// Bases of released ranges (never touched: unmapped from the process).
    pub released: Vec<usize>,
    pub mappings: Vec<Mapping>,
}

fn invalid_param<T>() -> Outcome<T> {
    Err(ACL_ERROR_INVALID_PARAM)
}

fn param_invalid<T>() -> Outcome<T> {
    Err(ACL_ERROR_RT_PARAM_INVALID)
}

/// Whether `[a, a + a_len)` and `[b, b + b_len)` overlap.
fn overlaps(a: usize, a_len: usize, b: usize, b_len: usize) -> bool {
    a < b + b_len && b < a + a_len
}

impl Model {
    pub fn new(env: Env) -> Self {
        Self {
            env,
            device_allocs: Vec::new(),
            freed_device: Vec::new(),
            host_allocs: Vec::new(),
            freed_host: Vec::new(),
            physicals: Vec::new(),
            gone_handles: Vec::new(),
            reservations: Vec::new(),
            released: Vec::new(),
            mappings: Vec::new(),
        }
    }

    /// The live counts the model expects.
    pub fn counts(&self) -> Counts {
        Counts {
            device_allocations: self.device_allocs.len(),
            device_bytes: self.device_allocs.iter().map(|a| a.size as u64).sum(),
            host_allocations: self.host_allocs.len(),
            host_bytes: self.host_allocs.iter().map(|a| a.size as u64).sum(),
            physical_allocations: self.physicals.len(),
            physical_bytes: self.physicals.iter().map(|p| p.size as u64).sum(),
            reservations: self.reservations.len(),
            mappings: self.mappings.len(),
        }
    }

    /// Bytes still free on `device`: its capacity less `aclrtMalloc` and
    /// physical memory living there.
    fn free_on(&self, device: i32) -> usize {
        let malloc: usize = self
            .device_allocs
            .iter()
            .filter(|a| a.device == device)
            .map(|a| a.size)
            .sum();
        let physical: usize = self
            .physicals
            .iter()
            .filter(|p| p.device == device)
            .map(|p| p.size)
            .sum();
        self.env.capacity.saturating_sub(malloc + physical)
    }

    fn physical(&self, handle: usize) -> Option<&Physical> {
        self.physicals.iter().find(|p| p.handle == handle)
    }

    fn physical_mut(&mut self, handle: usize) -> Option<&mut Physical> {
        self.physicals.iter_mut().find(|p| p.handle == handle)
    }

    fn reservation_of(&self, address: usize) -> Option<&Reservation> {
        self.reservations
            .iter()
            .find(|r| (r.base..r.base + r.size).contains(&address))
    }

    fn mapping_of(&self, address: usize) -> Option<&Mapping> {
        self.mappings
            .iter()
            .find(|m| (m.address..m.address + m.size).contains(&address))
    }

    // ---- device memory (§4) -------------------------------------------------

    /// `aclrtMalloc` on `device`: the bytes it reserves.
    pub fn malloc(&self, null_out: bool, size: usize, policy: aclrtMemMallocPolicy, device: i32) -> Outcome<usize> {
        if null_out || size == 0 {
            return invalid_param();
        }
        // Values 0–7 are policies; anything else is the default (§4, #4).
        let pad = match policy {
            ACL_MEM_MALLOC_HUGE1G_ONLY | ACL_MEM_MALLOC_HUGE1G_ONLY_P2P => 0,
            _ => MALLOC_PAD,
        };
        let Some(reserved) = size
            .checked_next_multiple_of(32)
            .and_then(|rounded| rounded.checked_add(pad))
        else {
            return invalid_param();
        };
        if reserved > self.free_on(device) {
            return Err(ACL_ERROR_RT_MEMORY_ALLOCATION);
        }
        Ok(reserved)
    }

    pub fn commit_malloc(&mut self, address: usize, size: usize, device: i32) {
        self.device_allocs.push(DeviceAlloc {
            address,
            size,
            device,
            bytes: Bytes::default(),
        });
    }

    /// `aclrtFree`: the index of the allocation it frees.
    pub fn free(&self, address: usize) -> Outcome<usize> {
        if address == 0 {
            return invalid_param();
        }
        // Only the start of a live allocation (runtime-choices: 107000).
        self.device_allocs
            .iter()
            .position(|a| a.address == address)
            .map_or_else(param_invalid, Ok)
    }

    pub fn commit_free(&mut self, index: usize) {
        let freed = self.device_allocs.remove(index);
        self.freed_device.push((freed.address, freed.size));
    }

    // ---- host memory (§5) ---------------------------------------------------

    /// `aclrtMallocHost`: the bytes it allocates.
    pub fn malloc_host(&self, null_out: bool, size: usize) -> Outcome<usize> {
        if null_out || size == 0 {
            return invalid_param();
        }
        Ok(size.next_multiple_of(32))
    }

    pub fn commit_malloc_host(&mut self, address: usize, size: usize) {
        self.host_allocs.push(HostAlloc { address, size });
    }

    /// `aclrtFreeHost`: the index of the allocation it frees.
    pub fn free_host(&self, address: usize) -> Outcome<usize> {
        if address == 0 {
            return invalid_param();
        }
        // Every pointer not returned by aclrtMallocHost (device pointers,
        // interior and freed ones): 107000 (runtime-choices).
        self.host_allocs
            .iter()
            .position(|a| a.address == address)
            .map_or_else(param_invalid, Ok)
    }

    pub fn commit_free_host(&mut self, index: usize) {
        let freed = self.host_allocs.remove(index);
        self.freed_host.push(freed.address);
    }

    // ---- physical memory (§7) -----------------------------------------------

    /// `aclrtMallocPhysical`: the device and granularity of the new memory.
    pub fn malloc_physical(
        &self,
        null_out: bool,
        size: usize,
        prop: &aclrtPhysicalMemProp,
        flags: u64,
    ) -> Outcome<(i32, usize)> {
        if null_out || size == 0 || flags != 0 {
            return invalid_param();
        }
        if prop.handleType != ACL_MEM_HANDLE_TYPE_NONE || prop.allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED {
            return invalid_param();
        }
        // The model drives DEVICE locations only; UNREGISTERED and MANAGED
        // are refused by the ACL layer.
        if prop.location.type_ != ACL_MEM_LOCATION_TYPE_DEVICE {
            return invalid_param();
        }
        let Some(granularity) = self.env.granularity_of(prop.memAttr) else {
            return invalid_param();
        };
        if prop.location.id >= self.env.device_count {
            return Err(ACL_ERROR_RT_INVALID_DEVICEID);
        }
        let device = prop.location.id as i32;
        if !size.is_multiple_of(granularity) {
            return param_invalid();
        }
        if size > self.free_on(device) {
            return Err(ACL_ERROR_RT_MEMORY_ALLOCATION);
        }
        Ok((device, granularity))
    }

    pub fn commit_malloc_physical(&mut self, handle: usize, size: usize, device: i32, granularity: usize) {
        self.physicals.push(Physical {
            handle,
            size,
            device,
            granularity,
            refs: 1,
            mappings: 0,
            bytes: Bytes::default(),
        });
    }

    /// `aclrtFreePhysical`.
    pub fn free_physical(&self, handle: usize) -> Outcome<()> {
        if handle == 0 {
            return invalid_param();
        }
        // Unknown, or every reference already freed (even while still
        // mapped): INVALID_HANDLE.
        match self.physical(handle) {
            Some(physical) if physical.refs > 0 => Ok(()),
            _ => Err(ACL_ERROR_RT_INVALID_HANDLE),
        }
    }

    pub fn commit_free_physical(&mut self, handle: usize) {
        if let Some(physical) = self.physical_mut(handle) {
            physical.refs -= 1;
        }
        self.drop_if_unused(handle);
    }

    /// Forgets a physical allocation with no reference and no mapping left:
    /// `aclrtFreePhysical` on a mapped allocation defers the release to the
    /// last unmap (§7).
    fn drop_if_unused(&mut self, handle: usize) {
        if let Some(index) = self
            .physicals
            .iter()
            .position(|p| p.handle == handle && p.refs == 0 && p.mappings == 0)
        {
            self.physicals.remove(index);
            self.gone_handles.push(handle);
        }
    }

    // ---- reserved ranges ----------------------------------------------------

    /// The alignment of a reservation of `size` bytes: the next power of two,
    /// at least the granularity, 1 GiB above 512 MiB (runtime-choices).
    pub fn reservation_alignment(&self, size: usize) -> usize {
        if size > 512 << 20 {
            1 << 30
        } else {
            size.next_power_of_two().max(self.env.granularity)
        }
    }

    /// `aclrtReserveMemAddress`: `Some(address)` when the range must start
    /// exactly there (an honoured `expectPtr`).
    pub fn reserve(
        &self,
        null_out: bool,
        size: usize,
        alignment: usize,
        expect: usize,
        flags: u64,
    ) -> Outcome<Option<usize>> {
        if null_out || size == 0 || flags > 1 {
            return invalid_param();
        }
        if alignment != 0 || !size.is_multiple_of(self.env.granularity) {
            return param_invalid();
        }
        if expect == 0 {
            return Ok(None);
        }
        if !expect.is_multiple_of(self.reservation_alignment(size))
            || self.reservations.iter().any(|r| overlaps(expect, size, r.base, r.size))
        {
            return param_invalid();
        }
        Ok(Some(expect))
    }

    pub fn commit_reserve(&mut self, base: usize, size: usize) {
        self.reservations.push(Reservation {
            base,
            size,
            mappings: 0,
            device: None,
        });
    }

    /// `aclrtReleaseMemAddress`: the index of the range it releases.
    pub fn release(&self, address: usize) -> Outcome<usize> {
        if address == 0 {
            return invalid_param();
        }
        // A range's start, with no mapping left (runtime-choices).
        self.reservations
            .iter()
            .position(|r| r.base == address && r.mappings == 0)
            .map_or_else(param_invalid, Ok)
    }

    pub fn commit_release(&mut self, index: usize) {
        let released = self.reservations.remove(index);
        self.released.push(released.base);
    }

    // ---- mappings -----------------------------------------------------------

    /// `aclrtMapMem` / `aclrtMemMapNoAccess`.
    pub fn map(&self, address: usize, size: usize, offset: usize, handle: usize, flags: u64) -> Outcome<()> {
        if address == 0 || handle == 0 || size == 0 || flags != 0 {
            return invalid_param();
        }
        if offset != 0 {
            return param_invalid();
        }
        let physical = match self.physical(handle) {
            Some(physical) if physical.refs > 0 => physical,
            _ => return Err(ACL_ERROR_RT_INVALID_HANDLE),
        };
        if size != physical.size || !address.is_multiple_of(physical.granularity) {
            return param_invalid();
        }
        let Some(range) = self.reservation_of(address) else {
            return param_invalid();
        };
        if address + size > range.base + range.size {
            return param_invalid();
        }
        if range.device.is_some_and(|device| device != physical.device) {
            return param_invalid();
        }
        if self.mappings.iter().any(|m| overlaps(address, size, m.address, m.size)) {
            return param_invalid();
        }
        Ok(())
    }

    pub fn commit_map(&mut self, address: usize, size: usize, handle: usize, accessible: bool) {
        let Some(device) = self.physical(handle).map(|p| p.device) else {
            return;
        };
        if let Some(physical) = self.physical_mut(handle) {
            physical.mappings += 1;
        }
        if let Some(range) = self
            .reservations
            .iter_mut()
            .find(|r| (r.base..r.base + r.size).contains(&address))
        {
            range.mappings += 1;
            range.device = Some(device);
        }
        self.mappings.push(Mapping {
            address,
            size,
            handle,
            accessible,
            // The owner has READWRITE after aclrtMapMem, nobody after
            // aclrtMemMapNoAccess.
            granted: if accessible {
                vec![(ACL_MEM_LOCATION_TYPE_DEVICE, device as u32)]
            } else {
                Vec::new()
            },
        });
    }

    /// `aclrtUnmapMem`: the index of the mapping it removes.
    pub fn unmap(&self, address: usize) -> Outcome<usize> {
        if address == 0 {
            return invalid_param();
        }
        // Only a mapping's start (runtime-choices).
        self.mappings
            .iter()
            .position(|m| m.address == address)
            .map_or_else(param_invalid, Ok)
    }

    pub fn commit_unmap(&mut self, index: usize) {
        let mapping = self.mappings.remove(index);
        if let Some(range) = self
            .reservations
            .iter_mut()
            .find(|r| (r.base..r.base + r.size).contains(&mapping.address))
        {
            range.mappings -= 1;
            if range.mappings == 0 {
                range.device = None;
            }
        }
        if let Some(physical) = self.physical_mut(mapping.handle) {
            physical.mappings -= 1;
        }
        self.drop_if_unused(mapping.handle);
    }

    /// `aclrtMemSetAccess` (`descs` is `None` for a NULL `desc`): the
    /// locations it grants.
    pub fn set_access(
        &self,
        address: usize,
        size: usize,
        descs: Option<&[aclrtMemAccessDesc]>,
    ) -> Outcome<Vec<(aclrtMemLocationType, u32)>> {
        // No ACL-layer checks: NULL pointers are the runtime's 107000.
        let Some(descs) = descs else {
            return param_invalid();
        };
        if address == 0 || descs.is_empty() {
            return param_invalid();
        }
        // Exactly a mapping's address and size.
        let Some(mapping) = self.mappings.iter().find(|m| m.address == address) else {
            return param_invalid();
        };
        if mapping.size != size {
            return param_invalid();
        }
        let mut grants = Vec::new();
        for desc in descs {
            if desc.rsv.iter().any(|&byte| byte != 0) || desc.flags != ACL_RT_MEM_ACCESS_FLAGS_READWRITE {
                return param_invalid();
            }
            match desc.location.type_ {
                ACL_MEM_LOCATION_TYPE_DEVICE if desc.location.id >= self.env.device_count => {
                    return Err(ACL_ERROR_RT_INVALID_DEVICEID);
                }
                ACL_MEM_LOCATION_TYPE_DEVICE | ACL_MEM_LOCATION_TYPE_HOST => {}
                _ => return param_invalid(),
            }
            grants.push((desc.location.type_, desc.location.id));
        }
        Ok(grants)
    }

    pub fn commit_set_access(&mut self, address: usize, grants: Vec<(aclrtMemLocationType, u32)>) {
        if let Some(mapping) = self.mappings.iter_mut().find(|m| m.address == address) {
            mapping.accessible = true;
            for grant in grants {
                if !mapping.granted.contains(&grant) {
                    mapping.granted.push(grant);
                }
            }
        }
    }

    /// `aclrtMemGetAccess`: the flag reported.
    pub fn get_access(&self, address: usize, location: aclrtMemLocation) -> Outcome<u64> {
        if address == 0 {
            return invalid_param();
        }
        let Some(mapping) = self.mapping_of(address) else {
            return param_invalid();
        };
        let key = (location.type_, location.id);
        Ok(if mapping.granted.contains(&key) {
            u64::from(ACL_RT_MEM_ACCESS_FLAGS_READWRITE)
        } else {
            NEVER_SET
        })
    }

    /// `aclrtMemRetainAllocationHandle`: the handle it returns (any address
    /// inside a mapping; one more reference).
    pub fn retain(&self, address: usize) -> Outcome<usize> {
        if address == 0 {
            return invalid_param();
        }
        self.mapping_of(address)
            .map_or_else(param_invalid, |mapping| Ok(mapping.handle))
    }

    pub fn commit_retain(&mut self, handle: usize) {
        if let Some(physical) = self.physical_mut(handle) {
            physical.refs += 1;
        }
    }

    // ---- copies and sets (§6) -----------------------------------------------

    /// The pieces of `[address, address + len)` in device memory: inside one
    /// live `aclrtMalloc` allocation, or inside one reserved range with
    /// every byte mapped and accessible (copies span adjacent mappings).
    pub fn device_range(&self, address: usize, len: usize) -> Outcome<Vec<Piece>> {
        let end = address.checked_add(len).ok_or(ACL_ERROR_RT_PARAM_INVALID)?;
        if let Some(alloc) = self
            .device_allocs
            .iter()
            .find(|a| (a.address..a.address + a.size).contains(&address))
        {
            if end > alloc.address + alloc.size {
                return param_invalid();
            }
            return Ok(vec![Piece {
                owner: Owner::Device(alloc.address),
                offset: address - alloc.address,
                at: 0,
                len,
            }]);
        }
        let Some(range) = self.reservation_of(address) else {
            // A freed allocation's address (the model never aims elsewhere).
            return param_invalid();
        };
        if end > range.base + range.size {
            return param_invalid();
        }
        let mut pieces = Vec::new();
        let mut cursor = address;
        while cursor < end {
            let Some(mapping) = self.mapping_of(cursor) else {
                return param_invalid();
            };
            if !mapping.accessible {
                return param_invalid();
            }
            let take = (mapping.address + mapping.size - cursor).min(end - cursor);
            pieces.push(Piece {
                owner: Owner::Physical(mapping.handle),
                offset: cursor - mapping.address,
                at: cursor - address,
                len: take,
            });
            cursor += take;
        }
        Ok(pieces)
    }

    /// A host range of a copy: pageable memory is the caller's, but a range
    /// starting in a pinned allocation must stay inside it
    /// (runtime-choices: 107000).
    fn host_range(&self, address: usize, len: usize) -> Outcome<()> {
        match self
            .host_allocs
            .iter()
            .find(|a| (a.address..a.address + a.size).contains(&address))
        {
            Some(alloc) if address + len > alloc.address + alloc.size => param_invalid(),
            _ => Ok(()),
        }
    }

    /// `aclrtMemcpy` between `device` (a device address, 0 for NULL) and
    /// `host` (0 for NULL): the pieces of device memory it touches.
    pub fn memcpy(
        &self,
        device: usize,
        host: usize,
        dest_max: usize,
        count: usize,
        kind: aclrtMemcpyKind,
    ) -> Outcome<Vec<Piece>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        if device == 0 || host == 0 || kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
            return invalid_param();
        }
        if dest_max == 0 || count > dest_max {
            return param_invalid();
        }
        self.host_range(host, count)?;
        self.device_range(device, count)
    }

    /// `aclrtMemset` of device memory: the pieces it sets.
    pub fn memset(&self, address: usize, max_count: usize, count: usize) -> Outcome<Vec<Piece>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        if address == 0 {
            return invalid_param();
        }
        if count > max_count {
            return param_invalid();
        }
        self.device_range(address, count)
    }

    fn bytes_mut(&mut self, owner: Owner) -> Option<&mut Bytes> {
        match owner {
            Owner::Device(address) => self
                .device_allocs
                .iter_mut()
                .find(|a| a.address == address)
                .map(|a| &mut a.bytes),
            Owner::Physical(handle) => self.physical_mut(handle).map(|p| &mut p.bytes),
        }
    }

    fn bytes(&self, owner: Owner) -> Option<&Bytes> {
        match owner {
            Owner::Device(address) => self
                .device_allocs
                .iter()
                .find(|a| a.address == address)
                .map(|a| &a.bytes),
            Owner::Physical(handle) => self.physical(handle).map(|p| &p.bytes),
        }
    }

    /// Records `data` copied into the pieces.
    pub fn commit_write(&mut self, pieces: &[Piece], data: &[u8]) {
        for piece in pieces {
            if let Some(bytes) = self.bytes_mut(piece.owner) {
                bytes.write(piece.offset, &data[piece.at..piece.at + piece.len]);
            }
        }
    }

    /// Records a memset of the pieces.
    pub fn commit_fill(&mut self, pieces: &[Piece], value: u8) {
        for piece in pieces {
            if let Some(bytes) = self.bytes_mut(piece.owner) {
                bytes.fill(piece.offset, piece.len, value);
            }
        }
    }

    /// The runs of bytes of `piece` the model does not know, as `(offset
    /// in the owner, len)` (`None`: the owner is gone).
    pub fn unknown_runs(&self, piece: &Piece) -> Option<Vec<(usize, usize)>> {
        Some(self.bytes(piece.owner)?.unknown_runs(piece.offset, piece.len))
    }

    /// The first known byte a read of the pieces got wrong, described.
    pub fn check_read(&self, pieces: &[Piece], read: &[u8]) -> Option<String> {
        pieces.iter().find_map(|piece| {
            let bytes = self.bytes(piece.owner)?;
            let (offset, expected, actual) = bytes.mismatch(piece.offset, &read[piece.at..piece.at + piece.len])?;
            let owner = match piece.owner {
                Owner::Device(address) => format!("the allocation at {address:#x}"),
                Owner::Physical(handle) => format!("physical allocation {handle:#x}"),
            };
            Some(format!(
                "byte {offset:#x} of {owner} reads {actual:#04x}, the model has {expected:#04x}"
            ))
        })
    }

    /// The device whose memory `pieces` are (the first piece's).
    pub fn device_of(&self, pieces: &[Piece]) -> Option<i32> {
        match pieces.first()?.owner {
            Owner::Device(address) => self
                .device_allocs
                .iter()
                .find(|a| a.address == address)
                .map(|a| a.device),
            Owner::Physical(handle) => self.physical(handle).map(|p| p.device),
        }
    }
}
