//! The raw BM calls on one pool handle, shared by the borrowed forms
//! ([`GlobalPool`](super::GlobalPool), [`Member`](super::Member), the
//! registrations) and the owned ones ([`OwnedPool`](super::OwnedPool),
//! [`OwnedMember`](super::OwnedMember), ...): each function takes the raw
//! handle and what it logs, and turns the library's result into a
//! [`FabricError`]. The callers keep the order (a live, joined handle; memory
//! that stays registered) by their types.

use super::{BigMemory, FabricError, MemKind, PoolOptions, check, clear_last_error, sys};

/// A pool's raw handle, as a value that may cross threads.
///
/// The handle is an opaque pointer that this process never dereferences;
/// which thread may call the library with it is decided by its owner (the
/// borrowed forms stay on one thread, the owned ones serialise their calls:
/// [`OwnedPool`](super::OwnedPool)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Handle(pub(super) sys::smem_bm_t);

// SAFETY: the handle is an opaque token given back to the library; moving
// the number to another thread touches nothing, and the owners that call
// the library with it from several threads serialise those calls.
unsafe impl Send for Handle {}
// SAFETY: as for `Send`: a shared `Handle` only hands out the number.
unsafe impl Sync for Handle {}

impl Handle {
    /// The handle as a number, to tell the sides of two pools apart.
    pub(super) fn id(self) -> usize {
        self.0 as usize
    }
}

/// Creates pool `id` of `bm` as `options` say (`smem_bm_create2`): the
/// checks before the call, the id claimed in `bm` while the handle lives.
/// Undo with [`destroy`].
pub(super) fn create(bm: &BigMemory, id: u32, options: &PoolOptions) -> Result<Handle, FabricError> {
    let raw = options.to_raw(bm.world_size())?;
    if !bm.claim_pool(id) {
        return Err(FabricError::InvalidArgument {
            method: "BigMemory::create_pool",
            reason: format!("pool {id} is alive in this process already"),
        });
    }
    clear_last_error();
    // SAFETY: the BM is initialised (`bm` is alive), and `raw` is a
    // complete option alive for the call.
    let handle = unsafe { sys::smem_bm_create2(id, &raw) };
    if handle.is_null() {
        let error = FabricError::last("smem_bm_create2");
        bm.release_pool(id);
        return Err(error);
    }
    log::debug!("smem_bm_create2: pool {id} created ({options:?})");
    Ok(Handle(handle))
}

/// Destroys pool `id` (`smem_bm_destroy`) and forgets its id in `bm`.
///
/// # Safety
///
/// `handle` came from [`create`] with `bm` and `id`, and nothing uses it
/// any more (no member joined, no copy queued); it is not used afterwards.
pub(super) unsafe fn destroy(bm: &BigMemory, handle: Handle, id: u32) {
    // SAFETY: the caller's contract: a live handle no one uses.
    unsafe { sys::smem_bm_destroy(handle.0) };
    log::debug!("smem_bm_destroy: pool {id} destroyed");
    bm.release_pool(id);
}

/// Joins this rank to the pool (`smem_bm_join`).
pub(super) fn join(handle: Handle, rank: u32, id: u32) -> Result<(), FabricError> {
    clear_last_error();
    // SAFETY: a live handle (the caller's pool); flags 0.
    check("smem_bm_join", unsafe { sys::smem_bm_join(handle.0, 0) })?;
    log::debug!("smem_bm_join: rank {rank} joined pool {id}");
    Ok(())
}

/// Leaves the pool (`smem_bm_leave`).
///
/// # Safety
///
/// This rank joined `handle`, and no registration or queued copy of the
/// membership is alive.
pub(super) unsafe fn leave(handle: Handle, rank: u32, id: u32) -> Result<(), FabricError> {
    clear_last_error();
    // SAFETY: the caller's contract: a live, joined handle nothing uses.
    let code = unsafe { sys::smem_bm_leave(handle.0, 0) };
    log::debug!("smem_bm_leave: rank {rank} left pool {id}");
    check("smem_bm_leave", code)
}

/// Where rank `rank`'s `bytes` of memory of kind `K` start in the global
/// address space (`smem_bm_ptr_by_mem_type`), checked first: the rank
/// below `world_size`, a pool with that memory. (GVA, length.)
pub(super) fn range<K: MemKind>(
    handle: Handle,
    (pool, world_size): (u32, u32),
    rank: u32,
    bytes: u64,
    method: &'static str,
) -> Result<(u64, usize), FabricError> {
    let refuse = |reason: String| FabricError::InvalidArgument { method, reason };
    if rank >= world_size {
        return Err(refuse(format!("rank {rank} in a world of {world_size}")));
    }
    if bytes == 0 {
        return Err(refuse(format!("pool {pool} has no {}", K::NAME)));
    }
    let len = usize::try_from(bytes).map_err(|_| refuse(format!("{bytes} bytes do not fit this process")))?;
    let peer = u16::try_from(rank).map_err(|_| refuse(format!("rank {rank} above 65535")))?;
    clear_last_error();
    // SAFETY: a live, joined handle (the caller's member); the memory type
    // is DEVICE or HOST.
    let gva = unsafe { sys::smem_bm_ptr_by_mem_type(handle.0, K::MEM_TYPE, peer) };
    if gva.is_null() {
        return Err(FabricError::last("smem_bm_ptr_by_mem_type"));
    }
    Ok((gva as u64, len))
}

/// Registers `len` bytes at `address` with the pool
/// (`smem_bm_register_user_mem`); an empty buffer is refused first.
///
/// # Safety
///
/// `handle` is live and joined, and the `len` bytes at `address` stay
/// allocated, and out of anyone else's reach, until they are unregistered
/// ([`unregister`]) or leaked.
pub(super) unsafe fn register(
    handle: Handle,
    pool: u32,
    method: &'static str,
    address: u64,
    len: usize,
) -> Result<(), FabricError> {
    if len == 0 {
        return Err(FabricError::InvalidArgument {
            method,
            reason: "an empty buffer".into(),
        });
    }
    clear_last_error();
    // SAFETY: the caller's contract: a live, joined handle, and memory that
    // stays the registration's until it is unregistered.
    check("smem_bm_register_user_mem", unsafe {
        sys::smem_bm_register_user_mem(handle.0, address, len as u64)
    })?;
    log::debug!("smem_bm_register_user_mem: {len} bytes at {address:#x} with pool {pool}");
    Ok(())
}

/// Unregisters the memory registered at `address`
/// (`smem_bm_unregister_user_mem`).
///
/// # Safety
///
/// `handle` is live and joined, and no copy that may use the memory is
/// queued.
pub(super) unsafe fn unregister(handle: Handle, address: u64) -> Result<(), FabricError> {
    clear_last_error();
    // SAFETY: the caller's contract: a live handle, no copy of the memory
    // in flight.
    let code = unsafe { sys::smem_bm_unregister_user_mem(handle.0, address) };
    log::debug!("smem_bm_unregister_user_mem: {address:#x}");
    check("smem_bm_unregister_user_mem", code)
}

/// Waits for the calling thread's asynchronous copies on the handle
/// (`smem_bm_wait`: MemFabric waits for the calling thread's stream only).
pub(super) fn wait(handle: Handle) -> Result<(), FabricError> {
    clear_last_error();
    // SAFETY: a live, joined handle (the caller's member).
    let code = unsafe { sys::smem_bm_wait(handle.0) };
    log::debug!(
        "smem_bm_wait: the asynchronous copies of {:#x} (code {code})",
        handle.id()
    );
    check("smem_bm_wait", code)
}
