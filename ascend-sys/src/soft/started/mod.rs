//! The started software device: its core — its configuration and its
//! devices' memory, fixed when it starts ([`core()`] starts it on first use)
//! and read without a lock — and each thread's current device
//! ([`current`]).

pub(crate) mod current;

use crate::soft::core::config::{Config, ConfigError};
use crate::soft::core::device_arena::Arena;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_DEVICEID};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Alignment of `aclrtMalloc*` start addresses: the runtime asks the driver
/// for 2^9 bytes (see `acl-behaviour.md` §13).
pub(crate) const DEVICE_ALIGN: u64 = 512;

/// One device's fixed part, shared by every family without a lock: its
/// memory and the count of bytes allocated from it.
pub(crate) struct DeviceCore {
    pub(crate) arena: Arena,
    /// Bytes of `aclrtMalloc*` and `aclrtMallocPhysical` allocations.
    committed: AtomicU64,
    /// The highest `committed` has been.
    peak: AtomicU64,
}

impl DeviceCore {
    /// The device's memory in bytes.
    pub(crate) fn capacity(&self) -> u64 {
        self.arena.capacity()
    }

    /// Bytes not counted as allocated: the device-memory family adds what
    /// its shards set aside ([`crate::soft::device_mem::free_bytes`]).
    pub(crate) fn free_bytes(&self) -> u64 {
        self.capacity().saturating_sub(self.committed.load(Ordering::Relaxed))
    }

    /// The highest the count of allocated bytes has been.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Counts `bytes` as allocated if that many are free; `false` otherwise.
    pub(crate) fn commit(&self, bytes: u64) -> bool {
        let taken = self
            .committed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
                now.checked_add(bytes).filter(|&total| total <= self.capacity())
            });
        match taken {
            Ok(before) => {
                // A load first: the peak is rarely raised, and a read does
                // not take the cache line from other threads.
                if before + bytes > self.peak.load(Ordering::Relaxed) {
                    self.peak.fetch_max(before + bytes, Ordering::Relaxed);
                }
                true
            }
            Err(_) => false,
        }
    }

    /// Counts `bytes` committed before as free again.
    pub(crate) fn uncommit(&self, bytes: u64) {
        self.committed.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// The parts of the software device fixed when it starts: its
/// configuration and its devices' memory.
pub(crate) struct Core {
    pub(crate) config: Config,
    pub(crate) devices: Vec<DeviceCore>,
}

impl Core {
    /// The device `id`, or `ACL_ERROR_RT_INVALID_DEVICEID`.
    pub(crate) fn device(&self, id: i32) -> SoftResult<&DeviceCore> {
        usize::try_from(id)
            .ok()
            .and_then(|index| self.devices.get(index))
            .map_or_else(|| invalid_device(id, self.devices.len()), Ok)
    }

    /// The device whose address range contains `address`, if any.
    pub(crate) fn device_of(&self, address: usize) -> Option<i32> {
        self.devices
            .iter()
            .position(|device| device.arena.contains(address))
            .map(|index| index as i32)
    }
}

fn invalid_device<T>(id: i32, count: usize) -> SoftResult<T> {
    fail(
        ACL_ERROR_RT_INVALID_DEVICEID,
        format!("device id {id} is out of range (the software device has {count} device(s))"),
    )
}

impl Core {
    /// Starts the software device: maps each device's memory. Each family
    /// keeps its own state behind its own lock ([`crate::soft::core::lock_order`]).
    fn start(config: Config) -> SoftResult<Self> {
        let mut devices = Vec::with_capacity(config.device_count as usize);
        for id in 0..config.device_count {
            devices.push(DeviceCore {
                arena: Arena::new(id as i32, config.device_memory)?,
                committed: AtomicU64::new(0),
                peak: AtomicU64::new(0),
            });
        }
        log::info!("software device started: {config}");
        Ok(Self { config, devices })
    }
}

static CONFIG: Mutex<Option<Config>> = Mutex::new(None);
/// The started software device's core, or why it could not start.
static SOFT: OnceLock<Result<Core, String>> = OnceLock::new();

/// Sets the configuration used when the software device starts.
pub(crate) fn configure(config: Config) -> Result<(), ConfigError> {
    config.validate()?;
    let mut slot = CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(core) = core_if_started() {
        return if core.config == config {
            Ok(())
        } else {
            Err(ConfigError::AlreadyStarted)
        };
    }
    *slot = Some(config);
    Ok(())
}

/// Why the software device cannot start (or could not), if it cannot: a
/// malformed fault list, or a configuration from the environment that does
/// not parse or is out of range (unless [`configure`] set one). Once the
/// device has started this is one atomic load.
pub(crate) fn startup_problem() -> Option<String> {
    if let Some(started) = SOFT.get() {
        return started.as_ref().err().cloned();
    }
    if let Some(problem) =
        crate::soft::check::fault_injection::env_problem().or_else(crate::soft::check::sanitize::env_problem)
    {
        return Some(problem.to_string());
    }
    if CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some() {
        return None;
    }
    Config::from_env().err().map(|error| error.to_string())
}

/// The fixed core (configuration, devices' memory), starting the software
/// device on first use. No lock: it never changes.
pub(crate) fn core() -> SoftResult<&'static Core> {
    let started = SOFT.get_or_init(|| {
        if let Some(problem) =
            crate::soft::check::fault_injection::env_problem().or_else(crate::soft::check::sanitize::env_problem)
        {
            return Err(problem.to_string());
        }
        let chosen = CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let config = match chosen {
            Some(config) => config,
            None => Config::from_env().map_err(|error| error.to_string())?,
        };
        Core::start(config).map_err(|failure| failure.message)
    });
    match started {
        Ok(core) => Ok(core),
        Err(why) => fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("the software device could not start: {why}"),
        ),
    }
}

/// The fixed core if the software device has started, without starting it.
pub(crate) fn core_if_started() -> Option<&'static Core> {
    SOFT.get().and_then(|started| started.as_ref().ok())
}
