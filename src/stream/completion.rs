//! Proving that a stream's queued work has finished before the memory it
//! uses is released: the crate's failure model for asynchronous work.
//!
//! A synchronisation can fail for two different reasons: a queued task
//! failed (the runtime reports that once, to the first synchronisation after
//! it, and the stream is drained), or the synchronisation itself could not
//! be carried out (a timeout, a device fault, a refused call). Only in the
//! first case is the work known to be finished. So a failed synchronisation
//! is retried on the stream, then escalated to the stream's device
//! (`aclrtSynchronizeDevice`, which waits for every stream of the device);
//! the work is proven finished as soon as one of these succeeds.
//!
//! What happens when nothing succeeds depends on who holds the memory:
//! - **Scoped work** ([`Stream::scope`]) cannot keep its borrows past its
//!   end, and ending them would let the host free or reuse memory the
//!   device may still write: the process aborts, naming the stream and the
//!   errors ([`Stream::complete_or_abort`]).
//! - **Owned work** ([`Ordered`](super::Ordered)) leaks the memory it owns
//!   (never frees it) and returns or logs the error. Leaking is safe; a
//!   use-after-free is not.

use super::stream::Stream;
use crate::error::{Error, Result};

/// What [`Stream::complete`] found out.
#[derive(Debug)]
pub(crate) enum Completion {
    /// Every queued task has finished. The result is the first
    /// synchronisation's: an error there reports a failed task (or a failed
    /// first attempt), although the work is done.
    Finished(Result<()>),
    /// No synchronisation succeeded: queued work may still be running.
    Unproven {
        /// The first attempt's error.
        first: Error,
        /// The later attempts' errors, in order.
        later: Vec<Error>,
    },
}

impl Completion {
    /// Every attempt's error, joined for a message.
    pub(crate) fn describe(first: &Error, later: &[Error]) -> String {
        std::iter::once(first)
            .chain(later)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Stream {
    /// Waits for the work queued on this stream and says whether it is
    /// proven finished: the stream is synchronised, again if that fails,
    /// then its device; the first success proves it.
    pub(crate) fn complete(&self) -> Completion {
        let first = match self.synchronize() {
            Ok(()) => return Completion::Finished(Ok(())),
            Err(error) => error,
        };
        let again = match self.synchronize() {
            Ok(()) => return Completion::Finished(Err(first)),
            Err(error) => error,
        };
        log::warn!(
            "stream {:?}: synchronisation failed twice ({first}; {again}); synchronising device {}",
            self.as_raw(),
            self.device().id()
        );
        match self.device().synchronize() {
            Ok(()) => Completion::Finished(Err(first)),
            Err(device) => Completion::Unproven {
                first,
                later: vec![again, device],
            },
        }
    }

    /// [`Stream::complete`] for memory that borrows cannot keep: returns the
    /// first synchronisation's result once the work is proven finished, and
    /// aborts the process when it cannot be (see the module docs).
    pub(crate) fn complete_or_abort(&self, context: &str) -> Result<()> {
        match self.complete() {
            Completion::Finished(result) => result,
            Completion::Unproven { first, later } => abort_unproven(self, context, &first, &later),
        }
    }
}

/// Ends the process: `context` held borrows of memory that queued work on
/// `stream` may still use, and no synchronisation could prove it finished.
fn abort_unproven(stream: &Stream, context: &str, first: &Error, later: &[Error]) -> ! {
    let attempts = Completion::describe(first, later);
    let message = format!(
        "ascend: aborting: {context} on stream {:?} (device {}) cannot prove its queued work finished, and ending \
         its borrows would let the device write freed memory. Attempts: {}",
        stream.as_raw(),
        stream.device().id(),
        attempts
    );
    log::error!("{message}");
    eprintln!("{message}");
    std::process::abort()
}
