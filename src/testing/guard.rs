//! Running code on the software device and proving it left nothing behind:
//! [`LeakCheck`] and [`on_software_device`].

use ascend_sys::soft::{self, Live, Misuse};
use ascend_sys::{Backend, BackendRequest};
use std::fmt;
use std::sync::{Mutex, MutexGuard};

/// Serialises leak checks within one process: while one is running, no
/// other [`LeakCheck`] starts, so two tests using them cannot skew each
/// other's counts.
static SERIAL: Mutex<()> = Mutex::new(());

/// Why a [`LeakCheck`] could not start or did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeakCheckError {
    /// The process already runs on real hardware (or has no backend), so
    /// the software device's counts are not available.
    NotSoftware {
        /// What the backend selection said.
        reason: String,
    },
    /// Resources are live that were not live when the check started (or
    /// the reverse: something freed what it did not own).
    Leaked {
        /// The counts when the check started.
        before: Box<Live>,
        /// The counts at the end.
        after: Box<Live>,
        /// One line per count that changed: `name: before -> after`.
        changed: Vec<String>,
        /// [`soft::leak_report`] at the end: every live resource.
        report: String,
    },
    /// The software device detected misuse while the check ran (e.g. a
    /// host buffer freed while queued copies still used it).
    Misuse {
        /// What it detected, in order.
        detected: Vec<Misuse>,
    },
}

impl fmt::Display for LeakCheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeakCheckError::NotSoftware { reason } => {
                write!(f, "the software device is not the active backend: {reason}")
            }
            LeakCheckError::Leaked { changed, report, .. } => {
                writeln!(f, "live resources differ from when the check started:")?;
                for line in changed {
                    writeln!(f, "  {line}")?;
                }
                if report.is_empty() {
                    write!(f, "nothing is live now (something freed more than it allocated)")
                } else {
                    write!(f, "live now (soft::leak_report):\n{report}")
                }
            }
            LeakCheckError::Misuse { detected } => {
                writeln!(f, "the software device detected {} misuse(s):", detected.len())?;
                for misuse in detected {
                    writeln!(f, "  in {}: {}", misuse.api, misuse.description)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LeakCheckError {}

/// A running check that the software device ends where it started: same
/// live counts (every field of [`soft::Live`], bytes included) and no new
/// entry in [`soft::misuse`].
///
/// [`LeakCheck::start`] selects the software backend (if nothing chose a
/// backend yet) and takes the baseline; [`LeakCheck::finish`] compares.
///
/// The counts are process-wide: code running on other threads at the same
/// time (another `#[test]` of the same file, which `cargo test` runs as a
/// thread of the same process) changes them too. Leak checks serialise
/// among themselves — a second `start` waits until the first check is
/// finished or dropped — but code that allocates outside a check is not
/// stopped. Keep tests that allocate without a check in another test file
/// (another process), or run with `--test-threads=1`.
///
/// ```
/// use ascend::testing::LeakCheck;
/// use ascend::{Device, DeviceBuf};
/// let check = LeakCheck::start()?;
/// let buf = DeviceBuf::from_slice(&Device::new(0)?, &[1u8, 2, 3])?;
/// assert_eq!(check.live_now().device_allocations, check.baseline().device_allocations + 1);
/// drop(buf);
/// check.finish()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a leak check proves something only when finished"]
pub struct LeakCheck {
    before: Live,
    misuse_before: usize,
    _serial: MutexGuard<'static, ()>,
}

impl LeakCheck {
    /// Selects the software device (unless the backend is already chosen),
    /// waits for any other running check to end, and records the baseline.
    ///
    /// # Errors
    ///
    /// [`LeakCheckError::NotSoftware`] when the process runs on another
    /// backend (e.g. `ASCEND_BACKEND=hardware` was already acted on).
    pub fn start() -> Result<Self, LeakCheckError> {
        match ascend_sys::select_backend(BackendRequest::Software) {
            Ok(info) if info.backend == Backend::Software => {}
            Ok(info) => {
                return Err(LeakCheckError::NotSoftware {
                    reason: info.describe(),
                });
            }
            Err(error) => {
                return Err(LeakCheckError::NotSoftware {
                    reason: error.to_string(),
                });
            }
        }
        // A test that panicked while holding the lock poisoned it; the
        // counts are compared afresh, so the poison carries no meaning.
        let serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(Self {
            before: soft::live(),
            misuse_before: soft::misuse().len(),
            _serial: serial,
        })
    }

    /// The counts when the check started.
    pub fn baseline(&self) -> &Live {
        &self.before
    }

    /// The counts now ([`soft::live`]).
    pub fn live_now(&self) -> Live {
        soft::live()
    }

    /// Misuse the software device detected since the check started.
    pub fn new_misuse(&self) -> Vec<Misuse> {
        let all = soft::misuse();
        // `take_misuse` by someone else may have shortened the list.
        all.get(self.misuse_before..)
            .map(<[Misuse]>::to_vec)
            .unwrap_or_default()
    }

    /// Ends the check.
    ///
    /// # Errors
    ///
    /// [`LeakCheckError::Leaked`] when a count differs from the baseline,
    /// listing the counts that changed and every live resource;
    /// [`LeakCheckError::Misuse`] when misuse was detected meanwhile.
    pub fn finish(self) -> Result<(), LeakCheckError> {
        let after = soft::live();
        if after != self.before {
            return Err(LeakCheckError::Leaked {
                before: Box::new(self.before),
                changed: changed_counts(&self.before, &after),
                after: Box::new(after),
                report: soft::leak_report(),
            });
        }
        let detected = self.new_misuse();
        if !detected.is_empty() {
            return Err(LeakCheckError::Misuse { detected });
        }
        Ok(())
    }
}

impl fmt::Debug for LeakCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeakCheck")
            .field("before", &self.before)
            .field("misuse_before", &self.misuse_before)
            .finish()
    }
}

