//! Message buffers (mbufs, `aclrtAllocBuf` & co): headers, shared data
//! areas, user-data areas and chains, behind this family's own lock
//! ([`Rank::Mbufs`]).
//!
//! The model (the runtime's ACL layer checks arguments, the closed driver
//! `halMbuf*` decides the rest; `docs/runtime-choices.md` lists the choices):
//!
//! - An mbuf is a *header* (the `aclrtMbuf` handle) pointing at a *data
//!   area*. `aclrtCopyBufRef` makes a second header on the same data area;
//!   the area holds one reference per header and is freed with the last one
//!   (`aclrtFreeBuf` drops a header's reference).
//! - The data area is host memory of the software device (64-byte aligned,
//!   zeroed, outside the device arena: the host reads and writes it
//!   directly, as on the device side where mbufs live in shared memory).
//! - Each header has a data length (0 at allocation, at most the capacity)
//!   and a 96-byte user-data ("private") area; a reference copy starts with
//!   copies of both.
//! - Headers form singly linked chains: `aclrtAppendBufChain` links a buffer
//!   (and its own chain) after the last one of a chain; freeing a chain's
//!   head frees every member.
//!
//! Handles are opaque tokens that are never reused and never dereferenced:
//! an unknown handle (never allocated, or freed: a double free or a use
//! after free) gives `ACL_ERROR_RT_PARAM_INVALID` and is recorded as misuse,
//! as is an append that would make a chain a cycle (the real driver would
//! use freed memory or loop there).

use crate::soft::check::misuse_log;
use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::types::*;
use std::alloc::Layout;
use std::collections::{BTreeMap, BTreeSet};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// Size of every header's user-data area (the runtime's ACL layer refuses
/// `size + offset` above 96).
pub(crate) const USER_DATA_SIZE: usize = 96;

/// Alignment of a data area.
const DATA_ALIGN: usize = 64;

/// First handle value; handles step by [`HANDLE_STEP`] and are never reused.
const HANDLE_BASE: usize = 0x4d42_0000_0000;
const HANDLE_STEP: usize = 0x100;

/// One data area: zeroed host memory, freed when its last header goes.
#[derive(Debug)]
struct DataArea {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the area is plain bytes owned by this value; the software device
// only hands its address out and deallocates it once, on drop.
unsafe impl Send for DataArea {}
// SAFETY: as above; `&DataArea` gives no access to the bytes.
unsafe impl Sync for DataArea {}

impl DataArea {
    /// A zeroed area of `size` (non-zero) bytes, or `None` when the host
    /// cannot provide it.
    fn new(size: usize) -> Option<Self> {
        let layout = Layout::from_size_align(size, DATA_ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size (the caller refuses 0).
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(Self { ptr, layout })
    }
}

impl Drop for DataArea {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once here.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// One header.
#[derive(Debug)]
struct Header {
    data: Arc<DataArea>,
    capacity: usize,
    len: usize,
    user: [u8; USER_DATA_SIZE],
    /// The next member of its chain.
    next: Option<usize>,
    /// Whether another header links to this one (it is not a chain head).
    linked: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    created: u64,
}

/// Every live header: this family's state.
#[derive(Debug)]
struct Mbufs {
    headers: BTreeMap<usize, Header>,
    next_handle: usize,
}

static MBUFS: Mutex<Mbufs> = Mutex::new(Mbufs {
    headers: BTreeMap::new(),
    next_handle: HANDLE_BASE,
});

/// The family's state, locked ([`Rank::Mbufs`]), starting the software
/// device if needed.
fn lock() -> SoftResult<Ranked<'static, Mbufs>> {
    started::core()?;
    Ok(locked())
}

/// The family's state, locked, without starting the software device.
fn locked() -> Ranked<'static, Mbufs> {
    lock_order::lock(&MBUFS, Rank::Mbufs)
}

/// The code and misuse record of a handle that is not a live header.
fn unknown<T>(api: &'static str, name: &str, handle: usize) -> SoftResult<T> {
    misuse_log::record(
        api,
        format!("{name} {handle:#x} is not a live mbuf (never allocated, or already freed)"),
    );
    fail(
        ACL_ERROR_RT_PARAM_INVALID,
        format!("{name} {handle:#x} is not a live mbuf (never allocated, or already freed)"),
    )
}

impl Mbufs {
    fn header(&self, api: &'static str, name: &str, handle: usize) -> SoftResult<&Header> {
        match self.headers.get(&handle) {
            Some(header) => Ok(header),
            None => unknown(api, name, handle),
        }
    }

