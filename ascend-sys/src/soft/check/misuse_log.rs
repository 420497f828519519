//! Misuse the software device detected that the real runtime would not
//! report (it would corrupt memory or read stale data instead).
//!
//! Every record goes to the process-wide list ([`misuse`], drained by
//! [`take_misuse`]) and to every live [`MisuseWatch`], which nobody else
//! can drain: a check that watches sees every misuse recorded while it
//! runs, whatever the code it checks does with the global list.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// One detected misuse.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Misuse {
    /// The call during which it was detected.
    pub api: &'static str,
    /// What was wrong.
    pub description: String,
    /// When it was recorded, on the same scale as resource creation
    /// ([`crate::soft::sequence_now`]); increasing on each thread, never reused,
    /// and not reset by [`take_misuse`].
    pub seq: u64,
}

/// One watch's own copy of what was recorded since it started.
type Sink = Mutex<Vec<Misuse>>;

static DETECTED: Mutex<Vec<Misuse>> = Mutex::new(Vec::new());
/// The live watches (a dropped watch's entry is pruned on the next record).
static WATCHES: Mutex<Vec<Weak<Sink>>> = Mutex::new(Vec::new());

/// Locks one of this module's leaf locks: a panic while it was held left
/// a whole list, so the poison carries no meaning.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Records a misuse (and logs it at `warn` level).
pub(crate) fn record(api: &'static str, description: String) {
    log::warn!("software device detected misuse in {api}: {description}");
    let misuse = Misuse {
        api,
        description,
        seq: crate::soft::core::sequence::next(),
    };
    {
        let mut watches = lock(&WATCHES);
        watches.retain(|watch| match watch.upgrade() {
            Some(sink) => {
                lock(&sink).push(misuse.clone());
                true
            }
            None => false,
        });
    }
    lock(&DETECTED).push(misuse);
}

/// Every misuse detected so far in this process (since the last
/// [`take_misuse`]).
pub fn misuse() -> Vec<Misuse> {
    lock(&DETECTED).clone()
}

/// Returns and forgets the misuse detected so far. A running
/// [`MisuseWatch`] keeps its own copy and is not affected.
pub fn take_misuse() -> Vec<Misuse> {
    std::mem::take(&mut *lock(&DETECTED))
}

/// Collects every misuse recorded from its start until it is dropped, in
/// its own list that [`take_misuse`] does not drain. Several watches may
/// run at once (each sees every record).
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// let watch = soft::MisuseWatch::start();
/// // Using a descriptor that was never created is recorded as misuse.
/// let (bogus, object) = (0x10 as aclrtAllocatorDesc, 0x20 as aclrtAllocator);
/// // SAFETY: the software device dereferences neither.
/// assert_ne!(unsafe { aclrtAllocatorSetObjToDesc(bogus, object) }, ACL_SUCCESS);
/// soft::take_misuse(); // draining the global list hides nothing from the watch
/// assert_eq!(watch.seen().len(), 1);
/// assert_eq!(watch.seen()[0].api, "aclrtAllocatorSetObjToDesc");
/// ```
#[derive(Debug)]
#[must_use = "a watch sees misuse only while it lives"]
pub struct MisuseWatch {
    sink: Arc<Sink>,
}

impl MisuseWatch {
    /// Starts watching: every misuse recorded from now on is kept.
    pub fn start() -> Self {
        let sink = Arc::new(Sink::default());
        let mut watches = lock(&WATCHES);
        watches.retain(|watch| watch.strong_count() > 0);
        watches.push(Arc::downgrade(&sink));
        drop(watches);
        Self { sink }
    }

    /// The misuse recorded since [`MisuseWatch::start`], in order.
    pub fn seen(&self) -> Vec<Misuse> {
        lock(&self.sink).clone()
    }
}
