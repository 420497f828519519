//! [`SharedTotal`]: a byte total that many holders (thread caches, pinned
//! pool shards) count into, each through *headroom* of its own: bytes
//! counted in the total but not used by that holder. A holder draws on its
//! headroom when its bytes rise and adds to it when they fall, and writes
//! the shared total only when the headroom runs out or passes its cap, so
//! a common hit writes no shared cache line. The total is then the true
//! total plus every holder's headroom: its peak is exact while one holder
//! counts, and above the true peak by at most the others' headroom (never
//! below it).

use std::sync::atomic::{AtomicUsize, Ordering};

/// A total counted across caches, with its peak.
#[derive(Default)]
pub(in crate::pool) struct SharedTotal {
    total: AtomicUsize,
    peak: AtomicUsize,
}

impl SharedTotal {
    /// The true total rose by `by`: spend headroom, count the rest.
    #[inline(always)]
    pub(in crate::pool) fn rise(&self, headroom: &mut usize, by: usize) {
        if *headroom >= by {
            *headroom -= by;
        } else {
            self.count_rise(headroom, by);
        }
    }

    /// [`SharedTotal::rise`] beyond the headroom.
    #[cold]
    fn count_rise(&self, headroom: &mut usize, by: usize) {
        let short = by - *headroom;
        *headroom = 0;
        let total = self.total.fetch_add(short, Ordering::Relaxed).saturating_add(short);
        self.peak.fetch_max(total, Ordering::Relaxed);
    }

    /// The true total fell by `by`: keep it as headroom up to `cap`.
    #[inline(always)]
    pub(in crate::pool) fn fall(&self, headroom: &mut usize, by: usize, cap: usize) {
        *headroom += by;
        if *headroom > cap {
            self.uncount_excess(headroom, cap);
        }
    }

    /// Gives the headroom beyond `cap` back to the shared total.
    #[cold]
    fn uncount_excess(&self, headroom: &mut usize, cap: usize) {
        let excess = *headroom - cap;
        // Never below zero, even if a count went wrong: a wrong peak is
        // better than a wrapped one.
        let _ = self.total.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |total| {
            Some(total.saturating_sub(excess))
        });
        *headroom = cap;
    }

    /// The true total changed by `delta`.
    pub(in crate::pool) fn change(&self, headroom: &mut usize, delta: isize, cap: usize) {
        if delta >= 0 {
            self.rise(headroom, delta.unsigned_abs());
        } else {
            self.fall(headroom, delta.unsigned_abs(), cap);
        }
    }
}

impl SharedTotal {
    /// The most the total has been.
    pub(in crate::pool) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// The total now (the true total plus the holders' headroom).
    #[cfg(test)]
    pub(in crate::pool) fn now(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Starts the peak again from the total now, after giving back the
    /// caller's `headroom` (so that the total is the true one when no other
    /// thread holds headroom, and the caller's next rise is counted).
    pub(in crate::pool) fn reset_peak(&self, headroom: &mut usize) {
        self.uncount_excess(headroom, 0);
        self.peak.store(self.total.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}
