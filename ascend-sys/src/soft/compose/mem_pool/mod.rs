//! Stream-ordered memory pools (`aclrtMemPool*`): a family with its own
//! lock ([`Rank::MemPools`] in [`crate::soft::core::lock_order`]).
//!
//! A pool hands out blocks of real device memory (`aclrtMalloc*` memory of
//! the pool's device, sizes rounded up to the runtime's 2 MiB block). A
//! block given back by `aclrtMemPoolFreeAsync` stays cached in the pool,
//! with the stream it was freed on and a marker queued at the free's
//! position on that stream. A later `aclrtMemPoolMallocAsync` reuses it:
//!
//! - on the same stream, at once (the new work is ordered after the free);
//! - on another stream, only once the marker has run (the free, and every
//!   use ordered before it, is complete); otherwise it takes fresh memory,
//!   and past the pool's `maxSize` fails as the runtime does.
//!
//! A reused block is new memory for the stream-hazard sanitizer (no
//! history, unwritten). Trimming and destroying release cached blocks whose
//! free has run; the last `aclrtResetDevice` of a device releases its pools
//! with its memory. `aclFinalize` releases nothing: it only reports the
//! pools still alive as leaks.
//!
//! Pool blocks belong to their pool: `aclrtFree` refuses them ([`owns`]).

use crate::soft::check::sanitize::{self, Range};
use crate::soft::compose::device_free;
use crate::soft::compose::sanitize_ranges;
use crate::soft::compose::streams::{self, Stream};
use crate::soft::compose::translate::Translator;
use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::device_mem::{self, Rounding};
use crate::soft::share::Share;
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The runtime's block and pool alignment (`DEVICE_POOL_MIN_BLOCK_SIZE`,
/// `DEVICE_POOL_ALIGN_SIZE`: 2 MiB).
pub(crate) const BLOCK: u64 = 2 << 20;

/// Pool handles live in the kernel half of the address space, apart from
/// stream and event handles; numbers are never reused.
const HANDLE_BASE: usize = 0xffff_a000_0000_0000;

/// Where a block of a pool is.
enum State {
    /// Handed out.
    Live,
    /// Given back on `stream`; `done` is set when the free has run there.
    Cached { stream: Arc<Stream>, done: Arc<AtomicBool> },
}

struct Block {
    size: u64,
    state: State,
}

/// One pool.
struct Pool {
    device: i32,
    max_size: u64,
    event_dependencies: u32,
    opportunistic: u32,
    internal_dependencies: u32,
    release_threshold: u64,
    reserved: u64,
    reserved_high: u64,
    used: u64,
    used_high: u64,
    /// By device address.
    blocks: BTreeMap<usize, Block>,
    created: u64,
}

impl Pool {
    fn free_has_run(block: &Block) -> bool {
        matches!(&block.state, State::Cached { done, .. } if done.load(Ordering::Acquire))
    }

    /// Cached blocks whose free has run, to release until `reserved` is at
    /// most `keep`: removed from the pool, returned to be freed.
    fn release_idle(&mut self, keep: u64) -> Vec<(usize, u64)> {
        let mut released = Vec::new();
        let idle: Vec<usize> = self
            .blocks
            .iter()
            .filter(|(_, block)| Self::free_has_run(block))
            .map(|(&address, _)| address)
            .collect();
        for address in idle {
            if self.reserved <= keep {
                break;
            }
            if let Some(block) = self.blocks.remove(&address) {
                self.reserved -= block.size;
                released.push((address, block.size));
            }
        }
        released
    }
}

struct Pools {
    pools: BTreeMap<usize, Pool>,
    next: usize,
}

static POOLS: Mutex<Pools> = Mutex::new(Pools {
    pools: BTreeMap::new(),
    next: 0,
});

/// The number of live pools, published under the lock after every change:
/// [`owns`], asked by every `aclrtFree`, takes the family's lock only when
/// a pool exists.
static LIVE_POOLS: AtomicUsize = AtomicUsize::new(0);

impl Pools {
    /// Publishes the pool count (call after inserting or removing pools).
    fn publish(&self) {
        LIVE_POOLS.store(self.pools.len(), Ordering::Release);
    }
}