/// `name: before -> after` for every field of [`Live`] that differs.
pub fn changed_counts(before: &Live, after: &Live) -> Vec<String> {
    let fields: [(&str, u64, u64); 18] = [
        (
            "device_allocations",
            count(before.device_allocations),
            count(after.device_allocations),
        ),
        ("device_bytes", before.device_bytes, after.device_bytes),
        (
            "host_allocations",
            count(before.host_allocations),
            count(after.host_allocations),
        ),
        ("host_bytes", before.host_bytes, after.host_bytes),
        (
            "host_registrations",
            count(before.host_registrations),
            count(after.host_registrations),
        ),
        ("registered_bytes", before.registered_bytes, after.registered_bytes),
        ("contexts", count(before.contexts), count(after.contexts)),
        (
            "allocator_descriptors",
            count(before.allocator_descriptors),
            count(after.allocator_descriptors),
        ),
        (
            "physical_allocations",
            count(before.physical_allocations),
            count(after.physical_allocations),
        ),
        ("physical_bytes", before.physical_bytes, after.physical_bytes),
        ("reservations", count(before.reservations), count(after.reservations)),
        ("mappings", count(before.mappings), count(after.mappings)),
        ("streams", count(before.streams), count(after.streams)),
        ("events", count(before.events), count(after.events)),
        (
            "shareable_exports",
            count(before.shareable_exports),
            count(after.shareable_exports),
        ),
        (
            "shareable_imports",
            count(before.shareable_imports),
            count(after.shareable_imports),
        ),
        ("ipc_keys", count(before.ipc_keys), count(after.ipc_keys)),
        ("ipc_imports", count(before.ipc_imports), count(after.ipc_imports)),
    ];
    fields
        .iter()
        .filter(|(_, was, is)| was != is)
        .map(|(name, was, is)| format!("{name}: {was} -> {is}"))
        .collect()
}

fn count(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// Runs `f` on the software device and asserts that it left nothing
/// behind: every live count back to its value before `f`, and no misuse
/// detected meanwhile. Returns what `f` returned.
///
/// It selects the software backend if nothing chose one yet, and runs
/// after any other `on_software_device` or [`LeakCheck`] in the process
/// has finished (they are serialised). Code outside such a check that
/// allocates on another thread at the same time skews the counts: see
/// [`LeakCheck`] for how to keep it apart.
///
/// ```
/// use ascend::testing::on_software_device;
/// use ascend::{Device, DeviceBuf};
/// let sum = on_software_device(|| {
///     let buf = DeviceBuf::from_slice(&Device::new(0).unwrap(), &[1u32, 2, 3]).unwrap();
///     buf.to_vec().unwrap().iter().sum::<u32>()
/// });
/// assert_eq!(sum, 6);
/// ```
///
/// A leak is reported with the counts that changed and what is live:
///
/// ```should_panic
/// use ascend::testing::on_software_device;
/// use ascend::{Device, DeviceBuf};
/// on_software_device(|| {
///     let buf = DeviceBuf::<u8>::zeroed(&Device::new(0).unwrap(), 64).unwrap();
///     std::mem::forget(buf); // never freed
/// });
/// ```
///
/// # Panics
///
/// This is an assertion for tests: it panics, with a message listing the
/// changed counts and [`soft::leak_report`], when something leaked or
/// misuse was detected, and when the process runs on another backend. A
/// panic in `f` propagates unchanged (the counts are then not checked).
/// Use [`LeakCheck`] to get the outcome as a value instead.
pub fn on_software_device<R>(f: impl FnOnce() -> R) -> R {
    let check = match LeakCheck::start() {
        Ok(check) => check,
        Err(error) => panic!("on_software_device: {error}"),
    };
    let value = f();
    if let Err(error) = check.finish() {
        panic!("on_software_device: {error}");
    }
    value
}
