//! [`IpcEvent`]: an event shared between processes (`ACL_EVENT_IPC`,
//! `aclrtIpcGetEventHandle`, `aclrtIpcOpenEventHandle`).

use super::event::Event;
use super::flags::EventFlags;
use crate::Device;
use crate::error::{Call, Result, check};
use ascend_sys as sys;
use std::fmt;
use std::ops::Deref;

/// The bytes another process opens an [`IpcEvent`] by
/// (`aclrtIpcEventHandle`): send them over any channel (a pipe, a socket)
/// with [`IpcEventHandle::as_bytes`] and rebuild them with
/// [`IpcEventHandle::from_bytes`].
///
/// ```
/// use ascend::Device;
/// use ascend::stream::{IpcEvent, IpcEventHandle};
/// let device = Device::new(0)?;
/// let event = IpcEvent::new(&device)?;
/// let bytes: [u8; IpcEventHandle::LEN] = *event.handle()?.as_bytes(); // send these
/// // In the other process (here the same one):
/// let opened = IpcEvent::open(&device, &IpcEventHandle::from_bytes(bytes))?;
/// opened.synchronize()?; // nothing recorded yet: returns at once
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcEventHandle([u8; IpcEventHandle::LEN]);

impl IpcEventHandle {
    /// Bytes of a handle (`ACL_IPC_EVENT_HANDLE_SIZE`).
    pub const LEN: usize = 64;

    /// The handle's bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::stream::{IpcEvent, IpcEventHandle};
    /// let device = Device::new(0)?;
    /// let handle = IpcEvent::new(&device)?.handle()?;
    /// let bytes: &[u8; IpcEventHandle::LEN] = handle.as_bytes(); // what goes over the pipe
    /// assert_eq!(IpcEventHandle::from_bytes(*bytes), handle);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_bytes(&self) -> &[u8; Self::LEN] {
        &self.0
    }

    /// A handle from bytes another process sent ([`IpcEventHandle::as_bytes`]).
    /// Bytes that name no live IPC event are refused by [`IpcEvent::open`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::stream::{IpcEvent, IpcEventHandle};
    /// let device = Device::new(0)?;
    /// let event = IpcEvent::new(&device)?;
    /// let received: [u8; IpcEventHandle::LEN] = *event.handle()?.as_bytes(); // read from the pipe
    /// let handle = IpcEventHandle::from_bytes(received);
    /// assert_eq!(handle, event.handle()?);
    /// IpcEvent::open(&device, &handle)?.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_bytes(bytes: [u8; Self::LEN]) -> Self {
        Self(bytes)
    }

    fn to_raw(self) -> sys::aclrtIpcEventHandle {
        sys::aclrtIpcEventHandle {
            reserved: self.0.map(|byte| byte as std::ffi::c_char),
        }
    }
}

impl fmt::Debug for IpcEventHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex: String = self.0.iter().map(|byte| format!("{byte:02x}")).collect();
        write!(f, "IpcEventHandle({hex})")
    }
}

/// An event shared between processes: made with `ACL_EVENT_IPC`
/// ([`IpcEvent::new`]) in one process, opened by its
/// [`handle`](IpcEvent::handle) in others ([`IpcEvent::open`]). It derefs
/// to [`Event`]: a record made in any process holding it can be waited
/// for ([`Stream::wait_event`](super::Stream::wait_event)), synchronised
/// with and queried in the others. Before its first record it counts as
/// complete, and a wait for it is a no-op. The runtime refuses what IPC
/// events do not support: [`Event::reset`], timestamps and elapsed times
/// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`).
///
/// Dropping it destroys this process's event; the others' stay usable.
///
/// ```
/// use ascend::{Device, Stream, stream::IpcEvent};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let shared = IpcEvent::new(&device)?;
/// let handle = shared.handle()?; // send `handle.as_bytes()` to another process
/// // ... which opens it (here: this process, for the example).
/// let opened = IpcEvent::open(&device, &handle)?;
/// shared.record(&stream)?;
/// opened.synchronize()?; // waits for the record made through `shared`
/// assert!(opened.query()?);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `IpcEvent` is `Send` and `Sync`, like [`Event`].
pub struct IpcEvent {
    event: Event,
}

impl IpcEvent {
    /// Creates an event other processes can open
    /// (`aclrtCreateEventExWithFlag(ACL_EVENT_IPC)`).
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` on chips
    /// without IPC events).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::IpcEvent};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = IpcEvent::new(&device)?;
    /// event.record(&stream)?; // an `Event` by deref
    /// event.synchronize()?;
    /// assert!(event.query()?, "the record is reached");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCreateEventExWithFlag")]
    pub fn new(device: &Device) -> Result<Self> {
        Ok(Self {
            event: Event::with_flags_ex(device, EventFlags::IPC)?,
        })
    }

    /// The handle other processes open this event by
    /// (`aclrtIpcGetEventHandle`). It stays valid while the event lives in
    /// the process that created it.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::stream::{IpcEvent, IpcEventHandle};
    /// let device = Device::new(0)?;
    /// let event = IpcEvent::new(&device)?;
    /// let handle = event.handle()?;
    /// assert_eq!(event.handle()?, handle, "the same event, the same handle");
    /// assert_ne!(IpcEvent::new(&device)?.handle()?, handle, "another event, another handle");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtIpcGetEventHandle")]
    pub fn handle(&self) -> Result<IpcEventHandle> {
        self.event.device().make_current()?;
        let mut raw = sys::aclrtIpcEventHandle { reserved: [0; 64] };
        // SAFETY: the event is live (owned by `self`); `raw` is a valid
        // out-pointer.
        check("aclrtIpcGetEventHandle", unsafe {
            sys::aclrtIpcGetEventHandle(self.event.as_raw(), &mut raw)
        })?;
        Ok(IpcEventHandle(raw.reserved.map(|byte| byte as u8)))
    }

    /// Opens the event `handle` names on `device` (`aclrtIpcOpenEventHandle`),
    /// in another process than the one that created it (or, on the software
    /// device, the same one).
    ///
    /// # Errors
    ///
    /// The runtime's code: a handle that names no live IPC event (its event
    /// destroyed, its process gone), or a process of another user.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{IpcEvent, IpcEventHandle}};
    /// let device = Device::new(0)?;
    /// let garbage = IpcEventHandle::from_bytes([7; IpcEventHandle::LEN]);
    /// assert!(IpcEvent::open(&device, &garbage).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtIpcOpenEventHandle")]
    pub fn open(device: &Device, handle: &IpcEventHandle) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the handle is passed by value.
        check("aclrtIpcOpenEventHandle", unsafe {
            sys::aclrtIpcOpenEventHandle(handle.to_raw(), &mut raw)
        })?;
        let event = Event::from_created(Call::new("IpcEvent::open", "aclrtIpcOpenEventHandle"), raw, device)?;
        Ok(Self { event })
    }

    /// Destroys this process's event now, reporting the error (dropping
    /// it logs one instead).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::stream::{IpcEvent, IpcEventHandle};
    /// let device = Device::new(0)?;
    /// let event = IpcEvent::new(&device)?;
    /// let opened = IpcEvent::open(&device, &event.handle()?)?;
    /// opened.destroy()?; // this process's copy; errors are reported, not logged
    /// event.synchronize()?; // the creator's stays usable
    /// event.destroy()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDestroyEvent")]
    pub fn destroy(self) -> Result<()> {
        self.event.destroy()
    }
}

impl Deref for IpcEvent {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.event
    }
}

impl fmt::Debug for IpcEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcEvent").field("event", &self.event).finish()
    }
}
