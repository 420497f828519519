//! Running code on the software device and proving it left nothing behind:
//! [`LeakCheck`] and [`on_software_device`].

use crate::pool::watch::{Held, PoolBlockLeak, PoolKind, PoolWatch};
use ascend_sys::soft::{self, Live, LiveResource, Misuse, MisuseWatch, ResourceKind};
use ascend_sys::{Backend, BackendRequest};
use std::fmt;
use std::sync::{Mutex, MutexGuard};

/// Serialises leak checks within one process: while one is running, no
/// other [`LeakCheck`] starts, so two tests using them cannot blame each
/// other's resources.
static SERIAL: Mutex<()> = Mutex::new(());

/// Why a [`LeakCheck`] could not start or did not pass.
///
/// ```
/// use ascend::testing::{LeakCheck, LeakCheckError};
/// use ascend::{Device, DeviceBuf};
/// use ascend_sys::soft::ResourceKind;
/// let device = Device::new(0)?;
/// let check = LeakCheck::start()?;
/// let kept = DeviceBuf::<u8>::zeroed(&device, 256)?; // still live when the check ends
/// match check.finish() {
///     Err(LeakCheckError::Leaked { leaked }) => {
///         assert_eq!(leaked.len(), 1);
///         assert_eq!((leaked[0].kind, leaked[0].id), (ResourceKind::DeviceMemory, kept.as_raw() as u64));
///     }
///     other => panic!("expected the buffer to be reported, got {other:?}"),
/// }
/// drop(kept);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeakCheckError {
    /// The process already runs on real hardware (or has no backend), so
    /// the software device's tables are not available.
    NotSoftware {
        /// What the backend selection said.
        reason: String,
    },
    /// Resources created while the check ran are still live at its end.
    /// Resources that existed before the check are never listed, whether
    /// the checked code freed them or not, and neither are those a pool
    /// made before the check keeps as its cache (chunks mapped for cached
    /// blocks, cached pinned buffers).
    Leaked {
        /// Each resource created since the start and still live (kind,
        /// address or handle, bytes, device), oldest first.
        leaked: Vec<LiveResource>,
    },
    /// Blocks a [`DevicePool`](crate::pool::DevicePool) or a
    /// [`PinnedPool`](crate::pool::PinnedPool) handed out while the check
    /// ran are still live at its end. A pool hit makes no runtime call, so
    /// only the pool can tell (see [`PoolBlockLeak`]); blocks handed out
    /// before the check are never listed.
    PoolLeaked {
        /// Each block, oldest first.
        blocks: Vec<PoolBlockLeak>,
        /// The runtime resources that leaked too, as in
        /// [`LeakCheckError::Leaked`] (often the memory of those blocks, or
        /// of a pool made during the check that they keep alive); may be
        /// empty.
        resources: Vec<LiveResource>,
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
            LeakCheckError::Leaked { leaked } => {
                write!(
                    f,
                    "{} resource(s) created during the check are still live:",
                    leaked.len()
                )?;
                for resource in leaked {
                    write!(f, "\n  {resource}")?;
                }
                Ok(())
            }
            LeakCheckError::PoolLeaked { blocks, resources } => {
                write!(
                    f,
                    "{} pool block(s) handed out during the check are still live",
                    blocks.len()
                )?;
                let mut pools: Vec<(PoolKind, i32, usize, usize)> = Vec::new();
                for block in blocks {
                    match pools
                        .iter_mut()
                        .find(|(pool, device, _, _)| (*pool, *device) == (block.pool, block.device))
                    {
                        Some((_, _, count, bytes)) => {
                            *count += 1;
                            *bytes += block.bytes;
                        }
                        None => pools.push((block.pool, block.device, 1, block.bytes)),
                    }
                }
                let pools: Vec<String> = pools
                    .iter()
                    .map(|(pool, device, count, bytes)| {
                        format!("{count} block(s), {bytes} bytes, of the {pool} of device {device}")
                    })
                    .collect();
                write!(f, " ({}):", pools.join("; "))?;
                for block in blocks {
                    write!(f, "\n  {block}")?;
                }
                if !resources.is_empty() {
                    write!(
                        f,
                        "\nand {} runtime resource(s) created during the check:",
                        resources.len()
                    )?;
                    for resource in resources {
                        write!(f, "\n  {resource}")?;
                    }
                }
                Ok(())
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

/// A running check that the code it watches released everything it
/// created and caused no misuse.
///
/// [`LeakCheck::start`] selects the software backend (if nothing chose a
/// backend yet), notes the software device's creation sequence number
/// ([`soft::sequence_now`]) and starts a [`MisuseWatch`];
/// [`LeakCheck::finish`] fails if any resource created since the start is
/// still live ([`soft::live_since`]: by identity — address or handle —
/// not by counts, so freeing an older buffer cannot balance a leaked new
/// one) or if any misuse was recorded since the start (the watch keeps its
/// own copy, so code that drains [`soft::take_misuse`] cannot hide it).
/// Freeing a resource that existed before the check is not a failure.
///
/// **Pools.** A hit of a [`DevicePool`](crate::pool::DevicePool) or a
/// [`PinnedPool`](crate::pool::PinnedPool) makes no runtime call, so the
/// pools report their blocks themselves: every pool is known to the check
/// from its creation (with this feature only), and while a check runs each
/// one records the blocks it hands out and forgets those given back. A
/// block handed out during the check and still live at its end fails it
/// ([`LeakCheckError::PoolLeaked`], naming the pool, its device, the
/// block's tag, address and size), by identity as above: a block made
/// before and freed inside cannot balance it, even when the pool gives the
/// new block the same address. The pool's own cache is not a leak: the
/// cached blocks, and the runtime resources a pool made before the check
/// keeps for them (chunks mapped by its segments, cached pinned buffers,
/// offload spares), even when they were created during the check. While a
/// check runs, a `DevicePool` serves every block through its shared state
/// instead of its per-thread caches (as while a tag sleeps; its cached
/// blocks go back to the free lists at the start): the same blocks and
/// statistics, at a lock per request, and a block may be placed at another
/// address than without the check.
///
/// The software device is process-wide: a resource created by code running
/// on another thread at the same time (another `#[test]` of the same file,
/// which `cargo test` runs as a thread of the same process) and still live
/// at the end is blamed on the check too, and so is misuse that code
/// causes. Leak checks serialise among themselves — a second `start` waits
/// until the first check is finished or dropped — but code that allocates
/// outside a check is not stopped. Keep tests that allocate without a check
/// in another test file (another process), or run with
/// `--test-threads=1`.
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
    /// The first creation sequence number that belongs to the check.
    start: u64,
    misuse: MisuseWatch,
    /// Every pool's record of its blocks, ended by `finish` or the drop.
    pools: PoolWatch,
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::testing::LeakCheck;
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let check = LeakCheck::start()?; // from here on, everything created is watched
    /// let stream = Stream::new(&device)?;
    /// assert_eq!(check.leaked_now().len(), 1); // the stream
    /// stream.destroy()?;
    /// check.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
        // A test that panicked while holding the lock poisoned it; each
        // check takes its own start, so the poison carries no meaning.
        let serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The watch first: misuse recorded between the two is seen, never
        // missed.
        let misuse = MisuseWatch::start();
        let pools = PoolWatch::start();
        Ok(Self {
            before: soft::live(),
            start: soft::sequence_now(),
            misuse,
            pools,
            _serial: serial,
        })
    }

    /// The counts when the check started (for information: the check
    /// itself compares identities, see [`LeakCheck::leaked_now`]).
    ///
    /// ```
    /// use ascend::testing::LeakCheck;
    /// use ascend::{Device, stream::Event};
    /// let device = Device::new(0)?;
    /// let check = LeakCheck::start()?;
    /// let event = Event::new(&device)?;
    /// assert_eq!(check.live_now().events, check.baseline().events + 1);
    /// drop(event);
    /// assert_eq!(check.live_now(), *check.baseline());
    /// check.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn baseline(&self) -> &Live {
        &self.before
    }

    /// The counts now ([`soft::live`]).
    ///
    /// ```
    /// use ascend::testing::LeakCheck;
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let check = LeakCheck::start()?;
    /// let host = PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
    /// let now = check.live_now();
    /// assert_eq!(now.host_allocations, check.baseline().host_allocations + 1);
    /// assert!(now.host_bytes >= check.baseline().host_bytes + 4096);
    /// drop(host);
    /// check.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn live_now(&self) -> Live {
        soft::live()
    }

    /// The creation sequence number the check started at: resources with
    /// a [`LiveResource::created`] at least this one belong to it.
    ///
    /// ```
    /// use ascend::testing::LeakCheck;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let before = DeviceBuf::<u8>::zeroed(&device, 64)?; // older than the check
    /// let check = LeakCheck::start()?;
    /// let during = DeviceBuf::<u8>::zeroed(&device, 64)?;
    /// let created = ascend_sys::soft::live_since(check.start_sequence());
    /// let created: Vec<u64> = created.iter().map(|resource| resource.id).collect();
    /// assert_eq!(created, [during.as_raw() as u64]); // not `before`
    /// drop(during);
    /// check.finish()?;
    /// # drop(before);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_sequence(&self) -> u64 {
        self.start
    }

    /// The resources created since the check started that are live now,
    /// less those the pools made before the check keep as their cache:
    /// what [`LeakCheck::finish`] would report as leaked.
    ///
    /// ```
    /// use ascend::testing::LeakCheck;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let check = LeakCheck::start()?;
    /// let buf = DeviceBuf::<u32>::zeroed(&device, 16)?;
    /// let leaked = check.leaked_now();
    /// assert_eq!(leaked.len(), 1);
    /// assert_eq!(leaked[0].id, buf.as_raw() as u64); // by address
    /// assert!(leaked[0].bytes >= 64); // as allocated (the runtime may pad)
    /// drop(buf);
    /// assert!(check.leaked_now().is_empty()); // freed before the end: no leak
    /// check.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn leaked_now(&self) -> Vec<LiveResource> {
        not_held(soft::live_since(self.start), &self.pools.found_now().held)
    }

    /// The pool blocks handed out since the check started that are live
    /// now: what [`LeakCheck::finish`] would report as
    /// [`LeakCheckError::PoolLeaked`].
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// use ascend::testing::LeakCheck;
    /// let pool = DevicePool::new(&ascend::Device::new(0)?, PoolConfig::default())?;
    /// let check = LeakCheck::start()?;
    /// let block = pool.alloc_tagged(1000, "activations")?;
    /// let blocks = check.leaked_blocks_now();
    /// assert_eq!(blocks.len(), 1);
    /// assert_eq!(blocks[0].tag.as_deref(), Some("activations"));
    /// drop(block); // back to the pool: no longer a leak
    /// assert!(check.leaked_blocks_now().is_empty());
    /// check.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn leaked_blocks_now(&self) -> Vec<PoolBlockLeak> {
        live_blocks(self.pools.found_now().blocks)
    }

    /// Misuse the software device detected since the check started, even
    /// if the global list ([`soft::misuse`]) was drained meanwhile.
    ///
    /// ```
    /// use ascend::testing::LeakCheck;
    /// use ascend::{Device, stream::{DeviceFlag, Stream, ValueCondition}};
    /// let device = Device::new(0)?;
    /// let check = LeakCheck::start()?;
    /// let stream = Stream::new(&device)?;
    /// let never = DeviceFlag::new(&device, 0)?;
    /// stream.wait_value(&never, 1, ValueCondition::Equal)?;
    /// stream.destroy_force()?; // the queued wait is dropped: misuse on a real device
    /// let misuse = check.new_misuse();
    /// assert!(!misuse.is_empty());
    /// assert_eq!(misuse[0].api, "aclrtDestroyStreamForce");
    /// assert!(check.finish().is_err()); // the check fails on it
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new_misuse(&self) -> Vec<Misuse> {
        self.misuse.seen()
    }

    /// Ends the check.
    ///
    /// # Errors
    ///
    /// [`LeakCheckError::PoolLeaked`] when pool blocks handed out since
    /// the start are still live, listing exactly those (and the runtime
    /// resources that leaked too);
    /// [`LeakCheckError::Leaked`] when resources created since the start
    /// are still live, listing exactly those;
    /// [`LeakCheckError::Misuse`] when misuse was detected meanwhile.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::testing::{LeakCheck, LeakCheckError};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let check = LeakCheck::start()?;
    /// let kept = DeviceBuf::<u8>::zeroed(&device, 128)?;
    /// let Err(error) = check.finish() else {
    ///     panic!("`kept` outlives the check: a leak");
    /// };
    /// assert!(matches!(error, LeakCheckError::Leaked { .. }));
    /// assert!(error.to_string().starts_with("1 resource(s) created during the check are still live"));
    /// drop(kept);
    /// LeakCheck::start()?.finish()?; // a check with nothing created passes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> Result<(), LeakCheckError> {
        let found = self.pools.finish();
        let leaked = not_held(soft::live_since(self.start), &found.held);
        let blocks = live_blocks(found.blocks);
        if !blocks.is_empty() {
            return Err(LeakCheckError::PoolLeaked {
                blocks,
                resources: leaked,
            });
        }
        if !leaked.is_empty() {
            return Err(LeakCheckError::Leaked { leaked });
        }
        let detected = self.new_misuse();
        if !detected.is_empty() {
            return Err(LeakCheckError::Misuse { detected });
        }
        Ok(())
    }
}