fn lock() -> SoftResult<Ranked<'static, Pools>> {
    started::core()?;
    Ok(locked())
}

fn locked() -> Ranked<'static, Pools> {
    lock_order::lock(&POOLS, Rank::MemPools)
}

/// Gives device memory back (outside the family's lock: a free may take
/// the sharing tables, a lower rank).
fn release(blocks: Vec<(usize, u64)>, api: &'static str) {
    for (address, _) in blocks {
        if let Err(failure) = device_free::free(address) {
            log::warn!("{api}: releasing pool block {address:#x}: {}", failure.message);
        }
    }
}

/// [`release`] for idle blocks whose free has run: the pool knows their
/// work is over (the host need not have seen it), so the sanitizer forgets
/// their history first.
fn release_idle_blocks(blocks: Vec<(usize, u64)>, api: &'static str) {
    for &(address, size) in &blocks {
        sanitize_ranges::allocated_device(address, size as usize, None);
    }
    release(blocks, api);
}

/// `aclrtMemPoolCreate` after the ACL layer's checks: the pool's device must
/// exist, and `maxSize` (0: the device's memory, rounded down to 2 MiB;
/// otherwise rounded up to 2 MiB) must fit in it.
pub(crate) fn create(props: &aclrtMemPoolProps) -> SoftResult<usize> {
    current::require()?;
    let core = started::core()?;
    let device = props.location.id as i32;
    let slot = core.device(device)?;
    let total = slot.capacity();
    let max_size = if props.maxSize == 0 {
        total / BLOCK * BLOCK
    } else {
        // The runtime rounds with `(maxSize + align - 1) / align * align`
        // in 64 bits: a maxSize within 2 MiB of SIZE_MAX wraps to 0 (a pool
        // that can hold nothing), which then passes the check below.
        (props.maxSize as u64).wrapping_add(BLOCK - 1) / BLOCK * BLOCK
    };
    if max_size > total {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "maxSize {} rounded up to {max_size} exceeds the device's memory ({total} bytes)",
                props.maxSize
            ),
        );
    }
    let mut pools = lock()?;
    pools.next += 1;
    let handle = HANDLE_BASE + (pools.next << 4);
    pools.pools.insert(
        handle,
        Pool {
            device,
            max_size,
            event_dependencies: 0,
            opportunistic: 0,
            internal_dependencies: 0,
            release_threshold: 0,
            reserved: 0,
            reserved_high: 0,
            used: 0,
            used_high: 0,
            blocks: BTreeMap::new(),
            created: crate::soft::core::sequence::next(),
        },
    );
    pools.publish();
    Ok(handle)
}

/// `aclrtMemPoolDestroy`: an unknown pool is the runtime's
/// `RT_ERROR_MEM_POOL_NULL` (`ACL_ERROR_RT_INTERNAL_ERROR`). As in the
/// runtime, live allocations do not stop it: every block goes.
pub(crate) fn destroy(handle: usize) -> SoftResult {
    let pool = {
        let mut pools = lock()?;
        let pool = pools.pools.remove(&handle);
        pools.publish();
        pool
    };
    let Some(pool) = pool else {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("memory pool {handle:#x} is not created or already destroyed"),
        );
    };
    let live = pool
        .blocks
        .values()
        .filter(|block| matches!(block.state, State::Live))
        .count();
    if live > 0 {
        log::warn!("aclrtMemPoolDestroy: memory pool {handle:#x} destroyed with {live} live allocation(s)");
    }
    // Blocks whose free has run are over; the others (live, or their free
    // still queued) go as `aclrtFree` would take them: the sanitizer
    // reports queued work that still uses them.
    let (idle, busy): (Vec<_>, Vec<_>) = pool
        .blocks
        .iter()
        .map(|(&address, block)| ((address, block.size), Pool::free_has_run(block)))
        .partition(|&(_, idle)| idle);
    release_idle_blocks(
        idle.into_iter().map(|(block, _)| block).collect(),
        "aclrtMemPoolDestroy",
    );
    release(
        busy.into_iter().map(|(block, _)| block).collect(),
        "aclrtMemPoolDestroy",
    );
    Ok(())
}

/// Whether `attr` takes a `u32` (the reuse flags) rather than a `u64`.
pub(crate) fn is_flag(attr: aclrtMemPoolAttr) -> bool {
    matches!(
        attr,
        ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES
            | ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC
            | ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES
    )
}

