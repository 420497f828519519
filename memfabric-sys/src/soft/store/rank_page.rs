//! The store's page of rank states: one byte per rank, in shared memory (a
//! `memfd` named `memfabric-soft-ranks`) that the store writes as ranks
//! join, leave and die, and that every rank maps, so that a copy learns
//! whether its peer is still there with one load instead of a round trip
//! to the store. The store writes a rank's new state before it answers the
//! request that changed it, so a rank that has left (its `LEAVE`
//! answered) is seen as left by every copy that starts afterwards.

use super::protocol::RankState;
use crate::soft::core::result::SoftResult;
use crate::soft::core::shared_memory::SharedMemory;
use crate::types::{SMEM_ERROR, SMEM_WORLD_SIZE_MAX};
use std::sync::atomic::{AtomicU8, Ordering};

/// The name of the page's `memfd`.
const NAME: &str = "memfabric-soft-ranks";
/// One byte for each rank a world may have.
const LEN: usize = SMEM_WORLD_SIZE_MAX as usize;

/// The mapped page (the store's, or a rank's view of it).
#[derive(Debug)]
pub(crate) struct RankPage(SharedMemory);

impl RankPage {
    /// A new page, every rank absent (the store's).
    pub(crate) fn create() -> SoftResult<Self> {
        SharedMemory::create(NAME, LEN, SMEM_ERROR).map(Self)
    }

    /// The page of the store served by process `pid`, its descriptor `fd`.
    pub(crate) fn open(pid: u32, fd: u32) -> SoftResult<Self> {
        SharedMemory::open(pid, fd, NAME, LEN).map(Self)
    }

    /// The descriptor number ranks open (with this process's id).
    pub(crate) fn raw_fd(&self) -> u32 {
        self.0.raw_fd()
    }

    fn cell(&self, rank: u32) -> Option<&AtomicU8> {
        let index = usize::try_from(rank).ok().filter(|&index| index < self.0.len())?;
        // SAFETY: `index` is inside the mapping, which lives as long as
        // `self`; the page's bytes are only ever accessed as atomics, by
        // every process that maps it.
        Some(unsafe { AtomicU8::from_ptr(self.0.address().add(index)) })
    }

    /// Records `state` for `rank` (ranks past the page are not recorded).
    pub(crate) fn set(&self, rank: u32, state: RankState) {
        if let Some(cell) = self.cell(rank) {
            cell.store(byte(state), Ordering::Release);
        }
    }

    /// The state of `rank` (absent past the page).
    pub(crate) fn get(&self, rank: u32) -> RankState {
        self.cell(rank)
            .map_or(RankState::Absent, |cell| state(cell.load(Ordering::Acquire)))
    }
}

fn byte(state: RankState) -> u8 {
    match state {
        RankState::Absent => 0,
        RankState::Alive => 1,
        RankState::Left => 2,
        RankState::Dead => 3,
    }
}

fn state(byte: u8) -> RankState {
    match byte {
        1 => RankState::Alive,
        2 => RankState::Left,
        3 => RankState::Dead,
        _ => RankState::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_written_is_read_through_another_mapping() {
        let page = RankPage::create().unwrap();
        let view = RankPage::open(std::process::id(), page.raw_fd()).unwrap();
        assert_eq!(view.get(3), RankState::Absent);
        for written in [RankState::Alive, RankState::Left, RankState::Dead] {
            page.set(3, written);
            assert_eq!(view.get(3), written);
        }
        page.set(u32::MAX, RankState::Dead); // past the page: ignored
        assert_eq!(view.get(u32::MAX), RankState::Absent);
    }
}
