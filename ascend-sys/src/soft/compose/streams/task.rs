//! The work a stream runs.

use super::event::{Event, WaitTicket};
use super::notify::NotifyWork;
use super::queue::Stream;
use super::rows::{self, Rows};
use super::value;
use crate::soft::compose::copy;
use crate::soft::core::soft_result::{Failure, SoftResult};
use crate::types::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_SYS_DMA, ACL_ERROR_RT_WAIT_TIMEOUT};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a task does.
pub(crate) enum Work {
    /// `aclrtMemcpyAsync`.
    Copy { dst: usize, src: usize, count: usize },
    /// `aclrtMemsetAsync`.
    Fill { address: usize, value: u8, count: usize },
    /// `aclrtMemsetD32Async` on device memory: `count` 32-bit elements.
    Fill32 { address: usize, value: u32, count: usize },
    /// `aclrtMemcpy2dAsync`.
    Copy2d(Rows),
    /// `aclrtMemcpyBatchAsync(V2)`: `(dst, src, count)` copies, in order.
    CopyBatch(Vec<(usize, usize, usize)>),
    /// `aclrtMemcpyAsyncWithOffset`: `count` bytes from the address held at
    /// `src` plus `src_offset` to the address held at `dst` plus
    /// `dst_offset`, the addresses read when the task runs.
    CopyThrough {
        dst: usize,
        dst_offset: usize,
        src: usize,
        src_offset: usize,
        count: usize,
    },
    /// `aclrtMemcpyAsyncWithDesc`: the copy the descriptor at `desc` holds
    /// when the task runs.
    CopyDesc { desc: usize },
    /// `aclrtRecordEvent`: marks the record reached.
    Record { event: Arc<Event>, number: u64 },
    /// `aclrtStreamWaitEvent(WithTimeout)`: blocks the stream until the
    /// record is reached; with a `timeout` (counted from when the worker
    /// starts the wait), the task fails with `ACL_ERROR_RT_WAIT_TIMEOUT` once
    /// it passes.
    Wait {
        event: Arc<Event>,
        number: u64,
        timeout: Option<Duration>,
        /// Counts the wait as outstanding until the task is dropped.
        _ticket: WaitTicket,
    },
    /// `aclrtResetEvent`: the event forgets its records up to `through`.
    Reset { event: Arc<Event>, through: u64 },
    /// `aclrtValueWrite`: writes the 64-bit word at `address`.
    ValueWrite { address: usize, value: u64 },
    /// `aclrtValueWait`: blocks the stream until the 64-bit word at
    /// `address` compares with `value` as `flag` says.
    ValueWait { address: usize, value: u64, flag: u32 },
    /// `aclrtCmoAsync` and its variants: a cache maintenance operation
    /// (`op`, an `aclrtCmoType`) on `len` bytes at `address`; it moves
    /// nothing.
    Cache { address: usize, len: usize, op: u32 },
    /// `aclrtCmoWaitBarrier` for `count` barriers: it waits for nothing,
    /// the stream being in order.
    Barrier { count: usize },
    /// `aclrtMemManagedPrefetch(Batch)Async`: `ranges` managed ranges
    /// starting at `first`. Managed memory is one memory on the software
    /// device, so a prefetch moves nothing; it only takes its place in the
    /// stream's order.
    Prefetch { first: usize, ranges: usize },
    /// `aclrtLaunchCallback`, `aclrtLaunchHostFunc`: a call handed to the
    /// thread that runs the stream's callbacks when the worker reaches it.
    Callback(super::callbacks::Queued),
    /// A marker that sets `done` when the worker reaches it (the position
    /// of an `aclrtMemPoolFreeAsync`: the pool learns when it has run).
    Signal { done: Arc<AtomicBool> },
    /// A record, reset or wait of a notify or count notify.
    Notify(NotifyWork),
}

/// One task on a stream.
pub(crate) struct Task {
    /// The call that enqueued it.
    pub(crate) api: &'static str,
    pub(crate) work: Work,
    /// Pinned host ranges `[start, end)` it touches (for `aclrtFreeHost`).
    pub(crate) host: Vec<(usize, usize)>,
    /// Set when its host memory was freed before it ran.
    pub(crate) cancelled: bool,
    /// Its place on the stream (set on submission).
    pub(crate) number: u64,
    /// The stream's name (set on submission).
    pub(crate) stream: String,
}

