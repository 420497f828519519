//! [`CallbackThread`]: a thread subscribed to a stream's callbacks
//! (`aclrtSubscribeReport`, `aclrtProcessReport`, `aclrtUnSubscribeReport`)
//! that runs the closures queued with `aclrtLaunchCallback`.

use super::host_fn::{into_raw, leak_refused, run_job};
use super::stream::Stream;
use crate::error::{Error, Result, check};
use ascend_sys as sys;
use std::os::unix::thread::JoinHandleExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// How long one `aclrtProcessReport` of the thread waits, in milliseconds
/// (it looks whether to stop between two waits).
const POLL_MS: i32 = 50;

/// Whether the work queued after a callback waits for it.
///
/// ```
/// use ascend::{Device, DeviceBuf, Stream};
/// use ascend::stream::{CallbackBlock, CallbackThread};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let callbacks = CallbackThread::new(&stream)?;
/// // NoBlock: the stream goes on while the callback runs (here: logs).
/// callbacks.launch(CallbackBlock::NoBlock, || log::info!("reached"))?;
/// // Block: the work queued after it waits until it returns.
/// callbacks.launch(CallbackBlock::Block, || {})?;
/// assert_ne!(CallbackBlock::Block, CallbackBlock::NoBlock);
/// callbacks.finish()?;
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallbackBlock {
    /// The stream goes on while the callback runs (`ACL_CALLBACK_NO_BLOCK`).
    NoBlock,
    /// The work queued after the callback waits until it has returned
    /// (`ACL_CALLBACK_BLOCK`).
    Block,
}

/// A thread of this process that runs the callbacks of one stream, for
/// those who want the report-thread form of stream callbacks
/// ([`Stream::launch_host_fn`] needs no thread of yours). It subscribes
/// itself on creation and, on drop, waits for the stream, unsubscribes and
/// ends (best effort, failures logged; [`CallbackThread::finish`] returns
/// them). It borrows the stream, so the stream outlives the subscription.
///
/// ```
/// use ascend::{Device, Stream};
/// use ascend::stream::{CallbackBlock, CallbackThread};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let reached = Arc::new(AtomicUsize::new(0));
/// let callbacks = CallbackThread::new(&stream)?;
/// let seen = Arc::clone(&reached);
/// callbacks.launch(CallbackBlock::Block, move || {
///     seen.fetch_add(1, Ordering::SeqCst);
/// })?;
/// callbacks.finish()?; // waits for the stream, then unsubscribes
/// assert_eq!(reached.load(Ordering::SeqCst), 1);
/// # Ok::<(), ascend::Error>(())
/// ```
#[doc(alias = "aclrtSubscribeReport")]
#[doc(alias = "aclrtProcessReport")]
#[doc(alias = "aclrtUnSubscribeReport")]
pub struct CallbackThread<'s> {
    stream: &'s Stream,
    thread_id: u64,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for CallbackThread<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackThread")
            .field("thread_id", &self.thread_id)
            .finish_non_exhaustive()
    }
}

