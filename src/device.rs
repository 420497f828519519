//! [`Device`]: one NPU (or software device), and the per-thread binding
//! AscendCL needs.
//!
//! AscendCL keeps a *current device* per thread (`aclrtSetDevice`), and most
//! memory calls act on it. A [`Device`] makes itself current on the calling
//! thread before each call that needs it, so buffers can be moved to and used
//! from any thread. Each thread retains a device's context at most once per
//! switch and releases every retain when the thread ends.
//!
//! A thread may still use a device while it ends, from thread-local
//! destructors that run after this crate's own per-thread record is gone
//! (a buffer held in a `thread_local!`, read or dropped there). Such a call
//! sets the device on the thread again; that retain is handed to the
//! device's process retain (below) and reset with it.
//!
//! A thread's exit must not tear a device down under buffers, streams and
//! mappings that other threads still own (the runtime destroys a device's
//! streams, events and memory when its last `aclrtSetDevice` retain is
//! reset). So every [`Device`] value also shares one process-wide retain of
//! its device, taken by the first `Device::new` and reset when the last
//! `Device` of that id — and so the last owner created on it — is dropped,
//! and every thread that cloned one while bound to the device has ended
//! (such a thread counts its clones on a share of the retain of its own,
//! kept until it ends: its own retain keeps the device set that long
//! anyway).

use crate::Call;
use crate::error::{Result, check};
use ascend_sys as sys;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use thread_share::Share;

mod thread_share;

/// A device, by its id. Cheap to clone (an `Arc`).
///
/// Every `Device` keeps its device set in the process (one shared
/// `aclrtSetDevice` retain per device id, reset when the last `Device` of
/// that id is dropped and the threads that cloned one while bound to it
/// have ended). Every owner created on a device holds a `Device`, so
/// no thread's exit can tear the device down under a live buffer, stream,
/// event or mapping. Owners work from thread-local destructors too, while
/// their thread ends (see [`make_current`](Self::make_current)).
///
/// ```
/// let device = ascend::Device::new(0)?;
/// assert_eq!(device.id(), 0);
/// let (free, total) = device.memory_info()?;
/// assert!(free <= total);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `Device` is `Send` and `Sync` (and cheap to clone): it makes
/// itself current on whichever thread calls it.
///
/// **Guide:** [Concepts: devices and threads](crate::guide::concepts).
#[doc(alias = "aclrtResetDevice")]
pub struct Device {
    id: i32,
    /// A share of the device's process retain: this thread's own share
    /// when the value was cloned on a thread bound to the device (see
    /// [`Share`]).
    share: Arc<Share>,
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Device {}

impl Hash for Device {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device").field("id", &self.id).finish()
    }
}

/// The process-wide `aclrtSetDevice` retain of one device, shared by every
/// [`Device`] of that id.
struct ProcessRetain {
    id: i32,
    /// Unique among every `ProcessRetain` made in the process, so that an
    /// ending thread's record ([`ENDING`]) never names a later one.
    generation: u64,
    /// `aclrtSetDevice` retains taken by threads that were ending (their
    /// binding destroyed, see [`Device::make_current`]), reset with this
    /// one.
    adopted: AtomicU64,
}

/// The generation of the last [`ProcessRetain`] made.
static LAST_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The live process retains, by device id.
static PROCESS_RETAINS: Mutex<Vec<(i32, Weak<ProcessRetain>)>> = Mutex::new(Vec::new());

impl ProcessRetain {
    /// The retain of device `id`, taken (`aclrtSetDevice`) if no `Device`
    /// of that id is alive.
    fn of(id: i32) -> Result<Arc<Self>> {
        let mut retains = PROCESS_RETAINS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        retains.retain(|(_, weak)| weak.strong_count() > 0);
        if let Some(retain) = retains
            .iter()
            .find(|(held, _)| *held == id)
            .and_then(|(_, weak)| weak.upgrade())
        {
            return Ok(retain);
        }
        // SAFETY: no pointer arguments.
        check("aclrtSetDevice", unsafe { sys::aclrtSetDevice(id) })?;
        // That call also made `id` current on this thread.
        CURRENT.set(None);
        ENDING.set(None);
        let retain = Arc::new(Self {
            id,
            generation: LAST_GENERATION.fetch_add(1, Ordering::Relaxed) + 1,
            adopted: AtomicU64::new(0),
        });
        retains.push((id, Arc::downgrade(&retain)));
        Ok(retain)
    }
}

