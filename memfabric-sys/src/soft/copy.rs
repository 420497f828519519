//! Copies: the direction's validation as the real library does it, then
//! each side resolved to a local address (this rank's segments, a peer's
//! mapped DRAM or imported HBM, or the caller's memory) and the bytes moved
//! by the software device (`aclrtMemcpy` with the kind the two sides give,
//! or `aclrtMemcpyAsync` on the caller's stream with
//! `SMEM_BM_FLAG_USE_EXTERNAL_STREAM`), so its checks and sanitizer apply.
//!
//! Validation: NULL source or destination, size 0 and a type past `AUTO`
//! give `SMEM_INVALID_PARAM`; each side must then be of the class its
//! direction declares (L and H: outside the BM's GVA ranges; G: in either
//! range; GH: in the host range), or the copy is `SMEM_INVALID_PARAM`. A
//! batch takes its classes from entry 0 only; it attempts every entry and
//! returns `SMEM_PARTIAL_FAILED` when only some failed.
//!
//! Submission, as MemFabric 1.3's source does it: without
//! `ASYNC_COPY_FLAG` a copy is synchronous, whatever the stream of
//! `SMEM_BM_FLAG_USE_EXTERNAL_STREAM`; with both, it is queued on the
//! caller's stream; with `ASYNC_COPY_FLAG` alone it is queued for the
//! calling thread, and only that thread's `smem_bm_wait` runs it (MemFabric
//! puts a thread's asynchronous copies on the thread's own stream and
//! waits for the calling thread's stream only). A waited copy whose local
//! side was registered memory that has been unregistered meanwhile fails
//! instead of touching it.

use crate::soft::bm::handle::Bm;
use crate::soft::bm::peer::Peer;
use crate::soft::core::result::{SoftError, SoftResult, fail};
use crate::soft::memory::hbm::with_device;
use crate::types::*;
use ascend_sys::soft::direct as acl;
use ascend_sys::{
    ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST, ACL_SUCCESS, aclrtPtrAttributes,
};
use std::sync::Arc;

/// The class a side of a copy must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Local device memory, outside the pool.
    L,
    /// Local host memory, outside the pool.
    H,
    /// A global GVA (device or host range).
    G,
    /// A global host GVA.
    Gh,
}

/// Where an address lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Local,
    Device(u32, u64),
    Host(u32, u64),
}

/// The declared (source, destination) classes of a copy type.
fn classes(kind: smem_bm_copy_type) -> Option<(Class, Class)> {
    Some(match kind {
        SMEMB_COPY_L2G => (Class::L, Class::G),
        SMEMB_COPY_G2L => (Class::G, Class::L),
        SMEMB_COPY_G2H => (Class::G, Class::H),
        SMEMB_COPY_H2G => (Class::H, Class::G),
        SMEMB_COPY_L2GH => (Class::L, Class::Gh),
        SMEMB_COPY_GH2L => (Class::Gh, Class::L),
        SMEMB_COPY_GH2H => (Class::Gh, Class::H),
        SMEMB_COPY_H2GH => (Class::H, Class::Gh),
        SMEMB_COPY_G2G => (Class::G, Class::G),
        _ => return None,
    })
}

fn place(bm: &Bm, address: u64) -> Place {
    if let Some((rank, offset)) = bm.device.locate(address) {
        Place::Device(rank, offset)
    } else if let Some((rank, offset)) = bm.host.locate(address) {
        Place::Host(rank, offset)
    } else {
        Place::Local
    }
}

/// Whether the software device knows `address` as device memory.
fn is_device_memory(address: u64) -> bool {
    let mut attributes = aclrtPtrAttributes::default();
    // SAFETY: a valid out-pointer; the pointer is only looked up.
    let code = unsafe { acl::aclrtPointerGetAttributes(address as *const _, &mut attributes) };
    code == ACL_SUCCESS && attributes.location.type_ == ACL_MEM_LOCATION_TYPE_DEVICE
}

/// The class of `address` for `AUTO`.
fn auto_class(bm: &Bm, address: u64) -> Class {
    match place(bm, address) {
        Place::Device(..) => Class::G,
        Place::Host(..) => Class::Gh,
        Place::Local if is_device_memory(address) => Class::L,
        Place::Local => Class::H,
    }
}

fn matches(class: Class, place: Place) -> bool {
    matches!(
        (class, place),
        (Class::L | Class::H, Place::Local)
            | (Class::G, Place::Device(..) | Place::Host(..))
            | (Class::Gh, Place::Host(..))
    )
}

