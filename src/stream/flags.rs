//! [`StreamFlags`], [`EventFlags`] and [`StreamPriority`]: the typed
//! creation options of streams and events.

use crate::Call;
use crate::error::{Error, Result};
use ascend_sys as sys;

bitflags::bitflags! {
    /// Creation flags of a [`Stream`](crate::stream::Stream)
    /// (`ACL_STREAM_*`, for `aclrtCreateStreamWithConfig`).
    ///
    /// The runtime accepts an OR of several flags, except
    /// [`StreamFlags::DEVICE_USE_ONLY`], which stands alone. Flags for
    /// streams bound to models, AI CPU scheduling or device-side launches
    /// are not emulated by the software device (it refuses them with
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`).
    ///
    /// ```
    /// use ascend::stream::StreamFlags;
    /// let flags = StreamFlags::FAST_LAUNCH | StreamFlags::FAST_SYNC;
    /// assert_eq!(flags.bits(), 0x3);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct StreamFlags: u32 {
        /// Reserve the stream's resources at creation, so tasks are
        /// submitted faster (`ACL_STREAM_FAST_LAUNCH`).
        const FAST_LAUNCH = sys::ACL_STREAM_FAST_LAUNCH;
        /// Synchronisation polls instead of sleeping
        /// (`ACL_STREAM_FAST_SYNC`).
        const FAST_SYNC = sys::ACL_STREAM_FAST_SYNC;
        /// Tasks stay on the stream for a model to run
        /// (`ACL_STREAM_PERSISTENT`).
        const PERSISTENT = sys::ACL_STREAM_PERSISTENT;
        /// A stream with a larger task queue (`ACL_STREAM_HUGE`).
        const HUGE = sys::ACL_STREAM_HUGE;
        /// Tasks scheduled by the AI CPU (`ACL_STREAM_CPU_SCHEDULE`).
        const CPU_SCHEDULE = sys::ACL_STREAM_CPU_SCHEDULE;
        /// A stream only device-side code launches on
        /// (`ACL_STREAM_DEVICE_USE_ONLY`; not combinable).
        const DEVICE_USE_ONLY = sys::ACL_STREAM_DEVICE_USE_ONLY;
    }
}

bitflags::bitflags! {
    /// Creation flags of an [`Event`](crate::stream::Event) (`ACL_EVENT_*`,
    /// for `aclrtCreateEventWithFlag`).
    ///
    /// A stream can only wait for an event that has [`EventFlags::SYNC`];
    /// [`EventFlags::TIME_LINE`] asks for time stamps.
    /// [`EventFlags::DEVICE_USE_ONLY`] and [`EventFlags::EXTERNAL`] stand
    /// alone.
    ///
    /// ```
    /// use ascend::stream::EventFlags;
    /// let flags = EventFlags::SYNC | EventFlags::TIME_LINE;
    /// assert!(flags.contains(EventFlags::SYNC));
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct EventFlags: u32 {
        /// Streams can wait for the event (`ACL_EVENT_SYNC`).
        const SYNC = sys::ACL_EVENT_SYNC;
        /// The event marks a capturing stream's progress
        /// (`ACL_EVENT_CAPTURE_STREAM_PROGRESS`).
        const CAPTURE_STREAM_PROGRESS = sys::ACL_EVENT_CAPTURE_STREAM_PROGRESS;
        /// Records carry time stamps (`ACL_EVENT_TIME_LINE`).
        const TIME_LINE = sys::ACL_EVENT_TIME_LINE;
        /// Used by device-side code only (`ACL_EVENT_DEVICE_USE_ONLY`).
        const DEVICE_USE_ONLY = sys::ACL_EVENT_DEVICE_USE_ONLY;
        /// Shared with an external component (`ACL_EVENT_EXTERNAL`).
        const EXTERNAL = sys::ACL_EVENT_EXTERNAL;
        /// Shared between processes (`ACL_EVENT_IPC`; alone, with the
        /// extended creation call: see [`IpcEvent`](super::IpcEvent)).
        const IPC = sys::ACL_EVENT_IPC;
    }
}

/// The priority of a stream: 0 (highest) to 7 (lowest), as
/// `aclrtCreateStreamWithConfig` documents. Many chips ignore it (a
/// reserved parameter there); the value is checked in Rust either way.
///
/// ```
/// use ascend::stream::StreamPriority;
/// assert_eq!(StreamPriority::new(3)?.get(), 3);
/// assert!(StreamPriority::new(8).is_err());
/// assert_eq!(StreamPriority::default(), StreamPriority::HIGHEST);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct StreamPriority(u8);

impl StreamPriority {
    /// Priority 0, the highest (and the default).
    pub const HIGHEST: Self = Self(0);
    /// Priority 7, the lowest.
    pub const LOWEST: Self = Self(7);

    /// The priority `level`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `level` is above 7.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Error, stream::StreamPriority};
    /// assert_eq!(StreamPriority::new(7)?, StreamPriority::LOWEST);
    /// assert!(StreamPriority::new(1)? < StreamPriority::new(2)?); // ordered by level: 0 first
    /// assert!(matches!(StreamPriority::new(9), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(level: u8) -> Result<Self> {
        if level > Self::LOWEST.0 {
            return Err(Error::invalid(
                Call::new("StreamPriority::new", "aclrtCreateStreamWithConfig"),
                format!("priority {level} is outside 0 (highest) to 7 (lowest)"),
            ));
        }
        Ok(Self(level))
    }

    /// The level, 0 to 7.
    ///
    /// ```
    /// use ascend::stream::StreamPriority;
    /// assert_eq!(StreamPriority::HIGHEST.get(), 0);
    /// assert_eq!(StreamPriority::new(5)?.get(), 5);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn get(self) -> u8 {
        self.0
    }
}
