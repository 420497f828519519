//! [`UseGate`]: closes the memory of an [`Ordered`](super::Ordered)
//! owner to new uses, after the uses under way have ended: what makes a
//! [`DevicePool::sleep`](crate::pool::DevicePool::sleep) a point in time.
//!
//! Every use of an owner's bytes (a host read or write, or the queueing
//! of device work) enters its gate before it starts and leaves when it has
//! landed. A closed gate refuses new uses with [`Error::PoolAsleep`];
//! [`UseGate::close`] returns once no use is under way, so whoever closed
//! it then owns the bytes (after fencing the work already queued).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The bit of `state` that says the gate is closed; the bits below count
/// the uses under way.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// The gate of one pool tag's memory: uses under way, and whether new
/// ones are refused.
pub(crate) struct UseGate {
    /// [`CLOSED`] and the count of uses under way.
    state: AtomicUsize,
    /// The tag a refusal names.
    tag: String,
    /// Held to wait for, or announce, the last use leaving a closed gate.
    lock: Mutex<()>,
    /// Woken when the last use leaves a closed gate.
    idle: Condvar,
}

/// A use under way through a gate (or through none: memory no gate
/// closes); it leaves the gate when dropped.
#[must_use = "the use ends when this is dropped"]
pub(crate) struct Entered<'a>(Option<&'a UseGate>);

impl UseGate {
    /// An open gate whose refusals name `tag`.
    pub(crate) fn new(tag: &str) -> Self {
        Self {
            state: AtomicUsize::new(0),
            tag: tag.to_owned(),
            lock: Mutex::new(()),
            idle: Condvar::new(),
        }
    }

    /// Starts a use.
    ///
    /// # Errors
    ///
    /// [`Error::PoolAsleep`] when the gate is closed.
    #[inline]
    pub(crate) fn enter(&self) -> Result<Entered<'_>> {
        // Counted first, so that a `close` after this sees the use and
        // waits for it; refused after, if it was closed before.
        let before = self.state.fetch_add(1, Ordering::AcqRel);
        let entered = Entered(Some(self));
        if before & CLOSED != 0 {
            drop(entered);
            return Err(Error::PoolAsleep { tag: self.tag.clone() });
        }
        Ok(entered)
    }

    /// Ends a use; the last one to leave a closed gate wakes its closer.
    #[inline]
    fn leave(&self) {
        let before = self.state.fetch_sub(1, Ordering::AcqRel);
        if before & CLOSED != 0 && before & !CLOSED == 1 {
            // Under the lock, so that a closer between its test and its
            // wait cannot miss the wake-up.
            let _held = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            self.idle.notify_all();
        }
    }

    /// Refuses new uses from now on ([`UseGate::close`] waits for the
    /// uses under way too): to shut several gates at one point in time
    /// before waiting for each.
    pub(crate) fn shut(&self) {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
    }

    /// Refuses new uses, then waits until the uses under way have ended.
    pub(crate) fn close(&self) {
        self.shut();
        let mut held = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while self.state.load(Ordering::Acquire) & !CLOSED != 0 {
            held = self.idle.wait(held).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Lets new uses in again.
    pub(crate) fn open(&self) {
        self.state.fetch_and(!CLOSED, Ordering::AcqRel);
    }

    /// Whether new uses are refused.
    #[cfg(test)]
    fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }
}

impl Entered<'_> {
    /// A use of memory that no gate closes.
    #[inline]
    pub(crate) const fn ungated() -> Self {
        Self(None)
    }
}

impl Drop for Entered<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(gate) = self.0 {
            gate.leave();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    #[test]
    fn a_closed_gate_refuses_uses_naming_the_tag_and_an_opened_one_lets_them_in() {
        let gate = UseGate::new("kv_cache");
        drop(gate.enter().expect("open"));
        gate.close();
        assert!(gate.is_closed());
        assert!(matches!(gate.enter(), Err(Error::PoolAsleep { tag }) if tag == "kv_cache"));
        gate.open();
        assert!(!gate.is_closed());
        drop(gate.enter().expect("open again"));
        assert_eq!(gate.state.load(Ordering::Acquire), 0, "every use left");
    }

    #[test]
    fn close_waits_for_the_uses_under_way() {
        let gate = Arc::new(UseGate::new("weights"));
        let ended = Arc::new(AtomicBool::new(false));
        let entered = Arc::new(std::sync::Barrier::new(2));
        let user = {
            let (gate, ended, entered) = (Arc::clone(&gate), Arc::clone(&ended), Arc::clone(&entered));
            std::thread::spawn(move || {
                let using = gate.enter().expect("open");
                entered.wait();
                std::thread::sleep(Duration::from_millis(50));
                ended.store(true, Ordering::Release);
                drop(using);
            })
        };
        entered.wait();
        gate.close();
        assert!(ended.load(Ordering::Acquire), "close returned before the use ended");
        user.join().expect("no panic");
    }
}
