//! [`Stream::wait_value`] and [`Stream::write_value`], and the flags a
//! stream keeps alive for its queued value work ([`ValueHolds`]).

use super::device_flag::{DeviceFlag, ValueCondition};
use super::stream::Stream;
use crate::error::{Result, check};
use ascend_sys as sys;
use std::sync::{Arc, Mutex, MutexGuard};

/// What queued work does with a held flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Wait,
    Write,
}

/// The flags used by value work queued on one stream, kept until that work
/// is proven finished. Each hold has a number, increasing in queuing order,
/// so that a synchronisation releases exactly the holds that existed when
/// it started, whatever other threads queue or synchronise meanwhile.
#[derive(Debug, Default)]
pub(super) struct ValueHolds(Mutex<Holds>);

#[derive(Debug, Default)]
struct Holds {
    /// The number the next hold gets.
    next: u64,
    /// `(number, flag, use)`, in increasing number order.
    held: Vec<(u64, Arc<DeviceFlag>, Use)>,
}

impl ValueHolds {
    fn lock(&self) -> MutexGuard<'_, Holds> {
        // A panic while the list was held left it whole (pushes and drains
        // only): the poison carries no meaning.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, flag: &Arc<DeviceFlag>, used: Use) {
        let mut holds = self.lock();
        let number = holds.next;
        holds.next += 1;
        holds.held.push((number, Arc::clone(flag), used));
    }

    /// A mark for a synchronisation that starts now: it covers the holds
    /// numbered below it (their work was queued before it started).
    pub(super) fn mark(&self) -> u64 {
        self.lock().next
    }

    /// Releases the holds numbered below `mark`, whose work a
    /// synchronisation proved finished.
    pub(super) fn release(&self, mark: u64) {
        let released: Vec<_> = {
            let mut holds = self.lock();
            let covered = holds.held.partition_point(|(number, _, _)| *number < mark);
            holds.held.drain(..covered).collect()
        };
        drop(released);
    }

    /// Whether no flag is held.
    pub(super) fn is_empty(&self) -> bool {
        self.lock().held.is_empty()
    }

    /// Whether a wait is among them (a wait may never be satisfied).
    pub(super) fn has_waits(&self) -> bool {
        self.lock().held.iter().any(|(_, _, used)| *used == Use::Wait)
    }

    /// After a forced destruction: the queued work was dropped, so flags
    /// only waited for are released. A write the runtime had already
    /// started may still land (the runtime does not say it cannot), so the
    /// flags written are leaked, never freed under it.
    pub(super) fn release_after_force(&self) {
        let held = std::mem::take(&mut self.lock().held);
        let mut leaked = 0;
        for (_, flag, used) in held {
            if used == Use::Write {
                std::mem::forget(flag);
                leaked += 1;
            }
        }
        if leaked > 0 {
            log::warn!("stream destroyed by force: {leaked} flag(s) it was to write are kept (leaked)");
        }
    }

    /// Nothing proves the work finished: every flag is leaked.
    pub(super) fn leak_all(&self) {
        for (_, flag, _) in std::mem::take(&mut self.lock().held) {
            std::mem::forget(flag);
        }
    }
}

impl Stream {
    /// Queues a wait (`aclrtValueWait`): work queued on this stream later
    /// runs only once `flag`'s word meets `condition` with `value`. The host
    /// does not wait, and other streams are not held up; another stream
    /// ([`Stream::write_value`]) or the host ([`DeviceFlag::set`]) writes
    /// the word to let it go on.
    ///
    /// A wait that is never satisfied keeps the stream blocked:
    /// [`Stream::synchronize_timeout`] reports it, [`Stream::destroy_force`]
    /// ends it, and dropping the stream waits at most
    /// [`Stream::VALUE_WAIT_LIMIT`] before destroying it by force. The
    /// stream keeps `flag` alive until the wait is proven finished.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ascend::Device;
    /// use ascend::stream::{DeviceFlag, Stream, ValueCondition};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let flag = DeviceFlag::new(&device, 0)?;
    /// stream.wait_value(&flag, 0b100, ValueCondition::And)?;
    /// assert!(stream.synchronize_timeout(Duration::from_millis(20)).is_err()); // still blocked
    /// flag.set(0b101)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code: a flag whose memory is not device memory
    /// reachable from this stream, or a chip without value waits
    /// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`). The stream still keeps `flag`
    /// until its next proven completion (a runtime that returned an error
    /// might have queued the wait anyway).
    #[doc(alias = "aclrtValueWait")]
    pub fn wait_value(&self, flag: &Arc<DeviceFlag>, value: u64, condition: ValueCondition) -> Result<()> {
        self.device().make_current()?;
        // SAFETY: the word is a live 8-byte device allocation, kept alive by
        // the hold pushed below until the queued wait is proven finished;
        // the stream handle is live.
        let queued = check("aclrtValueWait", unsafe {
            sys::aclrtValueWait(flag.as_raw(), value, condition.raw(), self.as_raw())
        });
        // Held even when refused: a runtime that returned an error might
        // still have queued the wait, and the hold costs only until the
        // stream's next proven completion. (Pushed after the call, so that a
        // synchronisation on another thread cannot release it before the
        // work is queued.)
        self.values().push(flag, Use::Wait);
        queued
    }