impl<'s> CallbackThread<'s> {
    /// Starts a thread and subscribes it to `stream`'s callbacks
    /// (`aclrtSubscribeReport`).
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::CallbackThread};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let callbacks = CallbackThread::new(&stream)?;
    /// drop(callbacks); // unsubscribes
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The thread cannot start ([`Error::External`]), or the runtime refuses the
    /// subscription: `ACL_ERROR_RT_STREAM_SUBSCRIBE` when another thread
    /// serves the stream, or when [`Stream::launch_host_fn`] was used on it.
    #[doc(alias = "aclrtSubscribeReport")]
    pub fn new(stream: &'s Stream) -> Result<Self> {
        stream.device().make_current()?;
        let stop = Arc::new(AtomicBool::new(false));
        let device = stream.device().clone();
        let stopping = Arc::clone(&stop);
        let worker = std::thread::Builder::new()
            .name("ascend-callbacks".into())
            .spawn(move || serve(&device, &stopping))
            .map_err(|error| Error::external("starting a callback thread", error))?;
        // `pthread_t` is 64 bits on 64-bit Linux and 32 on some targets.
        #[allow(clippy::unnecessary_cast)]
        let thread_id = worker.as_pthread_t() as u64;
        // SAFETY: the handle is live (borrowed for `'s`); no pointers.
        let subscribed = check("aclrtSubscribeReport", unsafe {
            sys::aclrtSubscribeReport(thread_id, stream.as_raw())
        });
        let mut this = Self {
            stream,
            thread_id,
            stop,
            worker: Some(worker),
        };
        if let Err(error) = subscribed {
            this.end_thread();
            return Err(error);
        }
        Ok(this)
    }

    /// Queues `f` on the stream (`aclrtLaunchCallback`): this thread runs
    /// it once the work queued before it has finished; with
    /// [`CallbackBlock::Block`], the work queued after it waits for it. A
    /// panic in `f` is contained and logged.
    ///
    /// ```
    /// use ascend::{Device, Stream};
    /// use ascend::stream::{CallbackBlock, CallbackThread};
    /// use std::sync::mpsc;
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let callbacks = CallbackThread::new(&stream)?;
    /// let (tx, rx) = mpsc::channel();
    /// callbacks.launch(CallbackBlock::NoBlock, move || tx.send(()).unwrap())?;
    /// rx.recv().unwrap();
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's refusal (`f` is then leaked without running, as
    /// [`Stream::launch_host_fn`] says).
    #[doc(alias = "aclrtLaunchCallback")]
    pub fn launch(&self, block: CallbackBlock, f: impl FnOnce() + Send + 'static) -> Result<()> {
        self.stream.device().make_current()?;
        let block_type = match block {
            CallbackBlock::NoBlock => sys::ACL_CALLBACK_NO_BLOCK,
            CallbackBlock::Block => sys::ACL_CALLBACK_BLOCK,
        };
        let data = into_raw(f);
        // SAFETY: the stream is live and served by this thread; `run_job`
        // takes `data` back exactly once, when the runtime calls it.
        let launched = check("aclrtLaunchCallback", unsafe {
            sys::aclrtLaunchCallback(Some(run_job), data, block_type, self.stream.as_raw())
        });
        if launched.is_err() {
            leak_refused(data, "aclrtLaunchCallback");
        }
        launched
    }

    /// Waits for the stream, with a blocking no-op queued last (so every
    /// queued callback has run, `NoBlock` ones too), then
    /// unsubscribes (`aclrtUnSubscribeReport`) and ends the thread.
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::CallbackThread};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// CallbackThread::new(&stream)?.finish()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The stream's synchronisation or the unsubscription failed (the
    /// thread ends either way).
    #[doc(alias = "aclrtUnSubscribeReport")]
    pub fn finish(mut self) -> Result<()> {
        self.end()
    }

    fn end(&mut self) -> Result<()> {
        if self.worker.is_none() {
            return Ok(());
        }
        // A blocking no-op last: the stream waits for it, so once
        // synchronised every callback before it has been handed to this
        // thread and run (a `NoBlock` one alone would not hold the stream).
        // From one of its own callbacks it cannot wait for the stream (the
        // stream would wait for this very thread): it only unsubscribes,
        // and the callbacks still queued are dropped by the runtime.
        let on_itself = self
            .worker
            .as_ref()
            .is_some_and(|worker| worker.thread().id() == std::thread::current().id());
        let synchronized = if on_itself {
            Ok(())
        } else {
            let drained = self.launch(CallbackBlock::Block, || {});
            drained.and(self.stream.synchronize())
        };
        // SAFETY: the handle is live (borrowed); no pointers.
        let unsubscribed = check("aclrtUnSubscribeReport", unsafe {
            sys::aclrtUnSubscribeReport(self.thread_id, self.stream.as_raw())
        });
        self.end_thread();
        synchronized.and(unsubscribed)
    }

    fn end_thread(&mut self) {
        self.stop.store(true, Ordering::Release);
        let Some(worker) = self.worker.take() else {
            return;
        };
        // Ended by one of its own callbacks: it stops after this callback
        // returns; joining itself would fail.
        if worker.thread().id() == std::thread::current().id() {
            return;
        }
        if worker.join().is_err() {
            log::error!("the callback thread panicked");
        }
    }
}

impl Drop for CallbackThread<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.end() {
            log::warn!("ending a callback thread: {error}");
        }
    }
}

/// The thread's loop: runs the callbacks handed to it until told to stop.
fn serve(device: &crate::Device, stop: &AtomicBool) {
    if let Err(error) = device.make_current() {
        log::error!("the callback thread cannot make its device current: {error}");
    }
    while !stop.load(Ordering::Acquire) {
        // SAFETY: no pointers.
        match unsafe { sys::aclrtProcessReport(POLL_MS) } {
            sys::ACL_SUCCESS | sys::ACL_ERROR_RT_REPORT_TIMEOUT => {}
            // Not subscribed yet (or any more): look again shortly.
            _ => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}
