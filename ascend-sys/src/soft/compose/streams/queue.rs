//! One stream: its FIFO of tasks, the worker that runs them, and
//! synchronisation with it.

use super::event::Event;
use super::task::{Task, Work};
use super::value::BlockedOn;
use crate::soft::check::misuse_log;
use crate::soft::check::sanitize;
use crate::soft::core::soft_result::{Failure, SoftResult, fail};
use crate::types::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// What the worker is running now.
struct Running {
    number: u64,
    host: Vec<(usize, usize)>,
    /// The event a running `aclrtStreamWaitEvent` task waits for (woken to
    /// give up when the stream is destroyed by force).
    event: Option<Arc<Event>>,
}

/// Waits that must end without their condition: the tasks numbered up to
/// `through`, because of `api`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GiveUp {
    /// The call that ends them (`aclrtDestroyStreamForce`, `aclrtResetDevice`).
    pub(crate) api: &'static str,
    pub(crate) through: u64,
    /// Event waits too (a forced destruction), not only value waits.
    pub(crate) events: bool,
}

/// The stream's state behind its lock.
#[derive(Default)]
struct Queue {
    tasks: VecDeque<Task>,
    /// Number of the last task enqueued (tasks are numbered from 1).
    submitted: u64,
    /// Every task numbered up to this one has run or was skipped.
    finished: u64,
    running: Option<Running>,
    /// The first task failure since the last synchronisation.
    failure: Option<Failure>,
    /// Set by `aclrtDestroyStream`: the worker ends once the queue is empty.
    closing: bool,
    /// Waits to give up (see [`GiveUp`]).
    give_up: Option<GiveUp>,
    /// The value wait the worker is blocked in, if any.
    blocked: Option<BlockedOn>,
    /// `aclrtSetStreamFailureMode(ACL_STOP_ON_FAILURE)`: while a task
    /// failure is pending (not yet reported by a synchronisation), later
    /// tasks are skipped.
    stop_on_failure: bool,
    /// How many `aclrtStreamAbort` calls are running: while any is, the
    /// worker starts no task, and the tasks enqueued meanwhile are dropped
    /// too.
    aborting: u32,
}

/// A stream: tasks run in the order they were enqueued, one at a time, on
/// the stream's own worker thread.
pub(crate) struct Stream {
    /// The device the stream belongs to.
    pub(crate) device: i32,
    /// The handle callers hold (0 for a default stream).
    pub(crate) handle: usize,
    /// Its number among every stream of the process (never reused).
    pub(crate) id: u64,
    /// Its priority (0 the highest, 7 the lowest), as created.
    pub(crate) priority: u32,
    /// The `ACL_STREAM_*` flags it was created with that the software device
    /// keeps (0 for a default stream).
    pub(crate) flags: u32,
    queue: Mutex<Queue>,
    /// Signalled whenever a task is enqueued or finishes.
    changed: Condvar,
}

impl Stream {
    pub(crate) fn new(device: i32, handle: usize, id: u64, priority: u32, flags: u32) -> Self {
        Self {
            device,
            handle,
            id,
            priority,
            flags,
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        self.changed
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The stream, as the sanitizer names it.
    pub(crate) fn site(&self) -> sanitize::Site {
        sanitize::Site {
            actor: self.id,
            device: self.device,
            handle: self.handle,
        }
    }

    /// Names the stream in messages.
    pub(crate) fn name(&self) -> String {
        if self.handle == 0 {
            format!("the default stream of device {}", self.device)
        } else {
            format!("stream {:#x}", self.handle)
        }
    }

    /// Enqueues `task`; it runs after every task enqueued before it.
    pub(crate) fn submit(&self, mut task: Task) {
        let mut queue = self.lock();
        queue.submitted += 1;
        task.number = queue.submitted;
        task.stream = self.name();
        queue.tasks.push_back(task);
        drop(queue);
        self.changed.notify_all();
    }

    /// Tasks enqueued and not yet finished.
    pub(crate) fn backlog(&self) -> u64 {
        let queue = self.lock();
        queue.submitted - queue.finished
    }

    /// Waits until every task enqueued before the call has finished (or the
    /// deadline passes: `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`), then returns and
    /// clears the first task failure.
    pub(crate) fn synchronize(&self, deadline: Option<Instant>) -> SoftResult {
        let mut queue = self.lock();
        let target = queue.submitted;
        while queue.finished < target {
            queue = match deadline {
                None => self.wait(queue),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        let blocked = queue
                            .blocked
                            .map(|blocked| format!("; it is blocked in {blocked}"))
                            .unwrap_or_default();
                        return fail(
                            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                            format!(
                                "{} still has {} unfinished task(s) when the timeout expired{blocked}",
                                self.name(),
                                target - queue.finished
                            ),
                        );
                    }
                    self.changed
                        .wait_timeout(queue, deadline - now)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0
                }
            };
        }
        queue.failure.take().map_or(Ok(()), Err)
    }

