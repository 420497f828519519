//! The software device's process-wide state.

use super::arena::Arena;
use super::config::{Config, ConfigError};
use super::fail::{SoftResult, fail};
use super::range_alloc::RangeAllocator;
use crate::types::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_DEVICEID};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Alignment of `aclrtMalloc*` start addresses: the runtime asks the driver
/// for 2^9 bytes (see `acl-behaviour.md` §13).
pub(crate) const DEVICE_ALIGN: u64 = 512;

/// One device-memory allocation (`aclrtMalloc*`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeviceAllocation {
    pub(crate) device: i32,
    /// Physical offset in the device's arena.
    pub(crate) offset: u64,
    /// Bytes reserved (after the documented rounding and padding).
    pub(crate) size: u64,
    /// Bytes the caller asked for.
    pub(crate) requested: u64,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// One pinned host allocation (`aclrtMallocHost*`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostAllocation {
    pub(crate) size: usize,
    /// Whether it is a mapping of its own (large sizes) rather than a
    /// block of the process allocator.
    pub(crate) mapped: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// One device: its memory, its allocator and its primary-context count.
pub(crate) struct Device {
    pub(crate) arena: Arena,
    pub(crate) space: RangeAllocator,
    /// `aclrtSetDevice` retains minus `aclrtResetDevice` releases.
    pub(crate) retains: u32,
    /// Bytes of VMM physical allocations on this device.
    pub(crate) vmm_bytes: u64,
}

impl Device {
    /// Bytes not yet allocated (by `aclrtMalloc*` or `aclrtMallocPhysical`).
    pub(crate) fn free_bytes(&self) -> u64 {
        self.space.capacity().saturating_sub(self.space.used() + self.vmm_bytes)
    }
}

/// `aclInit` / `aclFinalize` state.
#[derive(Debug, Default)]
pub(crate) struct InitState {
    pub(crate) initialized: bool,
    pub(crate) finalized: bool,
    pub(crate) references: u64,
    /// Content of the first successful configuration (re-initialisation with
    /// a different one is refused, as the runtime does).
    pub(crate) first_config: Option<Vec<u8>>,
}

/// Everything behind the lock.
pub(crate) struct State {
    pub(crate) config: Config,
    pub(crate) devices: Vec<Device>,
    pub(crate) init: InitState,
    /// Device allocations by device address.
    pub(crate) device_allocations: BTreeMap<usize, DeviceAllocation>,
    /// Host allocations by host address.
    pub(crate) host_allocations: BTreeMap<usize, HostAllocation>,
    /// Streams and events.
    pub(crate) streams: super::streams::Streams,
    /// Registered host ranges.
    pub(crate) registrations: super::host_register::Registrations,
    /// Peer access between devices.
    pub(crate) peers: super::peer::PeerAccess,
    /// Custom allocator descriptors.
    pub(crate) allocators: super::allocator_desc::Allocators,
    /// Context handles (primary and created contexts).
    pub(crate) contexts: super::context::Contexts,
    /// Physical allocations, reserved ranges and mappings.
    pub(crate) vmm: super::vmm::Vmm,
    /// Memory shared with other processes (shareable handles, IPC keys).
    pub(crate) share: super::share::Share,
}

impl State {
    fn start(config: Config) -> SoftResult<Self> {
        let mut devices = Vec::with_capacity(config.device_count as usize);
        for id in 0..config.device_count {
            devices.push(Device {
                arena: Arena::new(id as i32, config.device_memory)?,
                space: RangeAllocator::new(config.device_memory),
                retains: 0,
                vmm_bytes: 0,
            });
        }
        log::info!("software device started: {config}");
        Ok(Self {
            config,
            devices,
            init: InitState::default(),
            device_allocations: BTreeMap::new(),
            host_allocations: BTreeMap::new(),
            streams: Default::default(),
            registrations: Default::default(),
            peers: Default::default(),
            allocators: Default::default(),
            contexts: Default::default(),
            vmm: Default::default(),
            share: Default::default(),
        })
    }

    /// The device `id`, or `ACL_ERROR_RT_INVALID_DEVICEID`.
    pub(crate) fn device(&mut self, id: i32) -> SoftResult<&mut Device> {
        let count = self.devices.len();
        usize::try_from(id)
            .ok()
            .and_then(|index| self.devices.get_mut(index))
            .map_or_else(
                || {
                    fail(
                        ACL_ERROR_RT_INVALID_DEVICEID,
                        format!("device id {id} is out of range (the software device has {count} device(s))"),
                    )
                },
                Ok,
            )
    }

    /// The device whose address range contains `address`, if any.
    pub(crate) fn device_of(&self, address: usize) -> Option<i32> {
        self.devices
            .iter()
            .position(|device| device.arena.contains(address))
            .map(|index| index as i32)
    }
}

static CONFIG: Mutex<Option<Config>> = Mutex::new(None);
static STATE: OnceLock<Result<Mutex<State>, String>> = OnceLock::new();

/// Sets the configuration used when the software device starts.
pub(crate) fn configure(config: Config) -> Result<(), ConfigError> {
    config.validate()?;
    let mut slot = CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(Ok(state)) = STATE.get() {
        let state = state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        return if state.config == config {
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
    if let Some(started) = STATE.get() {
        return started.as_ref().err().cloned();
    }
    if let Some(problem) = super::faults::env_problem() {
        return Some(problem.to_string());
    }
    if CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some() {
        return None;
    }
    Config::from_env().err().map(|error| error.to_string())
}

/// The state, starting the software device on first use.
pub(crate) fn lock() -> SoftResult<MutexGuard<'static, State>> {
    let state = STATE.get_or_init(|| {
        if let Some(problem) = super::faults::env_problem() {
            return Err(problem.to_string());
        }
        let chosen = CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let config = match chosen {
            Some(config) => config,
            None => Config::from_env().map_err(|error| error.to_string())?,
        };
        State::start(config).map(Mutex::new).map_err(|failure| failure.message)
    });
    match state {
        // A panic while holding the lock (a bug) must not take every later
        // call down with it: the bookkeeping is updated in single steps.
        Ok(mutex) => Ok(mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())),
        Err(why) => fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("the software device could not start: {why}"),
        ),
    }
}

/// The state if the software device has started, without starting it.
pub(crate) fn lock_if_started() -> Option<MutexGuard<'static, State>> {
    match STATE.get() {
        Some(Ok(mutex)) => Some(mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())),
        _ => None,
    }
}