/// `resources` less those a pool keeps as its cache (`held`).
fn not_held(resources: Vec<LiveResource>, held: &Held) -> Vec<LiveResource> {
    resources
        .into_iter()
        .filter(|resource| match resource.kind {
            ResourceKind::PhysicalAllocation => !held.physical.contains(&resource.id),
            ResourceKind::Reservation | ResourceKind::Mapping => !held.in_device_range(resource.id),
            ResourceKind::HostMemory => !held.host.contains(&resource.id),
            _ => true,
        })
        .collect()
}

/// `blocks` less the pinned buffers whose memory is gone: a buffer taken
/// out of its `Ordered` (`into_inner`) leaves its pool for good, and its
/// drop frees it without the pool's knowing.
fn live_blocks(blocks: Vec<PoolBlockLeak>) -> Vec<PoolBlockLeak> {
    if !blocks.iter().any(|block| block.pool == PoolKind::Pinned) {
        return blocks;
    }
    let host: std::collections::HashSet<u64> = soft::live_since(0)
        .into_iter()
        .filter(|resource| resource.kind == ResourceKind::HostMemory)
        .map(|resource| resource.id)
        .collect();
    blocks
        .into_iter()
        .filter(|block| block.pool != PoolKind::Pinned || host.contains(&block.address))
        .collect()
}

impl fmt::Debug for LeakCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeakCheck")
            .field("before", &self.before)
            .field("start", &self.start)
            .field("misuse", &self.misuse)
            .finish()
    }
}

/// Runs `f` on the software device and asserts that it left nothing
/// behind: no resource created while `f` ran is still live (compared by
/// identity, see [`LeakCheck`]), no block a pool handed out while `f` ran
/// is still live (pools made before `f` included), and no misuse was
/// detected meanwhile.
/// Returns what `f` returned.
///
/// It selects the software backend if nothing chose one yet, and runs
/// after any other `on_software_device` or [`LeakCheck`] in the process
/// has finished (they are serialised). Code outside such a check that
/// allocates on another thread at the same time and keeps the allocation
/// is blamed on the check: see [`LeakCheck`] for how to keep it apart.
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
/// A leak is reported with exactly what `f` left live:
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
/// This is an assertion for tests: it panics, with a message listing each
/// leaked resource (kind, address or handle, bytes), when something leaked
/// or misuse was detected, and when the process runs on another backend. A
/// panic in `f` propagates unchanged (nothing is then checked).
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