    /// Waits until task `number` has finished.
    pub(crate) fn wait_finished(&self, number: u64) {
        let mut queue = self.lock();
        while queue.finished < number {
            queue = self.wait(queue);
        }
    }

    /// Takes the pending failure, if any.
    pub(crate) fn take_failure(&self) -> Option<Failure> {
        self.lock().failure.take()
    }

    /// Asks the worker to end once every queued task has run.
    pub(crate) fn close(&self) {
        self.lock().closing = true;
        self.changed.notify_all();
    }

    /// Why the wait that is task `number` must end without its condition
    /// (`events`: it waits for an event, not a value), if it must.
    pub(crate) fn given_up(&self, number: u64, events: bool) -> Option<&'static str> {
        self.lock()
            .give_up
            .filter(|give_up| number <= give_up.through && (give_up.events || !events))
            .map(|give_up| give_up.api)
    }

    /// Ends every value wait enqueued so far, because of `api` (the other
    /// tasks still run).
    pub(crate) fn give_up_value_waits(&self, api: &'static str) {
        let mut queue = self.lock();
        let through = queue.submitted;
        queue.give_up = Some(GiveUp {
            api,
            through,
            events: false,
        });
        drop(queue);
        super::value::wake_waiters();
    }

    /// Notes the value wait the worker is blocked in (`None`: it no longer
    /// is).
    pub(crate) fn set_blocked(&self, blocked: Option<BlockedOn>) {
        self.lock().blocked = blocked;
    }

    /// The value wait the worker is blocked in, if any.
    pub(crate) fn blocked(&self) -> Option<BlockedOn> {
        self.lock().blocked
    }

    /// Whether the stream is in `ACL_STOP_ON_FAILURE` mode.
    pub(crate) fn stops_on_failure(&self) -> bool {
        self.lock().stop_on_failure
    }

    /// Puts the stream in `ACL_STOP_ON_FAILURE` mode (the caller has checked
    /// the change is allowed).
    pub(crate) fn stop_on_failure(&self) {
        self.lock().stop_on_failure = true;
    }

    /// `aclrtDestroyStreamForce`: takes every queued task out (they will
    /// never run), makes the worker end after the task it is running, and
    /// ends a wait it is blocked in. Returns the dropped tasks.
    pub(crate) fn drop_queued(&self, api: &'static str) -> Vec<Task> {
        let mut queue = self.lock();
        let dropped: Vec<Task> = queue.tasks.drain(..).collect();
        queue.closing = true;
        queue.give_up = Some(GiveUp {
            api,
            through: u64::MAX,
            events: true,
        });
        let event = queue.running.as_ref().and_then(|running| running.event.clone());
        drop(queue);
        self.changed.notify_all();
        if let Some(event) = event {
            event.wake();
        }
        super::value::wake_waiters();
        dropped
    }

    /// `aclrtStreamAbort`: takes every queued task out (they will never
    /// run), ends a wait the worker is blocked in, waits until the task it
    /// is running (a copy finishes) is over, then counts every task
    /// enqueued before the call finished, so a synchronisation or a query
    /// says complete. Tasks enqueued while the call runs are dropped too.
    /// The stream stays usable: the worker keeps running, and tasks
    /// enqueued after the call run as usual. Returns the dropped tasks.
    pub(crate) fn abort_queued(&self, api: &'static str) -> Vec<Task> {
        let mut queue = self.lock();
        // A count, not a flag: with two aborts at once, the worker starts
        // nothing until the last one has counted what it dropped.
        queue.aborting += 1;
        let mut dropped: Vec<Task> = queue.tasks.drain(..).collect();
        queue.give_up = Some(GiveUp {
            api,
            through: u64::MAX,
            events: true,
        });
        let running = queue
            .running
            .as_ref()
            .map(|running| (running.number, running.event.clone()));
        drop(queue);
        self.changed.notify_all();
        if let Some((number, event)) = running {
            if let Some(event) = event {
                event.wake();
            }
            super::value::wake_waiters();
            self.wait_finished(number);
        }
        // Tasks enqueued during the call do not take effect either (on
        // hardware, their submission fails while the abort runs).
        let mut queue = self.lock();
        dropped.extend(queue.tasks.drain(..));
        let through = queue.submitted;
        queue.finished = queue.finished.max(through);
        queue.give_up = Some(GiveUp {
            api,
            through,
            events: true,
        });
        queue.aborting = queue.aborting.saturating_sub(1);
        drop(queue);
        self.changed.notify_all();
        dropped
    }

    /// Marks every task enqueued so far finished (those dropped by
    /// [`Stream::drop_queued`] never run), once the worker has ended.
    pub(crate) fn finish_all(&self) {
        let mut queue = self.lock();
        queue.finished = queue.submitted;
        drop(queue);
        self.changed.notify_all();
    }

    /// Cancels the queued tasks that use host memory in `[start, end)`;
    /// returns their descriptions, and the number of the task running on
    /// that memory right now, if any.
    pub(crate) fn cancel_host_users(&self, start: usize, end: usize) -> (Vec<String>, Option<u64>) {
        let overlaps = |ranges: &[(usize, usize)]| ranges.iter().any(|&(from, to)| from < end && start < to);
        let mut queue = self.lock();
        let mut cancelled = Vec::new();
        for task in queue.tasks.iter_mut().filter(|task| !task.cancelled) {
            if overlaps(&task.host) {
                task.cancelled = true;
                cancelled.push(task.describe());
            }
        }
        let busy = queue
            .running
            .as_ref()
            .filter(|running| overlaps(&running.host))
            .map(|running| running.number);
        (cancelled, busy)
    }
}

