//! Host memory of the pool: each rank's segment is shared memory (a
//! `memfd` named `memfabric-soft-dram`) that peers map through
//! `/proc/<pid>/fd/<fd>` (see [`SharedMemory`]).

use crate::soft::core::result::SoftResult;
use crate::soft::core::shared_memory::SharedMemory;
use crate::types::SMEM_MALLOC_FAILED;

/// The name every pool `memfd` has.
const NAME: &str = "memfabric-soft-dram";

/// A shared mapping of a pool segment (this rank's or a peer's).
#[derive(Debug)]
pub(crate) struct DramMapping(SharedMemory);

impl DramMapping {
    /// A new zeroed segment of `length` bytes.
    pub(crate) fn create(length: usize) -> SoftResult<Self> {
        SharedMemory::create(NAME, length, SMEM_MALLOC_FAILED).map(Self)
    }

    /// Maps process `pid`'s segment, its descriptor `fd`, of `length` bytes.
    pub(crate) fn open(pid: u32, fd: u32, length: usize) -> SoftResult<Self> {
        SharedMemory::open(pid, fd, NAME, length).map(Self)
    }

    /// The first byte.
    pub(crate) fn address(&self) -> *mut u8 {
        self.0.address()
    }

    /// The descriptor number peers open.
    pub(crate) fn raw_fd(&self) -> u32 {
        self.0.raw_fd()
    }
}
