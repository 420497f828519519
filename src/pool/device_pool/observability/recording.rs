//! [`DevicePool::record_memory_history`] and [`DevicePool::memory_history`]:
//! turning the history on and off, and reading it.

use super::history::{HistoryOptions, PoolHistory};
use crate::Call;
use crate::error::{Error, Result};
use crate::pool::device_pool::DevicePool;

impl DevicePool {
    /// Starts (`Some`) or stops (`None`) recording the pool's memory
    /// history, as torch's `torch.cuda.memory._record_memory_history`:
    /// a ring of at most [`HistoryOptions::max_entries`] events (block
    /// allocations, frees requested and completed, segment maps and
    /// unmaps, sleep, wake, `empty_cache` and out-of-memory errors), each
    /// with its time and, with [`HistoryOptions::backtraces`], a backtrace.
    /// Read it with [`DevicePool::memory_history`], draw it with
    /// [`PoolHistory::to_timeline_svg`], or save it for PyTorch's memory
    /// visualizer with `DevicePool::write_torch_snapshot` (the feature
    /// `torch-snapshot`).
    ///
    /// Starting forgets the events of an earlier recording; stopping keeps
    /// them until the next start.
    ///
    /// **Cost.** While recording, every allocation and free goes through
    /// the pool's lock (the thread caches are bypassed, as while a tag
    /// sleeps), so a pool hit costs a miss plus three events: 26–30× a hit
    /// on the software device here. Recording off, the hit is as before (it
    /// reads the flags it already reads). See
    /// [Performance](crate::guide::performance).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `max_entries` 0 (nothing changes).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{DevicePool, HistoryAction, HistoryOptions, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// pool.record_memory_history(Some(HistoryOptions::default()))?;
    /// let block = pool.alloc(4096)?;
    /// drop(block);
    /// pool.record_memory_history(None)?; // stop: nothing more is recorded
    /// drop(pool.alloc(4096)?);
    /// let actions: Vec<_> = pool.memory_history().events.iter().map(|event| event.action).collect();
    /// assert_eq!(actions, [
    ///     HistoryAction::SegmentMap, // the first small chunk
    ///     HistoryAction::Alloc,
    ///     HistoryAction::FreeRequested,
    ///     HistoryAction::FreeCompleted,
    /// ]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn record_memory_history(&self, options: Option<HistoryOptions>) -> Result<()> {
        let shared = &self.shared;
        let mut state = shared.state();
        let Some(options) = options else {
            shared.caches.set_recording(false);
            state.history.stop();
            return Ok(());
        };
        if options.max_entries == 0 {
            return Err(Error::invalid(
                Call::rust("DevicePool::record_memory_history"),
                "max_entries must be at least 1",
            ));
        }
        // Every block goes through the state from now on; the cached ones
        // go back to their free lists first (they are not allocated, so
        // the totals below are unchanged by it).
        shared.caches.set_recording(true);
        shared.flushed_in(&mut state, |_| ());
        let allocated = shared.caches.totals().allocated;
        let reserved = state.stats.reserved;
        state.history.start(options, allocated, reserved);
        Ok(())
    }

    /// A copy of the memory history recorded so far (empty when nothing
    /// was recorded).
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// drop(pool.alloc(4096)?);
    /// assert!(pool.memory_history().events.is_empty()); // not recording
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn memory_history(&self) -> PoolHistory {
        self.shared.state().history.history(self.device().id())
    }
}