/// The worker loop: runs the stream's tasks in order until the stream is
/// closed and its queue is empty.
pub(crate) fn run(stream: &Stream) {
    loop {
        let (task, stopped) = {
            let mut queue = stream.lock();
            let task = loop {
                if queue.aborting == 0 {
                    if let Some(task) = queue.tasks.pop_front() {
                        break task;
                    }
                    if queue.closing {
                        return;
                    }
                }
                queue = stream.wait(queue);
            };
            // Stop mode: a failure is pending, so this task does not run.
            let stopped = !task.cancelled && queue.stop_on_failure && queue.failure.is_some();
            if !task.cancelled && !stopped {
                let event = match &task.work {
                    Work::Wait { event, .. } => Some(Arc::clone(event)),
                    _ => None,
                };
                queue.running = Some(Running {
                    number: task.number,
                    host: task.host.clone(),
                    event,
                });
            }
            (task, stopped)
        };
        let outcome = if stopped {
            task.skip_after_failure();
            Ok(())
        } else if task.cancelled {
            misuse_log::record(
                task.api,
                format!(
                    "{} skipped: its host memory was freed by aclrtFreeHost before it ran",
                    task.describe()
                ),
            );
            Ok(())
        } else {
            task.execute(stream)
        };
        if let Err(failure) = &outcome {
            super::faulted_devices::task_failed(stream.device, failure);
        }
        // The task (and its event's wait ticket) goes before it is
        // published as finished: whoever sees the stream done then sees
        // its waits done too (`aclrtQueryEventWaitStatus`). Outside the
        // queue lock, as a ticket takes the event's records lock.
        let number = task.number;
        drop(task);
        let mut queue = stream.lock();
        queue.running = None;
        // `max`: `aclrtStreamAbort` may have counted later tasks finished.
        queue.finished = queue.finished.max(number);
        if let Err(failure) = outcome
            && queue.failure.is_none()
        {
            queue.failure = Some(failure);
        }
        drop(queue);
        stream.changed.notify_all();
    }
}