    /// Queues a write of `value` to `flag`'s word (`aclrtValueWrite`): it
    /// runs after the work queued on this stream before it, and lets the
    /// streams waiting for such a value go on. The stream keeps `flag`
    /// alive until the write is proven finished.
    ///
    /// Two threads, each with its own stream, taking turns:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::stream::{DeviceFlag, Stream, ValueCondition};
    /// let device = Device::new(0)?;
    /// let (ping, pong) = (DeviceFlag::new(&device, 0)?, DeviceFlag::new(&device, 0)?);
    /// std::thread::scope(|s| -> ascend::Result<()> {
    ///     let other = s.spawn(|| -> ascend::Result<()> {
    ///         let stream = Stream::new(&device)?;
    ///         stream.wait_value(&ping, 1, ValueCondition::Equal)?;
    ///         stream.write_value(&pong, 1)?;
    ///         stream.synchronize()
    ///     });
    ///     let stream = Stream::new(&device)?;
    ///     stream.write_value(&ping, 1)?;
    ///     stream.wait_value(&pong, 1, ValueCondition::Equal)?;
    ///     stream.synchronize()?;
    ///     other.join().expect("the other thread")
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code, as for [`Stream::wait_value`] (the stream keeps
    /// `flag` until its next proven completion all the same).
    #[doc(alias = "aclrtValueWrite")]
    pub fn write_value(&self, flag: &Arc<DeviceFlag>, value: u64) -> Result<()> {
        self.device().make_current()?;
        // SAFETY: as in `wait_value`; the reserved flag is 0.
        let queued = check("aclrtValueWrite", unsafe {
            sys::aclrtValueWrite(flag.as_raw(), value, 0, self.as_raw())
        });
        // Held even when refused, as in `wait_value`.
        self.values().push(flag, Use::Write);
        queued
    }
}

#[cfg(test)]
mod tests {
    use super::super::device_flag::ValueCondition;
    use super::*;
    use crate::Device;

    /// Two synchronisations that overlap release only what each covers: a
    /// hold added after a mark survives that mark's release.
    #[test]
    fn a_release_frees_only_the_holds_its_synchronisation_covers() {
        let device = Device::new(0).unwrap();
        let flag = DeviceFlag::new(&device, 0).unwrap();
        let holds = ValueHolds::default();
        holds.push(&flag, Use::Wait);
        let (first, second) = (holds.mark(), holds.mark());
        holds.release(first);
        holds.push(&flag, Use::Write);
        holds.release(second);
        assert_eq!(Arc::strong_count(&flag), 2, "the later hold is kept");
        assert!(!holds.has_waits());
        holds.release(holds.mark());
        assert_eq!(Arc::strong_count(&flag), 1);
    }

    /// The documented comparisons (API reference 11-09).
    #[test]
    fn conditions_follow_the_documented_formulas() {
        assert!(ValueCondition::GreaterOrEqual.holds(5, 5));
        assert!(!ValueCondition::GreaterOrEqual.holds(4, 5));
        assert!(!ValueCondition::GreaterOrEqual.holds(u64::MAX, 1));
        assert!(ValueCondition::Equal.holds(9, 9));
        assert!(!ValueCondition::And.holds(0b011, 0b100));
        assert!(ValueCondition::Nor.holds(0, 0));
        assert!(!ValueCondition::Nor.holds(0xFFFF_FFFF_FFFF_FF00, 0xFF));
        assert_eq!(ValueCondition::Nor.raw(), ascend_sys::ACL_STREAM_WAIT_VALUE_NOR);
    }
}