    fn header_mut(&mut self, api: &'static str, name: &str, handle: usize) -> SoftResult<&mut Header> {
        match self.headers.get_mut(&handle) {
            Some(header) => Ok(header),
            None => unknown(api, name, handle),
        }
    }

    /// The chain from `handle` on (`handle` first), in order.
    fn chain(&self, handle: usize) -> Vec<usize> {
        let mut members = vec![handle];
        let mut at = self.headers.get(&handle).and_then(|header| header.next);
        while let Some(next) = at {
            members.push(next);
            at = self.headers.get(&next).and_then(|header| header.next);
        }
        members
    }

    fn insert(&mut self, header: Header) -> usize {
        let handle = self.next_handle;
        self.next_handle += HANDLE_STEP;
        self.headers.insert(handle, header);
        handle
    }
}

/// `aclrtAllocBuf` after the ACL layer's checks (`size` is non-zero).
pub(crate) fn alloc(size: usize) -> SoftResult<usize> {
    let mut state = lock()?;
    let Some(data) = DataArea::new(size) else {
        return fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("cannot allocate an mbuf of {size} bytes"),
        );
    };
    Ok(state.insert(Header {
        data: Arc::new(data),
        capacity: size,
        len: 0,
        user: [0; USER_DATA_SIZE],
        next: None,
        linked: false,
        created: crate::soft::core::sequence::next(),
    }))
}

/// `aclrtFreeBuf` after the NULL check: frees `handle` and the chain it
/// heads. A chain member (not a head) is refused: its head owns it.
pub(crate) fn free(handle: usize) -> SoftResult {
    const API: &str = "aclrtFreeBuf";
    let mut state = lock()?;
    if state.header(API, "buf", handle)?.linked {
        misuse_log::record(
            API,
            format!("buf {handle:#x} is linked in another mbuf's chain (free the chain's head)"),
        );
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("buf {handle:#x} is linked in another mbuf's chain; free the chain's head"),
        );
    }
    for member in state.chain(handle) {
        state.headers.remove(&member);
    }
    Ok(())
}

/// `aclrtGetBufData` after the NULL checks: the data area's address and
/// capacity.
pub(crate) fn data(handle: usize) -> SoftResult<(usize, usize)> {
    let state = lock()?;
    let header = state.header("aclrtGetBufData", "buf", handle)?;
    Ok((header.data.ptr.as_ptr() as usize, header.capacity))
}

/// `aclrtGetBufDataLen` after the NULL checks.
pub(crate) fn data_len(handle: usize) -> SoftResult<usize> {
    Ok(lock()?.header("aclrtGetBufDataLen", "buf", handle)?.len)
}

/// `aclrtSetBufDataLen` after the NULL check: `len` at most the capacity.
pub(crate) fn set_data_len(handle: usize, len: usize) -> SoftResult {
    let mut state = lock()?;
    let header = state.header_mut("aclrtSetBufDataLen", "buf", handle)?;
    if len > header.capacity {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("len {len} is above the mbuf's capacity {}", header.capacity),
        );
    }
    header.len = len;
    Ok(())
}

/// `aclrtGetBufUserData` after the ACL layer's checks: copies the bytes
/// `offset..offset + out.len()` of the user-data area into `out`. An empty
/// copy fails with `ACL_ERROR_FAILURE`, as the runtime's bounded copy does
/// with a destination of 0 bytes.
pub(crate) fn get_user_data(handle: usize, out: &mut [u8], offset: usize) -> SoftResult {
    let state = lock()?;
    let header = state.header("aclrtGetBufUserData", "buf", handle)?;
    if out.is_empty() {
        return fail(ACL_ERROR_FAILURE, "the copy of 0 bytes into dataPtr failed (size is 0)");
    }
    out.copy_from_slice(&header.user[offset..offset + out.len()]);
    Ok(())
}

/// `aclrtSetBufUserData` after the ACL layer's checks: copies `bytes` into
/// the user-data area at `offset`. An `offset` of 96 leaves a destination of
/// 0 bytes, which fails with `ACL_ERROR_FAILURE`, as in the runtime.
pub(crate) fn set_user_data(handle: usize, bytes: &[u8], offset: usize) -> SoftResult {
    let mut state = lock()?;
    let header = state.header_mut("aclrtSetBufUserData", "buf", handle)?;
    if offset >= USER_DATA_SIZE {
        return fail(
            ACL_ERROR_FAILURE,
            format!("the copy into the user-data area at offset {offset} failed (0 bytes left)"),
        );
    }
    header.user[offset..offset + bytes.len()].copy_from_slice(bytes);
    Ok(())
}

