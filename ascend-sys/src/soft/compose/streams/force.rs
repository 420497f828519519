//! `aclrtDestroyStreamForce`: destroying a stream without waiting for its
//! queued work.

use super::task::Work;
use super::{join_destroyed, take_for_destruction};
use crate::soft::check::misuse_log;
use crate::soft::core::soft_result::SoftResult;

/// The call's name, as recorded in the misuse list.
const API: &str = "aclrtDestroyStreamForce";

/// `aclrtDestroyStreamForce`: the checks of `aclrtDestroyStream` (NULL →
/// 100000, unknown → 107017, no context → 107002, another device's stream
/// → 107003), then, without waiting, every queued task is dropped (each
/// recorded in [`crate::soft::check::misuse_log`], since work the program queued will
/// never run). A task the worker is running finishes, except a wait (for an
/// event or a value), which ends at once, also recorded. Streams waiting
/// for an event record that was dropped stop waiting (recorded when they
/// do). The worker is joined before the call returns, so nothing of the
/// stream touches memory afterwards.
pub(crate) fn destroy_stream_force(handle: usize) -> SoftResult {
    let entry = take_for_destruction(handle)?;
    let dropped = entry.stream.drop_queued(API);
    for task in &dropped {
        if let Work::Record { event, number } = &task.work {
            event.drop_record(*number, API);
        }
        misuse_log::record(
            API,
            format!(
                "{} dropped: its stream was destroyed by force before it ran",
                task.describe()
            ),
        );
    }
    let stream = std::sync::Arc::clone(&entry.stream);
    super::callbacks::forget_stream(stream.id, API);
    let joined = join_destroyed(entry, handle);
    stream.finish_all();
    crate::soft::check::sanitize::stream_destroyed(stream.site());
    joined
}