/// Validates the arguments common to every copy and gives the classes of
/// the direction, from the addresses of entry 0.
fn direction(bm: &Bm, src: u64, dst: u64, kind: smem_bm_copy_type) -> SoftResult<(Class, Class)> {
    if kind == SMEMB_COPY_AUTO {
        let (from, to) = (auto_class(bm, src), auto_class(bm, dst));
        if matches!((from, to), (Class::L | Class::H, Class::L | Class::H)) {
            return fail(SMEM_INVALID_PARAM, "AUTO: neither side is a GVA of this BM");
        }
        return Ok((from, to));
    }
    let Some((from, to)) = classes(kind) else {
        return fail(
            SMEM_INVALID_PARAM,
            format!("copy type {kind} is not below SMEMB_COPY_BUTT"),
        );
    };
    if !matches(from, place(bm, src)) || !matches(to, place(bm, dst)) {
        return fail(
            SMEM_INVALID_PARAM,
            format!("src {src:#x} and dest {dst:#x} are not of the classes copy type {kind} declares"),
        );
    }
    Ok((from, to))
}

/// One side, resolved: the local address, whether it is device memory, and
/// the peer keeping a mapping alive.
struct Side {
    address: u64,
    device: bool,
    /// Local memory (L or H), not a segment of the pool.
    local: bool,
    _peer: Option<Arc<Peer>>,
}

/// The peers one call touches, each looked up once ([`Bm::peer`]: a store
/// round trip, and the control timeout for a rank that is gone), so a batch
/// of many entries into one peer asks the store once and waits for a gone
/// rank once.
struct Peers<'a> {
    bm: &'a Bm,
    seen: Vec<(u32, SoftResult<Arc<Peer>>)>,
}

impl<'a> Peers<'a> {
    fn new(bm: &'a Bm) -> Self {
        Peers { bm, seen: Vec::new() }
    }

    fn get(&mut self, rank: u32) -> SoftResult<Arc<Peer>> {
        if let Some((_, known)) = self.seen.iter().find(|(seen, _)| *seen == rank) {
            return known.clone();
        }
        let found = self.bm.peer(rank);
        self.seen.push((rank, found.clone()));
        found
    }
}

fn resolve(peers: &mut Peers<'_>, class: Class, address: u64, size: u64) -> SoftResult<Side> {
    let bm = peers.bm;
    let place = place(bm, address);
    let in_segment = |offset: u64, stride: u64| {
        if offset.checked_add(size).is_none_or(|end| end > stride) {
            fail(
                SMEM_INVALID_PARAM,
                format!("{size} bytes at GVA {address:#x} run past the end of its rank's segment"),
            )
        } else {
            Ok(())
        }
    };
    match (class, place) {
        (Class::L, _) => Ok(Side {
            address,
            device: true,
            local: true,
            _peer: None,
        }),
        (Class::H, _) => Ok(Side {
            address,
            device: false,
            local: true,
            _peer: None,
        }),
        (_, Place::Host(rank, offset)) => {
            in_segment(offset, bm.host.stride)?;
            if rank == bm.world.rank {
                let base = bm.local_dram().map_or(0, |dram| dram.address() as u64);
                return Ok(Side {
                    address: base + offset,
                    device: false,
                    local: false,
                    _peer: None,
                });
            }
            let peer = peers.get(rank)?;
            let base = peer.dram.as_ref().map_or(0, |dram| dram.address() as u64);
            Ok(Side {
                address: base + offset,
                device: false,
                local: false,
                _peer: Some(peer),
            })
        }
        (_, Place::Device(rank, offset)) => {
            in_segment(offset, bm.device.stride)?;
            if rank == bm.world.rank {
                let base = bm.local_hbm().map_or(0, |hbm| hbm.address() as u64);
                return Ok(Side {
                    address: base + offset,
                    device: true,
                    local: false,
                    _peer: None,
                });
            }
            let peer = peers.get(rank)?;
            let base = peer.hbm.as_ref().map_or(0, |hbm| hbm.address() as u64);
            Ok(Side {
                address: base + offset,
                device: true,
                local: false,
                _peer: Some(peer),
            })
        }
        (_, Place::Local) => fail(
            SMEM_INVALID_PARAM,
            format!("{address:#x} is not a GVA of BM {}, as its copy type declares", bm.id),
        ),
    }
}