impl Drop for ProcessRetain {
    fn drop(&mut self) {
        for _ in 0..*self.adopted.get_mut() {
            // SAFETY: no pointer arguments; balances an `aclrtSetDevice` of
            // `Device::bind_while_ending`.
            let code = unsafe { sys::aclrtResetDevice(self.id) };
            if code != sys::ACL_SUCCESS {
                log::warn!(
                    "aclrtResetDevice({}) for a retain taken by an ending thread failed with {code}",
                    self.id
                );
            }
        }
        // SAFETY: no pointer arguments; balances the `aclrtSetDevice` of
        // `ProcessRetain::of`.
        let code = unsafe { sys::aclrtResetDevice(self.id) };
        if code != sys::ACL_SUCCESS {
            log::warn!(
                "aclrtResetDevice({}) for the last Device of that id failed with {code}",
                self.id
            );
        }
        // The reset may have cleared this thread's current context: the
        // next `make_current` on this thread sets it again.
        CURRENT.set(None);
        ENDING.set(None);
        let _ = BINDING.try_with(|binding| {
            if let Ok(mut binding) = binding.try_borrow_mut() {
                binding.current = None;
            }
        });
    }
}

impl Device {
    /// Opens device `id` and makes it current on this thread.
    ///
    /// # Errors
    ///
    /// [`Error::Backend`](crate::Error::Backend) when no backend is
    /// available; `ACL_ERROR_RT_INVALID_DEVICEID` for an id out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, ErrorCode};
    /// let device = Device::new(0)?;
    /// assert_eq!(device.id(), 0);
    /// // An id past the last device is refused by the runtime.
    /// let error = Device::new(Device::count()? as i32).unwrap_err();
    /// assert_eq!(error.code(), Some(ErrorCode::RT_INVALID_DEVICEID));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSetDevice")]
    pub fn new(id: i32) -> Result<Self> {
        crate::backend()?;
        let device = Self {
            id,
            share: Share::new(ProcessRetain::of(id)?),
        };
        device.make_current()?;
        Ok(device)
    }

    /// The number of devices.
    ///
    /// # Errors
    ///
    /// [`Error::Backend`](crate::Error::Backend), or the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// let count = Device::count()?;
    /// assert!(count >= 1);
    /// // Every id below the count opens.
    /// for id in 0..count as i32 {
    ///     assert_eq!(Device::new(id)?.id(), id);
    /// }
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetDeviceCount")]
    pub fn count() -> Result<u32> {
        crate::backend()?;
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer for the call.
        check("aclrtGetDeviceCount", unsafe { sys::aclrtGetDeviceCount(&mut count) })?;
        Ok(count)
    }

