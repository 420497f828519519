//! Host functions on a stream (`aclrtLaunchHostFunc`): a Rust closure that
//! runs on the host when the stream reaches it, holding back the work
//! queued after it until it returns.

use super::stream::Stream;
use crate::error::{Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A closure handed to the runtime, boxed twice so it travels as one thin
/// pointer.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Boxes `f` for the runtime: the pointer [`run_job`] takes back.
pub(crate) fn into_raw(f: impl FnOnce() + Send + 'static) -> *mut c_void {
    let job: Job = Box::new(f);
    Box::into_raw(Box::new(job)).cast()
}

/// A job whose launch `api` refused: leaked, not freed. A runtime that
/// returned an error may still have queued the call (nothing in its
/// contract says a failed launch never runs), and freeing the closure then
/// would let `run_job` read freed memory; leaking it is safe. Its captures
/// (a staging buffer, a channel's sender) are not dropped either, so the
/// error is logged with what it costs.
pub(crate) fn leak_refused(data: *mut c_void, api: &str) {
    log::warn!(
        "{api} failed: its closure ({data:p}) is leaked, not dropped, in case the runtime still calls it; \
         what it captured stays alive"
    );
}

/// The C function the runtime calls: runs the job once. A panic is
/// contained here (it must never unwind into C) and logged.
pub(crate) unsafe extern "C" fn run_job(data: *mut c_void) {
    // SAFETY: the runtime calls this once with the pointer `into_raw` made
    // for the launch that queued it.
    let job = unsafe { Box::from_raw(data.cast::<Job>()) };
    IN_CALLBACK.with(|depth| depth.set(depth.get() + 1));
    let outcome = catch_unwind(AssertUnwindSafe(job));
    IN_CALLBACK.with(|depth| depth.set(depth.get().saturating_sub(1)));
    if let Err(payload) = outcome {
        // Dropping the payload could panic again (its own `Drop`), and a
        // panic must not unwind into C: leak it.
        std::mem::forget(payload);
        log::error!("a stream callback panicked; the panic was contained and the stream goes on");
    }
}

thread_local! {
    /// How many stream callbacks or host functions this thread is running.
    static IN_CALLBACK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether this thread is running a stream callback or host function (of
/// this crate): a stream destroyed here could not wait for its queued work,
/// which this very call holds back.
pub(crate) fn in_stream_callback() -> bool {
    IN_CALLBACK.with(std::cell::Cell::get) > 0
}

impl Stream {
    /// Queues `f` to run on the host when the stream reaches this point
    /// (`aclrtLaunchHostFunc`): after all the work queued before it has
    /// finished, and before any work queued after it starts (the stream
    /// waits for `f` to return). The runtime runs it on a thread of its
    /// own, with the stream's device current. A panic in `f` is contained
    /// and logged through `log`; it never reaches the runtime.
    ///
    /// A typical use is to give a staging buffer back, or to mark a
    /// transfer done, once the stream is past the work that used it:
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};
    /// use std::sync::{Arc, Mutex, mpsc};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let free_staging: Arc<Mutex<Vec<PinnedHostBuf<u32>>>> = Arc::default();
    /// let staging = PinnedHostBuf::from_slice(&device, &[7u32; 256])?;
    /// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 256)?;
    /// stream.scope(|s| s.copy_to_device(&staging, &mut on_device))?;
    /// let (done, transfer_done) = mpsc::channel();
    /// let pool = Arc::clone(&free_staging);
    /// stream.launch_host_fn(move || {
    ///     pool.lock().unwrap().push(staging); // the buffer goes back for reuse
    ///     let _ = done.send("uploaded");      // and whoever waits hears of it
    /// })?;
    /// assert_eq!(transfer_done.recv().unwrap(), "uploaded");
    /// stream.synchronize()?;
    /// assert_eq!(free_staging.lock().unwrap().len(), 1);
    /// assert_eq!(on_device.to_vec()?, [7; 256]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's refusal, for example `ACL_ERROR_RT_STREAM_SUBSCRIBE`
    /// when a [`CallbackThread`] serves this stream: the two ways of running
    /// host code cannot be mixed on one stream. `f` is then leaked, not
    /// dropped (logged): a runtime that returned an error might still call
    /// it, and a freed closure would then be read; what it captured stays
    /// alive.
    ///
    /// [`CallbackThread`]: super::CallbackThread
    #[doc(alias = "aclrtLaunchHostFunc")]
    pub fn launch_host_fn(&self, f: impl FnOnce() + Send + 'static) -> Result<()> {
        self.device().make_current()?;
        let data = into_raw(f);
        // SAFETY: the handle is live (owned by `self`); `run_job` takes
        // `data` back exactly once, when the runtime calls it.
        let launched = check("aclrtLaunchHostFunc", unsafe {
            sys::aclrtLaunchHostFunc(self.as_raw(), Some(run_job), data)
        });
        if launched.is_err() {
            leak_refused(data, "aclrtLaunchHostFunc");
        }
        launched
    }
}