impl Task {
    pub(crate) fn new(api: &'static str, work: Work, host: Vec<(usize, usize)>) -> Self {
        Self {
            api,
            work,
            host,
            cancelled: false,
            number: 0,
            stream: String::new(),
        }
    }

    pub(crate) fn record(event: Arc<Event>, number: u64) -> Self {
        Self::new("aclrtRecordEvent", Work::Record { event, number }, Vec::new())
    }

    pub(crate) fn wait(api: &'static str, event: Arc<Event>, number: u64, timeout: Option<Duration>) -> Self {
        let _ticket = WaitTicket::new(&event);
        Self::new(
            api,
            Work::Wait {
                event,
                number,
                timeout,
                _ticket,
            },
            Vec::new(),
        )
    }

    pub(crate) fn reset(event: Arc<Event>, through: u64) -> Self {
        Self::new("aclrtResetEvent", Work::Reset { event, through }, Vec::new())
    }

    /// Says what the task is, for messages.
    pub(crate) fn describe(&self) -> String {
        let what = match &self.work {
            Work::Copy { dst, src, count } => format!("a copy of {count} bytes from {src:#x} to {dst:#x}"),
            Work::Fill { address, value, count } => {
                format!("a memset of {count} bytes at {address:#x} to {value:#04x}")
            }
            Work::Fill32 { address, value, count } => {
                format!("a memset of {count} 32-bit elements at {address:#x} to {value:#010x}")
            }
            Work::Copy2d(Rows {
                dst,
                dpitch,
                src,
                spitch,
                width,
                height,
            }) => format!(
                "a 2-D copy of {height} rows of {width} bytes from {src:#x} (pitch {spitch}) to {dst:#x} (pitch {dpitch})"
            ),
            Work::CopyBatch(pieces) => format!(
                "a batch of {} copies ({} bytes in all)",
                pieces.len(),
                pieces.iter().map(|piece| piece.2).sum::<usize>()
            ),
            Work::CopyThrough {
                dst,
                dst_offset,
                src,
                src_offset,
                count,
            } => format!(
                "a copy of {count} bytes from the address at {src:#x} + {src_offset} to the address at {dst:#x} + {dst_offset}"
            ),
            Work::CopyDesc { desc } => format!("the copy of the descriptor at {desc:#x}"),
            Work::Record { event, number } => format!("record {number} of event {:#x}", event.handle),
            Work::Wait {
                event,
                number,
                timeout: None,
                ..
            } => format!("a wait for record {number} of event {:#x}", event.handle),
            Work::Wait {
                event,
                number,
                timeout: Some(timeout),
                ..
            } => format!(
                "a wait of at most {} s for record {number} of event {:#x}",
                timeout.as_secs(),
                event.handle
            ),
            Work::Reset { event, .. } => format!("a reset of event {:#x}", event.handle),
            Work::ValueWrite { address, value } => format!("a write of {value:#x} to the value at {address:#x}"),
            Work::ValueWait { address, value, flag } => {
                format!("a wait until {}", value::condition(*address, *value, *flag))
            }
            Work::Cache { address, len, op } => {
                format!("cache maintenance operation {op} on {len} bytes at {address:#x}")
            }
            Work::Barrier { count } => format!("a wait for {count} cache maintenance barriers"),
            Work::Prefetch { first, ranges } => {
                format!("a prefetch of {ranges} managed range(s) starting with {first:#x}")
            }
            Work::Signal { .. } => "a memory pool free".to_string(),
            Work::Callback(queued) => queued.describe(),
            Work::Notify(work) => work.describe(),
        };
        format!(
            "{} (task {} on {}, queued by {})",
            what, self.number, self.stream, self.api
        )
    }