    /// The device id.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u8>::zeroed(&device, 16)?;
    /// assert_eq!(buf.device().id(), device.id());
    /// assert_eq!(device.id(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn id(&self) -> i32 {
        self.id
    }

    /// Free and total bytes of this device's memory
    /// (`aclrtGetMemInfo(ACL_HBM_MEM)`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// let device = Device::new(0)?;
    /// let (free, total) = device.memory_info()?;
    /// assert!(total > 0);
    /// assert!(free <= total);
    /// println!("{} of {} MiB free", free >> 20, total >> 20);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetMemInfo")]
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.make_current()?;
        let (mut free, mut total) = (0, 0);
        // SAFETY: both out-pointers are valid for the call.
        check("aclrtGetMemInfo", unsafe {
            sys::aclrtGetMemInfo(sys::ACL_HBM_MEM, &mut free, &mut total)
        })?;
        Ok((free, total))
    }

    /// Whether this device can access `peer`'s memory
    /// (`aclrtDeviceCanAccessPeer`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `peer`
    /// is this device; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Error};
    /// # if Device::count()? < 2 { return Ok(()); } // needs two devices
    /// let (zero, one) = (Device::new(0)?, Device::new(1)?);
    /// // Every pair of distinct software devices can reach each other.
    /// assert!(zero.can_access_peer(&one)?);
    /// // A device is not its own peer.
    /// let error = zero.can_access_peer(&zero).unwrap_err();
    /// assert!(matches!(error, Error::InvalidArgument { .. }));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDeviceCanAccessPeer")]
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        if peer.id == self.id {
            return Err(crate::Error::invalid(
                Call::new("Device::can_access_peer", "aclrtDeviceCanAccessPeer"),
                "a device is not its own peer",
            ));
        }
        let mut can = 0;
        // SAFETY: a valid out-pointer.
        check("aclrtDeviceCanAccessPeer", unsafe {
            sys::aclrtDeviceCanAccessPeer(&mut can, self.id, peer.id)
        })?;
        Ok(can != 0)
    }

    /// Lets this device access `peer`'s memory (one direction:
    /// `aclrtDeviceEnablePeerAccess` with this device current).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `peer`
    /// is this device; the runtime's code.
    ///
    /// # Examples
    ///
    /// A copy between buffers of two devices needs the device driving it
    /// (the destination's, here) to have access to the other:
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// # if Device::count()? < 2 { return Ok(()); } // needs two devices
    /// let (zero, one) = (Device::new(0)?, Device::new(1)?);
    /// let src = DeviceBuf::from_slice(&one, &[1u32, 2, 3])?;
    /// let mut dst = DeviceBuf::<u32>::zeroed(&zero, 3)?;
    /// zero.enable_peer_access(&one)?;
    /// dst.copy_from_device(&src)?;
    /// assert_eq!(dst.to_vec()?, [1, 2, 3]);
    /// zero.disable_peer_access(&one)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDeviceEnablePeerAccess")]
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        if peer.id == self.id {
            return Err(crate::Error::invalid(
                Call::new("Device::enable_peer_access", "aclrtDeviceEnablePeerAccess"),
                "a device is not its own peer",
            ));
        }
        self.make_current()?;
        // SAFETY: no pointer arguments.
        check("aclrtDeviceEnablePeerAccess", unsafe {
            sys::aclrtDeviceEnablePeerAccess(peer.id, 0)
        })
    }

    /// Withdraws this device's access to `peer`'s memory.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, ErrorCode};
    /// # if Device::count()? < 2 { return Ok(()); } // needs two devices
    /// let (zero, one) = (Device::new(0)?, Device::new(1)?);
    /// one.enable_peer_access(&zero)?;
    /// one.disable_peer_access(&zero)?;
    /// // Access that is not enabled cannot be withdrawn (the software
    /// // device's choice; on hardware the driver decides).
    /// let error = one.disable_peer_access(&zero).unwrap_err();
    /// assert_eq!(error.code(), Some(ErrorCode::RT_PARAM_INVALID));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDeviceDisablePeerAccess")]
    pub fn disable_peer_access(&self, peer: &Device) -> Result<()> {
        self.make_current()?;
        // SAFETY: no pointer arguments.
        check("aclrtDeviceDisablePeerAccess", unsafe {
            sys::aclrtDeviceDisablePeerAccess(peer.id)
        })
    }

    /// The device current on this thread according to the runtime
    /// (`aclrtGetDevice`), or `None` when there is none.
    ///
    /// # Errors
    ///
    /// The runtime's code other than "no current context".
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// let device = Device::new(0)?; // current on this thread
    /// assert_eq!(Device::current()?, Some(device));
    /// // A new thread has no current device until it uses one.
    /// let elsewhere = std::thread::spawn(Device::current).join().expect("no panic")?;
    /// assert_eq!(elsewhere, None);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetDevice")]
    pub fn current() -> Result<Option<Device>> {
        crate::backend()?;
        let mut id = -1;
        // SAFETY: a valid out-pointer.
        match check("aclrtGetDevice", unsafe { sys::aclrtGetDevice(&mut id) }) {
            Ok(()) => Ok(Some(Device::new(id)?)),
            Err(error) if error.code() == Some(crate::ErrorCode::RT_CONTEXT_NULL) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Memory use of this device by component (`aclrtGetMemUsageInfo`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let _buf = DeviceBuf::<u8>::zeroed(&device, 1 << 20)?;
    /// let usage = device.memory_usage()?;
    /// let in_use: u64 = usage.iter().map(|component| component.current).sum();
    /// assert!(in_use >= 1 << 20);
    /// assert!(usage.iter().all(|component| component.peak >= component.current));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetMemUsageInfo")]
    pub fn memory_usage(&self) -> Result<Vec<MemoryUsage>> {
        self.make_current()?;
        let mut entries = vec![sys::aclrtMemUsageInfo::default(); 64];
        let mut filled = 0;
        // SAFETY: `entries` holds 64 writable records; `filled` is valid.
        check("aclrtGetMemUsageInfo", unsafe {
            sys::aclrtGetMemUsageInfo(self.id, entries.as_mut_ptr(), entries.len(), &mut filled)
        })?;
        entries.truncate(filled.min(64));
        Ok(entries
            .iter()
            .map(|entry| {
                let name: Vec<u8> = entry.name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
                MemoryUsage {
                    name: String::from_utf8_lossy(&name).into_owned(),
                    current: entry.curMemSize,
                    peak: entry.memPeakSize,
                }
            })
            .collect())
    }

    /// Waits at most `timeout` for the work queued on this device
    /// (`aclrtSynchronizeDeviceWithTimeout`; rounded up to whole
    /// milliseconds).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a
    /// timeout above `i32::MAX` ms; the runtime's code (a timeout, or a
    /// failure of queued work).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Error};
    /// use std::time::Duration;
    /// let device = Device::new(0)?;
    /// device.synchronize_timeout(Duration::from_secs(1))?; // nothing queued: returns at once
    /// // A timeout beyond i32::MAX milliseconds is refused before any call.
    /// let error = device.synchronize_timeout(Duration::from_secs(30 * 86_400)).unwrap_err();
    /// assert!(matches!(error, Error::InvalidArgument { .. }));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSynchronizeDeviceWithTimeout")]
    pub fn synchronize_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        let millis = timeout.as_nanos().div_ceil(1_000_000).max(1);
        let millis = i32::try_from(millis).map_err(|_| {
            crate::Error::invalid(
                Call::new("Device::synchronize_timeout", "aclrtSynchronizeDeviceWithTimeout"),
                "timeout too long",
            )
        })?;
        self.make_current()?;
        // SAFETY: no pointer arguments.
        check("aclrtSynchronizeDeviceWithTimeout", unsafe {
            sys::aclrtSynchronizeDeviceWithTimeout(millis)
        })
    }

    /// Waits for all work queued on this device (`aclrtSynchronizeDevice`).
    ///
    /// # Errors
    ///
    /// The runtime's code (including a failure of queued work).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1.5f32; 256])?;
    /// let mut host = PinnedHostBuf::<f32>::zeroed(&device, 256)?;
    /// stream.scope(|s| {
    ///     s.copy_to_host(&buf, &mut host)?; // queued on `stream`
    ///     device.synchronize() // waits for every stream of the device
    /// })?; // the scope's own synchronisation then returns at once
    /// assert_eq!(&host[..], [1.5; 256]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSynchronizeDevice")]
    pub fn synchronize(&self) -> Result<()> {
        self.make_current()?;
        // SAFETY: no arguments.
        check("aclrtSynchronizeDevice", unsafe { sys::aclrtSynchronizeDevice() })
    }

    /// Makes this device current on the calling thread (`aclrtSetDevice`),
    /// if it is not already.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// The device this crate last made current is remembered per thread, so
    /// the check costs no call. Code that switches devices with raw
    /// `ascend_sys::aclrtSetDevice` on the same thread must call
    /// `make_current` again before using this crate's handles.
    ///
    /// **While the thread ends** (from a thread-local destructor that runs
    /// after this crate's per-thread record is destroyed), the call still
    /// works: it sets the device on the thread again, and that retain is
    /// reset when the last `Device` of the id is dropped instead of when the
    /// thread ends (the thread can no longer record it). It is taken once
    /// per switch of device, as on a live thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// # if Device::count()? < 2 { return Ok(()); } // needs two devices
    /// let (zero, one) = (Device::new(0)?, Device::new(1)?);
    /// zero.make_current()?;
    /// assert_eq!(Device::current()?, Some(zero));
    /// one.make_current()?; // e.g. before raw `ascend_sys` calls on device 1
    /// assert_eq!(Device::current()?.map(|device| device.id()), Some(1));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[inline]
    #[doc(alias = "aclrtSetDevice")]
    pub fn make_current(&self) -> Result<()> {
        if CURRENT.get() == Some(self.id) {
            return Ok(());
        }
        self.bind()
    }

    /// [`make_current`](Self::make_current) past its fast path: this
    /// thread's binding sets the device, or, when the binding is gone (the
    /// thread is ending), [`bind_while_ending`](Self::bind_while_ending).
    fn bind(&self) -> Result<()> {
        let bound = BINDING.try_with(|binding| binding.try_borrow_mut().ok().map(|mut binding| binding.bind(self.id)));
        match bound {
            Ok(Some(bound)) => {
                bound?;
                CURRENT.set(Some(self.id));
                ENDING.set(None);
                Ok(())
            }
            // The binding is destroyed, or (never, no call in `bind`
            // reenters) borrowed.
            Ok(None) | Err(_) => self.bind_while_ending(),
        }
    }

    /// Sets this device on a thread whose binding is gone: the retain is
    /// handed to the device's process retain (held by `self`, so alive at
    /// least as long as this call) and reset with it. [`ENDING`] names
    /// the device so set, so repeated calls take one retain.
    #[cold]
    fn bind_while_ending(&self) -> Result<()> {
        let process = &self.share.process;
        let set = Some((self.id, process.generation));
        if ENDING.get() == set {
            return Ok(());
        }
        // SAFETY: no pointer arguments.
        check("aclrtSetDevice", unsafe { sys::aclrtSetDevice(self.id) })?;
        process.adopted.fetch_add(1, Ordering::Relaxed);
        ENDING.set(set);
        Ok(())
    }
}

/// What this thread has retained.
#[derive(Default)]
struct ThreadBinding {
    current: Option<i32>,
    /// One entry per successful `aclrtSetDevice` made by this crate on this
    /// thread; each is released when the thread ends.
    retains: Vec<i32>,
    /// This thread's share of the process retain of each device it has
    /// retained and cloned a `Device` of, kept until the thread ends (the
    /// thread's own retain keeps the device set until then anyway, so
    /// keeping the process retain as long changes nothing the runtime
    /// sees).
    shares: Vec<(i32, Arc<Share>)>,
}

impl ThreadBinding {
    fn bind(&mut self, id: i32) -> Result<()> {
        if self.current == Some(id) {
            return Ok(());
        }
        // SAFETY: no pointer arguments.
        check("aclrtSetDevice", unsafe { sys::aclrtSetDevice(id) })?;
        self.current = Some(id);
        self.retains.push(id);
        Ok(())
    }
}

impl Drop for ThreadBinding {
    fn drop(&mut self) {
        // The resets below may clear the thread's current context: later
        // uses (other thread locals' destructors) must set it again.
        CURRENT.set(None);
        for &id in self.retains.iter().rev() {
            // SAFETY: no pointer arguments.
            let code = unsafe { sys::aclrtResetDevice(id) };
            if code != sys::ACL_SUCCESS {
                log::warn!("aclrtResetDevice({id}) at thread exit failed with {code}");
            }
        }
    }
}

thread_local! {
    static BINDING: RefCell<ThreadBinding> = RefCell::new(ThreadBinding::default());
    /// The device id this crate last made current on this thread (`None`:
    /// none yet; not a sentinel id, since any `i32` may be asked for and
    /// must reach the runtime's check); a destructor-free fast path in
    /// front of `BINDING`. Having no destructor, it stays accessible while
    /// the thread ends (`get`/`set` cannot fail).
    static CURRENT: Cell<Option<i32>> = const { Cell::new(None) };
    /// The device, and generation of its [`ProcessRetain`], that this
    /// thread set after its `BINDING` was destroyed
    /// ([`Device::bind_while_ending`]); destructor-free too.
    static ENDING: Cell<Option<(i32, u64)>> = const { Cell::new(None) };
}

/// One component's device-memory use ([`Device::memory_usage`]).
///
/// ```
/// use ascend::{Device, MemoryUsage};
/// let device = Device::new(0)?;
/// let usage: Vec<MemoryUsage> = device.memory_usage()?;
/// for component in &usage {
///     assert!(!component.name.is_empty());
///     assert!(component.current <= component.peak);
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryUsage {
    /// The component.
    pub name: String,
    /// Bytes in use now.
    pub current: u64,
    /// The most bytes it has used.
    pub peak: u64,
}