/// An attribute call on a pool that does not exist (`ACL_ERROR_RT_PARAM_INVALID`).
fn unknown<T>(handle: usize, what: &str) -> SoftResult<T> {
    fail(
        ACL_ERROR_RT_PARAM_INVALID,
        format!("memory pool {handle:#x} is not created: create it before {what} its attributes"),
    )
}

fn bad_attr<T>(attr: aclrtMemPoolAttr) -> SoftResult<T> {
    fail(
        ACL_ERROR_RT_INTERNAL_ERROR,
        format!("attr {attr} is not a settable aclrtMemPoolAttr"),
    )
}

/// `aclrtMemPoolSetAttr` with the value read (`u32` flags widened). The
/// current sizes are read-only (`ACL_ERROR_RT_PARAM_INVALID`); a release
/// threshold above the pool's size, a high-water mark set to anything but
/// 0 and an unknown attribute are the runtime's `RT_ERROR_POOL_PROP_INVALID`
/// (`ACL_ERROR_RT_INTERNAL_ERROR`).
pub(crate) fn set_attr(handle: usize, attr: aclrtMemPoolAttr, value: u64) -> SoftResult {
    let mut pools = lock()?;
    if !pools.pools.contains_key(&handle) {
        return unknown(handle, "setting");
    }
    if attr == ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT || attr == ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("attr {attr} is read-only and does not support setting"),
        );
    }
    let Some(pool) = pools.pools.get_mut(&handle) else {
        return bad_attr(attr);
    };
    let flag = u32::from(value != 0);
    match attr {
        ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES => pool.event_dependencies = flag,
        ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC => pool.opportunistic = flag,
        ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES => pool.internal_dependencies = flag,
        ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD => {
            if value > pool.max_size {
                return fail(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("release threshold {value} exceeds the pool's size {}", pool.max_size),
                );
            }
            pool.release_threshold = value;
        }
        ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH | ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH => {
            if value != 0 {
                return fail(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("attr {attr} (a high-water mark) accepts only 0, not {value}"),
                );
            }
            if attr == ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH {
                pool.reserved_high = 0;
            } else {
                pool.used_high = 0;
            }
        }
        _ => return bad_attr(attr),
    }
    Ok(())
}

/// `aclrtMemPoolGetAttr`: the value (`u32` flags widened); an unknown
/// attribute is `ACL_ERROR_RT_INTERNAL_ERROR`.
pub(crate) fn get_attr(handle: usize, attr: aclrtMemPoolAttr) -> SoftResult<u64> {
    let pools = lock()?;
    let Some(pool) = pools.pools.get(&handle) else {
        return unknown(handle, "getting");
    };
    Ok(match attr {
        ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES => u64::from(pool.event_dependencies),
        ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC => u64::from(pool.opportunistic),
        ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES => u64::from(pool.internal_dependencies),
        ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD => pool.release_threshold,
        ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT => pool.reserved,
        ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH => pool.reserved_high,
        ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT => pool.used,
        ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH => pool.used_high,
        _ => {
            return fail(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("attr {attr} is not an aclrtMemPoolAttr"),
            );
        }
    })
}