/// Moves `size` bytes between resolved sides: now (`aclrtMemcpy`), or
/// queued on `stream` (`aclrtMemcpyAsync`).
fn transfer(bm: &Bm, src: &Side, dst: &Side, size: u64, stream: Option<*mut c_void>) -> SoftResult {
    let kind = match (src.device, dst.device) {
        (false, false) => ACL_MEMCPY_HOST_TO_HOST,
        (false, true) => ACL_MEMCPY_HOST_TO_DEVICE,
        (true, false) => ACL_MEMCPY_DEVICE_TO_HOST,
        (true, true) => ACL_MEMCPY_DEVICE_TO_DEVICE,
    };
    let Ok(count) = usize::try_from(size) else {
        return fail(SMEM_INVALID_PARAM, "the size does not fit this process");
    };
    let (to, from) = (dst.address as *mut c_void, src.address as *const c_void);
    with_device(bm.world.device, || {
        let code = if let Some(stream) = stream {
            // SAFETY: the sides are the caller's memory (its contract) or
            // pool segments held alive by `src`/`dst` for this call; the
            // software device validates both ranges and the stream.
            unsafe { acl::aclrtMemcpyAsync(to, count, from, count, kind, stream) }
        } else {
            // SAFETY: as above.
            unsafe { acl::aclrtMemcpy(to, count, from, count, kind) }
        };
        if code == ACL_SUCCESS {
            Ok(())
        } else {
            let what = if stream.is_some() {
                "aclrtMemcpyAsync"
            } else {
                "aclrtMemcpy"
            };
            fail(
                SMEM_ERROR,
                format!(
                    "{what} of {size} bytes failed on the software device: error {code}: {}",
                    ascend_sys::soft::recent_error().unwrap_or_default()
                ),
            )
        }
    })
}

/// `smem_bm_copy` after the handle lookup.
pub(crate) fn copy(bm: &Arc<Bm>, params: &smem_copy_params_t, kind: smem_bm_copy_type, flags: u32) -> SoftResult {
    let (src, dst) = (params.src as u64, params.dest as u64);
    if src == 0 || dst == 0 || params.dataSize == 0 || kind >= SMEMB_COPY_BUTT {
        return fail(
            SMEM_INVALID_PARAM,
            "src and dest must not be NULL, dataSize not 0, the type below BUTT",
        );
    }
    let size = params.dataSize as u64;
    let (from, to) = direction(bm, src, dst, kind)?;
    let mut peers = Peers::new(bm);
    let source = resolve(&mut peers, from, src, size)?;
    let destination = resolve(&mut peers, to, dst, size)?;
    submit(bm, source, destination, size, flags, params.stream)
}

/// Moves the bytes now, or queues them for this thread's `smem_bm_wait`
/// (`ASYNC_COPY_FLAG` without an external stream).
fn submit(bm: &Arc<Bm>, source: Side, destination: Side, size: u64, flags: u32, stream: *mut c_void) -> SoftResult {
    if flags & ASYNC_COPY_FLAG == 0 {
        return transfer(bm, &source, &destination, size, None);
    }
    if flags & SMEM_BM_FLAG_USE_EXTERNAL_STREAM != 0 {
        return transfer(bm, &source, &destination, size, Some(stream));
    }
    let registration = |side: &Side| side.local.then(|| bm.registration_of(side.address, size)).flatten();
    let pending = Pending {
        registrations: [registration(&source), registration(&destination)],
        bm: Arc::clone(bm),
        source,
        destination,
        size,
    };
    PENDING.with(|queue| queue.borrow_mut().push(pending));
    Ok(())
}

/// An asynchronous copy queued for its thread's `smem_bm_wait`.
struct Pending {
    /// Its BM object, kept alive (its own segments) until the copy runs.
    bm: Arc<Bm>,
    source: Side,
    destination: Side,
    size: u64,
    /// The registrations its local sides lay in when it was queued.
    registrations: [Option<(u64, u64)>; 2],
}

