//! Each thread's own share of a device's process retain, so that cloning
//! a shared [`Device`] on two threads touches no common reference count.

use super::{BINDING, Device, ProcessRetain, ThreadBinding};
use std::sync::Arc;

/// One thread's share of a [`ProcessRetain`]: clones made on a thread
/// bound to the device count on that thread's share, not on the
/// process-wide one, so that threads cloning a shared `Device` (every
/// buffer holds one) touch no common reference count. Aligned to its own
/// cache lines, so that two threads' shares never share one.
#[repr(align(128))]
pub(super) struct Share {
    pub(super) process: Arc<ProcessRetain>,
}

impl Share {
    pub(super) fn new(process: Arc<ProcessRetain>) -> Arc<Self> {
        Arc::new(Self { process })
    }
}

impl Clone for Device {
    /// This thread's share of the device when the thread is bound to it
    /// (so the clone and its drop touch a count only this thread's clones
    /// use, mostly); the value's own share otherwise.
    #[inline]
    fn clone(&self) -> Self {
        let share = BINDING
            .try_with(|binding| binding.try_borrow_mut().ok()?.share_of(self.id, &self.share))
            .ok()
            .flatten()
            .unwrap_or_else(|| Arc::clone(&self.share));
        Self { id: self.id, share }
    }
}

impl ThreadBinding {
    /// A clone of this thread's share of device `id`'s process retain
    /// (the one `share` holds), made on first use; `None` when this
    /// thread holds no retain of `id`, so that the share would outlive
    /// the last `Device` alone.
    fn share_of(&mut self, id: i32, share: &Arc<Share>) -> Option<Arc<Share>> {
        // This thread's share holds the process retain, so every `Device`
        // of `id` holds that same retain while the share lives.
        if let Some((_, own)) = self.shares.iter().find(|(held, _)| *held == id) {
            return Some(Arc::clone(own));
        }
        if !self.retains.contains(&id) {
            return None;
        }
        let own = Share::new(Arc::clone(&share.process));
        self.shares.push((id, Arc::clone(&own)));
        Some(own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_on_a_bound_thread_count_on_that_threads_share() {
        let device = Device::new(0).expect("device 0");
        let original = Arc::strong_count(&device.share);
        let (first, second) = (device.clone(), device.clone());
        // The clones share this thread's share, not the original's count.
        assert!(Arc::ptr_eq(&first.share, &second.share));
        assert_eq!(Arc::strong_count(&device.share), original);
        assert!(Arc::ptr_eq(&first.share.process, &device.share.process));
        let shared = &device;
        let theirs = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    shared.make_current().expect("bind the other thread");
                    let clone = shared.clone();
                    (
                        Arc::as_ptr(&clone.share) as usize,
                        Arc::ptr_eq(&clone.share.process, &shared.share.process),
                    )
                })
                .join()
                .expect("the other thread")
        });
        // Another thread's clones count on its own share, of the same retain.
        assert_ne!(theirs.0, Arc::as_ptr(&first.share) as usize);
        assert!(theirs.1);
        assert_eq!(Arc::strong_count(&device.share), original);
    }

    #[test]
    fn a_thread_not_bound_to_the_device_clones_the_values_share() {
        let device = Device::new(0).expect("device 0");
        let shared = &device;
        let same = std::thread::scope(|scope| {
            scope
                .spawn(|| Arc::ptr_eq(&shared.clone().share, &shared.share))
                .join()
                .expect("the other thread")
        });
        assert!(
            same,
            "a thread holding no retain of its own must not keep the process retain"
        );
    }
}