/// `aclrtMemPoolMallocAsync` after the ACL layer's checks (`size` > 0).
pub(crate) fn malloc_async(handle: usize, size: usize, stream: usize) -> SoftResult<usize> {
    let stream = streams::ordering_stream(stream)?;
    // Before taking the family's lock (contexts rank below it).
    let current = current::require()?;
    let Some(size) = (size as u64).checked_next_multiple_of(BLOCK) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("size {size} overflows when aligned to 2 MiB"),
        );
    };
    let mut pools = lock()?;
    let Some(pool) = pools.pools.get_mut(&handle) else {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("memory pool {handle:#x} is not created or already destroyed"),
        );
    };
    // The pool's device must be the current one, for a reused block as for
    // a fresh one.
    if current != pool.device {
        return fail(
            ACL_ERROR_RT_STREAM_CONTEXT,
            format!(
                "memory pool {handle:#x} belongs to device {}, not to the current device",
                pool.device
            ),
        );
    }
    // Reuse: the smallest cached block that fits and is ordered after its
    // free (same stream), or whose free has run.
    let reusable = pool
        .blocks
        .iter()
        .filter(|(_, block)| block.size >= size)
        .filter(|(_, block)| match &block.state {
            State::Live => false,
            State::Cached { stream: freed_on, done } => Arc::ptr_eq(freed_on, &stream) || done.load(Ordering::Acquire),
        })
        .min_by_key(|(address, block)| (block.size, **address))
        .map(|(&address, _)| address);
    let (address, block_size) = if let Some(address) = reusable {
        let Some(block) = pool.blocks.get_mut(&address) else {
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "a pool block vanished");
        };
        block.state = State::Live;
        (address, block.size)
    } else {
        // `reserved` never exceeds `max_size`; `size` may be near 2^64.
        if size > pool.max_size - pool.reserved {
            // Idle blocks of other sizes whose free has run make room.
            let room = pool.max_size.saturating_sub(size);
            let released = pool.release_idle(room);
            if size > pool.max_size - pool.reserved {
                drop(pools);
                release_idle_blocks(released, "aclrtMemPoolMallocAsync");
                return fail(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("memory pool {handle:#x} cannot allocate {size} bytes: it would exceed its maxSize"),
                );
            }
            drop(pools);
            release_idle_blocks(released, "aclrtMemPoolMallocAsync");
            return fresh(handle, size);
        }
        drop(pools);
        return fresh(handle, size);
    };
    pool.used += block_size;
    pool.used_high = pool.used_high.max(pool.used);
    drop(pools);
    sanitize_ranges::allocated_device(address, block_size as usize, Some("aclrtMemPoolMallocAsync"));
    Ok(address)
}

/// A fresh block of `size` bytes for pool `handle`, of the current device
/// (checked by the caller). The family's lock is let go while device
/// memory is taken, then taken again: another thread may have destroyed
/// the pool meanwhile.
fn fresh(handle: usize, size: u64) -> SoftResult<usize> {
    let address = device_mem::malloc(size as usize, Rounding::Align32, ACL_MEM_MALLOC_HUGE_FIRST)?;
    let mut pools = lock()?;
    let Some(pool) = pools
        .pools
        .get_mut(&handle)
        .filter(|pool| size <= pool.max_size - pool.reserved)
    else {
        drop(pools);
        release(vec![(address, size)], "aclrtMemPoolMallocAsync");
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("memory pool {handle:#x} was destroyed or filled meanwhile"),
        );
    };
    pool.blocks.insert(
        address,
        Block {
            size,
            state: State::Live,
        },
    );
    pool.reserved += size;
    pool.reserved_high = pool.reserved_high.max(pool.reserved);
    pool.used += size;
    pool.used_high = pool.used_high.max(pool.used);
    drop(pools);
    sanitize_ranges::allocated_device(address, size as usize, Some("aclrtMemPoolMallocAsync"));
    Ok(address)
}

/// `aclrtMemPoolFreeAsync` after the ACL layer's checks: `address` must be
/// the start of a live pool allocation (`ACL_ERROR_RT_PARAM_INVALID`
/// otherwise); the block is cached, reusable on `stream` at once and on
/// other streams once the marker queued here has run.
pub(crate) fn free_async(address: usize, stream: usize) -> SoftResult {
    let stream = streams::ordering_stream(stream)?;
    let mut pools = lock()?;
    let found = pools.pools.values_mut().find_map(|pool| {
        let live = matches!(pool.blocks.get(&address), Some(Block { state: State::Live, .. }));
        live.then_some(pool)
    });
    let Some(pool) = found else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{address:#x} is not the start of a live memory pool allocation"),
        );
    };
    let done = Arc::new(AtomicBool::new(false));
    let Some(block) = pool.blocks.get_mut(&address) else {
        return fail(ACL_ERROR_RT_INTERNAL_ERROR, "a pool block vanished");
    };
    block.state = State::Cached {
        stream: Arc::clone(&stream),
        done: Arc::clone(&done),
    };
    let size = block.size as usize;
    pool.used -= block.size;
    drop(pools);
    // For the sanitizer the free writes the block at the stream's position:
    // a use on another stream not ordered after it is a race with it. (A
    // block reused later starts afresh.)
    if sanitize::on()
        && let Ok(segments) = Translator::default().resolve(address, size, "ptr")
    {
        sanitize::queued(
            stream.site(),
            "aclrtMemPoolFreeAsync",
            &[(Range::write(address, size), true, &segments)],
        );
    }
    // Another stream reuses the block only once this marker has run.
    streams::enqueue_signal("aclrtMemPoolFreeAsync", &stream, done);
    Ok(())
}