    /// Skips the task because an earlier task of its stream failed and the
    /// stream is in `ACL_STOP_ON_FAILURE` mode: a record's marker is skipped
    /// (it never completes, and whoever waits for it keeps waiting, as on
    /// hardware; recorded as misuse), and the skip is logged.
    ///
    /// A memory pool free's marker is set, as if it had run: what it stands
    /// for is that the stream has passed the free, so no work of the stream
    /// uses the block any more. That holds here (the work before it ran or
    /// was skipped, and the work after it is skipped up to the
    /// synchronisation that reports the failure; work queued after that is
    /// ordered after the free anyway). Left unset, the block could never be
    /// reused on another stream or trimmed.
    pub(crate) fn skip_after_failure(&self) {
        match &self.work {
            Work::Record { event, number } => event.skip_record(*number),
            Work::Signal { done } => done.store(true, Ordering::Release),
            _ => {}
        }
        log::debug!(
            "{} skipped: an earlier task of the stream failed and it is in ACL_STOP_ON_FAILURE mode",
            self.describe()
        );
    }

    /// Runs the task on the worker. A failure (memory freed meanwhile, for
    /// instance) becomes `ACL_ERROR_RT_SYS_DMA`, the code a failed copy task
    /// reports on hardware, with the reason in the message.
    pub(crate) fn execute(&self, stream: &Stream) -> SoftResult {
        // Why the copies below are sound: device ranges are translated again
        // now; host ranges were checked at the call and stay valid until the
        // task has run by the caller's contract (the C API's rule for
        // asynchronous copies), and a pinned range freed meanwhile cancels
        // the task instead (`host_memory_freed`).
        let run = || match self.work {
            // SAFETY: see above.
            Work::Copy { dst, src, count } => unsafe { copy::copy_bytes(dst, src, count) },
            // SAFETY: see above.
            Work::Fill { address, value, count } => unsafe { copy::fill_bytes(address, value, count) },
            // SAFETY: see above.
            Work::Fill32 { address, value, count } => unsafe { copy::fill_u32(address, value, count) },
            // SAFETY: see above.
            Work::Copy2d(geometry) => unsafe { rows::copy_rows(geometry) },
            Work::CopyBatch(ref pieces) => pieces
                .iter()
                // SAFETY: see above.
                .try_for_each(|&(dst, src, count)| unsafe { copy::copy_bytes(dst, src, count) }),
            Work::CopyThrough {
                dst,
                dst_offset,
                src,
                src_offset,
                count,
            } => super::indirect::run_through(dst, dst_offset, src, src_offset, count),
            Work::CopyDesc { desc } => super::indirect::run_desc(desc),
            Work::Record { ref event, number } => {
                event.reach(number);
                Ok(())
            }
            Work::Wait {
                ref event,
                number,
                timeout,
                ..
            } => {
                let give_up = || stream.given_up(self.number, true);
                let deadline = timeout.map(|timeout| Instant::now() + timeout);
                if event.wait_reached_unless(number, Some(&self.describe()), &give_up, deadline) {
                    Ok(())
                } else {
                    Err(Failure {
                        code: ACL_ERROR_RT_WAIT_TIMEOUT,
                        message: format!("record {number} of event {:#x} was not reached in time", event.handle),
                    })
                }
            }
            Work::Reset { ref event, through } => {
                event.reset(through);
                Ok(())
            }
            Work::ValueWrite { address, value } => value::write(address, value),
            Work::ValueWait { address, value, flag } => {
                value::wait(stream, self, address, value, flag);
                Ok(())
            }
            Work::Cache { .. } | Work::Barrier { .. } => Ok(()),
            Work::Prefetch { .. } => Ok(()),
            Work::Signal { ref done } => {
                done.store(true, Ordering::Release);
                Ok(())
            }
            Work::Callback(ref queued) => {
                super::callbacks::reach(stream, self, queued);
                Ok(())
            }
            Work::Notify(ref work) => work.run(stream, self.number, &self.describe()),
        };
        // A panic (a bug) must not kill the worker and leave every later
        // synchronisation of the stream waiting forever.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
            Err(Failure {
                code: ACL_ERROR_RT_INTERNAL_ERROR,
                message: "the software device's worker panicked".into(),
            })
        });
        // A timed-out wait keeps its own code; the other failures are copies'.
        let timed_out = |failure: &Failure| failure.code == ACL_ERROR_RT_WAIT_TIMEOUT;
        outcome.map_err(|failure| Failure {
            code: if timed_out(&failure) {
                ACL_ERROR_RT_WAIT_TIMEOUT
            } else {
                ACL_ERROR_RT_SYS_DMA
            },
            message: format!(
                "{} failed on the device: {} (error {})",
                self.describe(),
                failure.message,
                failure.code
            ),
        })
    }
}