/// `aclrtCopyBufRef` after the NULL checks: a new header on `handle`'s data
/// area, with copies of its data length and user data, in no chain.
pub(crate) fn copy_ref(handle: usize) -> SoftResult<usize> {
    let mut state = lock()?;
    let header = state.header("aclrtCopyBufRef", "buf", handle)?;
    let copy = Header {
        data: Arc::clone(&header.data),
        capacity: header.capacity,
        len: header.len,
        user: header.user,
        next: None,
        linked: false,
        created: crate::soft::core::sequence::next(),
    };
    Ok(state.insert(copy))
}

/// `aclrtAppendBufChain` after the NULL checks: links `buf` (with its own
/// chain) after the last member of `head`'s chain. `buf` must head its
/// chain, and the two chains must be disjoint (else a cycle).
pub(crate) fn append(head: usize, buf: usize) -> SoftResult {
    const API: &str = "aclrtAppendBufChain";
    let mut state = lock()?;
    state.header(API, "headBuf", head)?;
    let linked = state.header(API, "buf", buf)?.linked;
    let head_chain = state.chain(head);
    let members: BTreeSet<usize> = head_chain.iter().copied().collect();
    if state.chain(buf).iter().any(|member| members.contains(member)) {
        misuse_log::record(
            API,
            format!("appending buf {buf:#x} to headBuf {head:#x} would make the chain a cycle"),
        );
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("buf {buf:#x} is already in the chain of headBuf {head:#x} (a cycle)"),
        );
    }
    if linked {
        misuse_log::record(API, format!("buf {buf:#x} is already linked in another chain"));
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("buf {buf:#x} is already linked in another chain"),
        );
    }
    let last = head_chain[head_chain.len() - 1];
    if let Some(header) = state.headers.get_mut(&last) {
        header.next = Some(buf);
    }
    if let Some(header) = state.headers.get_mut(&buf) {
        header.linked = true;
    }
    Ok(())
}

/// `aclrtGetBufChainNum` after the NULL checks: the members from `head` on.
pub(crate) fn chain_num(head: usize) -> SoftResult<u32> {
    let state = lock()?;
    state.header("aclrtGetBufChainNum", "headBuf", head)?;
    Ok(u32::try_from(state.chain(head).len()).unwrap_or(u32::MAX))
}

/// `aclrtGetBufFromChain` after the NULL checks: member `index` (0 is
/// `head`); an index at or past the count gives `ACL_ERROR_RT_PARAM_INVALID`.
pub(crate) fn chain_get(head: usize, index: u32) -> SoftResult<usize> {
    let state = lock()?;
    state.header("aclrtGetBufFromChain", "headBuf", head)?;
    let chain = state.chain(head);
    match chain.get(index as usize) {
        Some(&member) => Ok(member),
        None => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("index {index} is out of the chain's {} mbuf(s)", chain.len()),
        ),
    }
}

/// Live headers and the bytes of their distinct data areas (for
/// introspection: does not start the software device).
pub(crate) fn live() -> (usize, u64) {
    let state = locked();
    let mut areas = BTreeSet::new();
    let mut bytes = 0u64;
    for header in state.headers.values() {
        if areas.insert(header.data.ptr.as_ptr() as usize) {
            bytes += header.capacity as u64;
        }
    }
    (state.headers.len(), bytes)
}

/// The headers created at or after sequence number `since`.
pub(crate) fn created_since(since: u64) -> Vec<LiveResource> {
    locked()
        .headers
        .iter()
        .filter(|(_, header)| header.created >= since)
        .map(|(&handle, header)| {
            LiveResource::new(ResourceKind::Mbuf, handle, header.capacity as u64, header.created)
                .detail(describe(header))
        })
        .collect()
}

fn describe(header: &Header) -> String {
    format!(
        "data area {:#x} of {} bytes ({} reference(s)), data length {}{}",
        header.data.ptr.as_ptr() as usize,
        header.capacity,
        Arc::strong_count(&header.data),
        header.len,
        if header.linked { ", linked in a chain" } else { "" }
    )
}

/// One leak-report line per live header.
pub(crate) fn report() -> Vec<String> {
    locked()
        .headers
        .iter()
        .map(|(handle, header)| format!("mbuf {handle:#x}: {}", describe(header)))
        .collect()
}