/// `aclrtMemPoolTrimTo`: unknown pool `ACL_ERROR_RT_INTERNAL_ERROR`; a
/// target above the pool's size or below its used bytes, the runtime's
/// `RT_ERROR_POOL_OP_INVALID` (`ACL_ERROR_RT_INTERNAL_ERROR`).
pub(crate) fn trim_to(handle: usize, keep: usize) -> SoftResult {
    let keep = keep as u64;
    let mut pools = lock()?;
    let Some(pool) = pools.pools.get_mut(&handle) else {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("memory pool {handle:#x} is invalid or destroyed"),
        );
    };
    if keep > pool.max_size {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("minBytesToKeep {keep} exceeds the pool's size {}", pool.max_size),
        );
    }
    if keep >= pool.reserved {
        return Ok(());
    }
    if keep < pool.used {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("minBytesToKeep {keep} is below the pool's used bytes {}", pool.used),
        );
    }
    let released = pool.release_idle(keep);
    drop(pools);
    release_idle_blocks(released, "aclrtMemPoolTrimTo");
    Ok(())
}

/// Releases every pool of `device` (its last retain went), for a device
/// reset that holds the sharing tables and keeps the device unretained
/// throughout (so no pool made under a later retain is among them): the
/// pools leave the table, then their blocks go back to device memory.
/// Returns how many pools there were.
pub(crate) fn release_device(device: i32, sharing: &mut Share) -> usize {
    let gone: Vec<Pool> = {
        let mut pools = locked();
        let handles: Vec<usize> = pools
            .pools
            .iter()
            .filter(|(_, pool)| pool.device == device)
            .map(|(&handle, _)| handle)
            .collect();
        let gone = handles
            .into_iter()
            .filter_map(|handle| pools.pools.remove(&handle))
            .collect();
        pools.publish();
        gone
    };
    let count = gone.len();
    for pool in gone {
        // The device's own streams have run to the end, but a block may have
        // been freed on a stream of another device with work still queued
        // there, and a live block may be in use anywhere: only blocks whose
        // free has run forget their history; the others go as `aclrtFree`
        // would take them, so the sanitizer reports queued work on them.
        for (&address, block) in &pool.blocks {
            if Pool::free_has_run(block) {
                sanitize_ranges::allocated_device(address, block.size as usize, None);
            }
            if let Err(failure) = device_free::free_with_sharing(sharing, address) {
                log::warn!(
                    "aclrtResetDevice: releasing pool block {address:#x}: {}",
                    failure.message
                );
            }
        }
    }
    count
}

/// Whether `address` is the start of a block of some pool (live or
/// cached): `aclrtFree` must not take it. Takes only the family's lock;
/// the caller holds no lock.
pub(crate) fn owns(address: usize) -> bool {
    // The address was handed out before this free (the caller's own order),
    // so a pool owning it was published before: no pool, no lock.
    if LIVE_POOLS.load(Ordering::Acquire) == 0 {
        return false;
    }
    locked().pools.values().any(|pool| pool.blocks.contains_key(&address))
}

/// Number of live pools (for introspection).
pub(crate) fn pool_count() -> usize {
    locked().pools.len()
}

/// The pools created at or after sequence number `since` (for
/// introspection), with their reserved bytes.
pub(crate) fn created_since(since: u64) -> Vec<LiveResource> {
    locked()
        .pools
        .iter()
        .filter(|(_, pool)| pool.created >= since)
        .map(|(&handle, pool)| {
            let mut resource = LiveResource::new(ResourceKind::MemPool, handle, pool.reserved, pool.created);
            resource.device = Some(pool.device);
            resource.detail = format!(
                "{} block(s), {} bytes used of {} reserved",
                pool.blocks.len(),
                pool.used,
                pool.reserved
            );
            resource
        })
        .collect()
}
