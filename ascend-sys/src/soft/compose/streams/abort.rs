//! `aclrtStreamAbort` and `aclrtStreamStop`: ending a stream's work
//! without destroying the stream.

use super::task::Work;
use super::{lock, lookup_stream, target_stream};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;
use std::sync::Arc;

/// The stream a call of this file names: not NULL (`stream cannot be
/// NULL`: 107000, the runtime's check of the handle), a live handle
/// (107017), a current context (107002), a stream of the current device
/// (107003).
fn named_stream(api: &str, handle: usize) -> SoftResult<Arc<super::Stream>> {
    if handle == 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{api} needs a stream: NULL (the default stream) is not accepted"),
        );
    }
    let mut streams = lock()?;
    let explicit = lookup_stream(&streams, handle)?;
    let device = current::require()?;
    target_stream(&mut streams, explicit, device)
}

/// `aclrtStreamAbort`: the checks of [`named_stream`], then every task
/// queued on the stream and not started is dropped (it never runs); a wait
/// the worker is blocked in (for an event or a value) ends, and a task it
/// is running (a copy) finishes before the call returns, so no work
/// enqueued before the call touches memory afterwards. An event record
/// among the dropped tasks counts as reached (everything before it on the
/// stream has finished or will never run), so a query or a wait for it
/// completes, and a memory pool free's marker is set (its block may be
/// reused). Once the call returns, a synchronisation of the stream
/// succeeds at once for that work; the stream stays usable.
pub(crate) fn abort_stream(handle: usize) -> SoftResult {
    let stream = named_stream("aclrtStreamAbort", handle)?;
    let dropped = stream.abort_queued("aclrtStreamAbort");
    for task in &dropped {
        match &task.work {
            Work::Record { event, number } => event.reach(*number),
            // A pool free's marker: the block's earlier work on this stream
            // is over or never runs, so the block may be reused (as the
            // stop-on-failure skip does).
            Work::Signal { done } => done.store(true, std::sync::atomic::Ordering::Release),
            _ => {}
        }
        log::debug!("aclrtStreamAbort: {} dropped", task.describe());
    }
    // The dropped tasks (and the wait tickets they hold) go here, outside
    // every lock.
    drop(dropped);
    Ok(())
}

/// `aclrtStreamStop`: the checks of [`named_stream`], then 207000: the
/// runtime stops only streams created with `ACL_STREAM_DEVICE_USE_ONLY`,
/// which the software device cannot create (`aclrtCreateStreamWithConfig`
/// refuses the flag), so no stream it has can be stopped.
pub(crate) fn stop_stream(handle: usize) -> SoftResult {
    let stream = named_stream("aclrtStreamStop", handle)?;
    fail(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        format!(
            "{} was not created with ACL_STREAM_DEVICE_USE_ONLY: aclrtStreamStop stops only such streams",
            stream.name()
        ),
    )
}