thread_local! {
    /// This thread's asynchronous copies, by BM object, in queue order.
    static PENDING: std::cell::RefCell<Vec<Pending>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `smem_bm_wait`: runs this thread's queued copies of `bm`, in order; the
/// first failure (the others still run).
pub(crate) fn wait(bm: &Arc<Bm>) -> SoftResult {
    let mine: Vec<Pending> = PENDING.with(|queue| {
        let mut queue = queue.borrow_mut();
        let (mine, others): (Vec<_>, Vec<_>) = queue.drain(..).partition(|pending| Arc::ptr_eq(&pending.bm, bm));
        *queue = others;
        mine
    });
    let mut first = None;
    for pending in mine {
        let result = if pending
            .registrations
            .iter()
            .flatten()
            .any(|&(start, len)| bm.registration_of(start, len) != Some((start, len)))
        {
            fail(
                SMEM_ERROR,
                "a local side of an asynchronous copy was unregistered before smem_bm_wait: the copy is dropped",
            )
        } else {
            transfer(bm, &pending.source, &pending.destination, pending.size, None)
        };
        if let Err(error) = result {
            first.get_or_insert(error);
        }
    }
    first.map_or(Ok(()), Err)
}

/// `smem_bm_copy_batch` after the handle lookup: the direction from entry 0,
/// then every entry in order; `SMEM_PARTIAL_FAILED` when some failed and
/// others were moved, the first failure's code when all failed.
///
/// # Safety
///
/// The arrays of `params` hold `batchSize` entries.
pub(crate) unsafe fn copy_batch(
    bm: &Arc<Bm>,
    params: &smem_batch_copy_params_t,
    kind: smem_bm_copy_type,
    flags: u32,
) -> SoftResult {
    if params.sources.is_null() || params.destinations.is_null() || params.dataSizes.is_null() {
        return fail(
            SMEM_INVALID_PARAM,
            "sources, destinations and dataSizes must not be NULL",
        );
    }
    if params.batchSize == 0 || kind >= SMEMB_COPY_BUTT {
        return fail(SMEM_INVALID_PARAM, "batchSize must not be 0, the type below BUTT");
    }
    let count = params.batchSize as usize;
    // SAFETY: non-NULL, `batchSize` entries by the caller's contract.
    let (sources, destinations, sizes) = unsafe {
        (
            std::slice::from_raw_parts(params.sources, count),
            std::slice::from_raw_parts(params.destinations, count),
            std::slice::from_raw_parts(params.dataSizes, count),
        )
    };
    let (src0, dst0) = (sources[0] as u64, destinations[0] as u64);
    if src0 == 0 || dst0 == 0 || sizes[0] == 0 {
        return fail(
            SMEM_INVALID_PARAM,
            "entry 0: src and dest must not be NULL, the size not 0",
        );
    }
    let (from, to) = direction(bm, src0, dst0, kind)?;
    let injected = crate::soft::faults::take_batch_entry();
    let mut failed: Vec<(usize, SoftError)> = Vec::new();
    let mut peers = Peers::new(bm);
    for (index, ((&src, &dst), &size)) in sources.iter().zip(destinations).zip(sizes).enumerate() {
        let result = match injected {
            Some((entry, code)) if entry as usize == index => fail(code, "injected fault"),
            _ if src.is_null() || dst.is_null() || size == 0 => fail(SMEM_INVALID_PARAM, "NULL address or size 0"),
            _ => resolve(&mut peers, from, src as u64, size).and_then(|source| {
                let destination = resolve(&mut peers, to, dst as u64, size)?;
                submit(bm, source, destination, size, flags, params.stream)
            }),
        };
        if let Err(error) = result {
            failed.push((index, error));
        }
    }
    let Some((first, error)) = failed.first() else {
        return Ok(());
    };
    // The first few failures, then a count: a batch into a gone rank fails
    // every entry with the same message.
    const LISTED: usize = 3;
    let mut entries: Vec<String> = failed
        .iter()
        .take(LISTED)
        .map(|(index, error)| format!("entry {index}: {}", error.message))
        .collect();
    if failed.len() > LISTED {
        entries.push(format!("and {} more", failed.len() - LISTED));
    }
    let code = if failed.len() == count {
        error.code
    } else {
        SMEM_PARTIAL_FAILED
    };
    fail(
        code,
        format!(
            "batch entry {first} failed ({} of {count} entries): {}",
            failed.len(),
            entries.join("; ")
        ),
    )
}

/// `smem_bm_gva_to_va`: this rank's local address behind `gva`.
pub(crate) fn gva_to_va(bm: &Bm, gva: u64, kind: smem_bm_mem_type) -> SoftResult<*mut c_void> {
    let (rank, offset, base) = match (kind, place(bm, gva)) {
        (SMEM_MEM_TYPE_LOCAL_DEVICE, Place::Device(rank, offset)) => {
            (rank, offset, bm.local_hbm().map(|hbm| hbm.address() as u64))
        }
        (SMEM_MEM_TYPE_LOCAL_HOST, Place::Host(rank, offset)) => {
            (rank, offset, bm.local_dram().map(|dram| dram.address() as u64))
        }
        (SMEM_MEM_TYPE_LOCAL_DEVICE | SMEM_MEM_TYPE_LOCAL_HOST, _) => {
            return fail(
                SMEM_INVALID_PARAM,
                format!("{gva:#x} is not a GVA of memory type {kind}"),
            );
        }
        _ => {
            return fail(
                SMEM_INVALID_PARAM,
                format!("vaMemType {kind}: only SMEM_MEM_TYPE_LOCAL_DEVICE and SMEM_MEM_TYPE_LOCAL_HOST"),
            );
        }
    };
    match base {
        Some(base) if rank == bm.world.rank => Ok((base + offset) as *mut c_void),
        _ => fail(
            SMEM_INVALID_PARAM,
            format!("{gva:#x} belongs to rank {rank}, not this rank {}", bm.world.rank),
        ),
    }
}

/// `smem_bm_get_rank_id_by_gva`.
pub(crate) fn rank_by_gva(bm: &Bm, gva: u64) -> u32 {
    match place(bm, gva) {
        Place::Device(rank, _) | Place::Host(rank, _) => rank,
        Place::Local => u32::MAX,
    }
}
