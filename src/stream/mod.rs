//! Streams, events and asynchronous transfers that are sound by
//! construction.
//!
//! A [`Stream`] runs device work in order, asynchronously to the host. Work
//! that uses host or device buffers is queued in one of two ways, so that no
//! buffer can be freed, moved or touched by the host while the device may
//! still use it:
//!
//! - **Borrowed, in a scope.** [`Stream::scope`] runs a closure with an
//!   [`AsyncScope`]; every transfer borrows its buffers until the scope
//!   ends, and the scope synchronises the stream before it returns — also
//!   when the closure fails or panics, like [`std::thread::scope`].
//!   Touching a borrowed buffer inside the scope does not compile.
//! - **Owned: [`Ordered`].** An [`Ordered`] buffer (kept in an
//!   `Arc`, say) takes asynchronous copies and memsets on any stream with no
//!   scope: it remembers the streams that may still use it, orders work on
//!   another stream after the conflicting uses, and waits for them before
//!   host access and before it is freed. This is also how one buffer is
//!   used from several streams, which scoped code cannot express (a buffer
//!   borrowed by one stream's scope cannot be borrowed by another's).
//!
//! **When the runtime fails.** No safe API here ends a borrow or frees a
//! buffer while work that uses it may still be queued, whatever a runtime
//! call returns. Before borrowed or owned buffers are released, the stream
//! is synchronised; a failed synchronisation is retried, then escalated to
//! the device (`aclrtSynchronizeDevice`). If none succeeds, a scope aborts
//! the process with a message naming the stream and every error (a scope
//! cannot fail its join, as in [`std::thread::scope`]), and an [`Ordered`]
//! owner leaks its memory and returns the error. A failed *task* is
//! reported once, by the first synchronisation after it: the retry then
//! proves the stream drained, and the scope or [`Ordered::into_inner`]
//! returns that error with nothing leaked.
//!
//! **Memory-semantic synchronisation.** A [`DeviceFlag`] is a 64-bit word
//! of device memory that streams write ([`Stream::write_value`]) and wait
//! for ([`Stream::wait_value`], with a [`ValueCondition`]), and that the
//! host reads and writes: a wait blocks only its own stream. Each stream
//! keeps the flags of its queued value work alive until that work is proven
//! finished. A wait that is never satisfied is visible: a synchronisation
//! with a timeout reports it, [`Stream::destroy_force`] ends it (dropping
//! the stream's queued work), and dropping the stream waits at most
//! [`Stream::VALUE_WAIT_LIMIT`] before destroying it by force.
//!
//! [`Event`]s mark points in a stream: other streams wait for them
//! ([`Stream::wait_event`]), the host polls or waits for them, and two of
//! them time the work between. A [`Notify`] is a one-bit signal one stream
//! sets and another waits for and clears (shareable with other processes by
//! a [`NotifyExportKey`]); a [`CntNotify`] is a counter streams add to and
//! wait on. 2-D copies of pitched regions take a
//! [`Copy2d`] shape, checked in Rust before any call.
//!
//! ```
//! use ascend::{Device, DeviceBuf, PinnedHostBuf};
//! use ascend::stream::{Event, Stream};
//! let device = Device::new(0)?;
//! let (upload, download) = (Stream::new(&device)?, Stream::new(&device)?);
//! let uploaded = Event::new(&device)?;
//! let input = PinnedHostBuf::from_slice(&device, &[3u32; 1024])?;
//! let mut output = PinnedHostBuf::<u32>::zeroed(&device, 1024)?;
//! let mut on_device = DeviceBuf::<u32>::zeroed(&device, 1024)?;
//! upload.scope(|s| {
//!     s.copy_to_device(&input, &mut on_device)?;
//!     s.record(&uploaded)
//! })?;
//! download.scope(|s| {
//!     s.wait_event(&uploaded)?; // ordered after the upload
//!     s.copy_to_host(&on_device, &mut output)
//! })?;
//! assert_eq!(&output[..], &input[..]);
//! # Ok::<(), ascend::Error>(())
//! ```

mod abort;
mod borrowed;
mod callback_thread;
mod cnt_notify;
mod completion;
mod copy2d;
mod destroy;
mod device_flag;
mod device_handle;
mod event;
mod event_flags;
mod failure_mode;
mod flags;
mod held;
mod host_fn;
mod ipc_event;
mod lengths;
mod notify;
mod notify_key;
mod ordered;
mod scope;
mod sides;
#[allow(clippy::module_inception)]
mod stream;
mod value_ops;

pub use borrowed::{BorrowedEvent, BorrowedStream};
pub use callback_thread::{CallbackBlock, CallbackThread};
pub use cnt_notify::{CntCondition, CntNotify, CntRecord};
pub use copy2d::Copy2d;
pub use device_flag::{DeviceFlag, ValueCondition};
pub use event::Event;
pub use event_flags::{RecordMode, WaitMode};
pub use failure_mode::FailureMode;
pub use flags::{EventFlags, StreamFlags, StreamPriority};
pub use held::{ScopedDevice, ScopedHost};
pub use ipc_event::{IpcEvent, IpcEventHandle};
pub use notify::Notify;
pub use notify_key::NotifyExportKey;
pub use ordered::{AsView, Ordered, OrderedMemory, OrderedView, OwnedView};
pub(crate) use ordered::{Carried, Carrier, Recycle, Settled, Tracks, UseGate, WHOLE, complete_all, wait_for};
pub use scope::AsyncScope;
pub use sides::{DeviceDest, DeviceSource, HostDest, HostSource};
pub use stream::Stream;
