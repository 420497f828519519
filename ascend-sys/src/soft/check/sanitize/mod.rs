//! The stream-hazard sanitizer: finds, deterministically, the ordering bugs
//! that hardware turns into wrong numbers now and then.
//!
//! Off by default. When on ([`start_sanitizer`], or the environment variable
//! [`ENV_SANITIZE`]), the software device keeps:
//!
//! - **happens-before**: a vector clock per stream and one for the host.
//!   Queuing work orders it after everything the host did before the call
//!   and after the stream's earlier work; `aclrtRecordEvent` gives the
//!   event the stream's clock; `aclrtStreamWaitEvent` gives the stream the
//!   event's; the host learns a stream's or an event's clock when it
//!   synchronises with it (`aclrtSynchronizeStream`, `…Event`, `…Device`,
//!   a query that says complete, a stream's destruction).
//! - **shadow memory**: for each run of device memory, pinned host memory
//!   and registered host memory a program touches, the last write and the
//!   reads since, each with its actor and clock, in an interval map keyed
//!   by the bytes behind the address (so two mappings of one physical
//!   allocation share their history).
//!
//! It reports, into the misuse list ([`crate::soft::check::misuse_log`]):
//!
//! - [`Checks::RACE`]: two accesses to the same bytes, at least one a
//!   write, from two streams (or a stream and a synchronous call of the
//!   host, or a free) with nothing ordering them;
//! - [`Checks::INIT`]: a read of device bytes nothing wrote since they were
//!   allocated (`aclrtMalloc*`, `aclrtMallocPhysical`);
//! - [`Checks::SYNC`]: synchronisation that orders nothing although the
//!   runtime accepts it (waiting for, or synchronising with, an event never
//!   recorded).
//!
//! Each report names both operations (call, stream, device, address range),
//! the clocks, and the call that would have ordered them. Its checks run
//! when work is queued, not when it runs, so a report does not depend on
//! timing. What it does not see: kernels (the software device runs none),
//! and the host's own loads and stores through pointers to pinned memory.
//!
//! ```
//! use ascend_sys::*;
//! select_backend(BackendRequest::Software).unwrap();
//! soft::start_sanitizer(soft::Checks::RACE);
//! let watch = soft::MisuseWatch::start();
//! let (mut a, mut b, mut buf) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
//! unsafe {
//!     assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
//!     assert_eq!(aclrtCreateStream(&mut a), ACL_SUCCESS);
//!     assert_eq!(aclrtCreateStream(&mut b), ACL_SUCCESS);
//!     assert_eq!(aclrtMalloc(&mut buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
//!     // Two streams write the same bytes with nothing between them.
//!     assert_eq!(aclrtMemsetAsync(buf, 4096, 1, 4096, a), ACL_SUCCESS);
//!     assert_eq!(aclrtMemsetAsync(buf, 4096, 2, 4096, b), ACL_SUCCESS);
//!     for stream in [a, b] {
//!         assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
//!         assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
//!     }
//!     assert_eq!(aclrtFree(buf), ACL_SUCCESS);
//! }
//! let races: Vec<_> = watch.seen().into_iter().filter(|m| m.description.starts_with("race")).collect();
//! assert_eq!(races.len(), 1, "{races:?}");
//! assert!(races[0].description.contains("aclrtStreamWaitEvent"), "it says how to order them");
//! ```

mod calls;
mod clock;
mod memory;
mod report;
mod shadow;
mod tracker;

pub(crate) use calls::{Range, Rows, Translated, host_touched, queued, stream_touched};
pub(crate) use memory::{allocated, allocated_runs, forget, freeing};
pub(crate) use shadow::Kind;
pub(crate) use tracker::Site;
use tracker::Touch;

use crate::soft::core::config::ConfigError;
use std::fmt;
use std::io::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// Environment variable: the checks to run, as a comma-separated list of
/// `race`, `init` and `sync` (or `all`), read when the software device
/// starts. Any other word is a start-up error, as a bad value of any other
/// variable is ([`ConfigError::BadEntry`]). Reports of a sanitizer started
/// this way are also printed to stderr as they happen, for C and C++
/// programs on the drop-in library.
pub const ENV_SANITIZE: &str = "ASCEND_SOFT_SANITIZE";

/// Environment variable: the exit code (1 to 255) with which the drop-in
/// C library ends the process at `aclFinalize` when the sanitizer reported
/// anything, as compute-sanitizer's `--error-exitcode` does. Unset: the
/// program's own exit code stands.
pub const ENV_SANITIZE_EXITCODE: &str = "ASCEND_SOFT_SANITIZE_EXITCODE";

bitflags::bitflags! {
    /// The sanitizer's checks.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Checks: u8 {
        /// Unordered accesses to the same bytes from two streams, or from
        /// a stream and the host.
        const RACE = 1;
        /// Reads of device bytes nothing wrote since they were allocated.
        const INIT = 2;
        /// Synchronisation that cannot order anything.
        const SYNC = 4;
    }
}

/// How many hazards of each kind the sanitizer reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Races ([`Checks::RACE`]).
    pub races: u64,
    /// Reads of unwritten bytes ([`Checks::INIT`]).
    pub uninitialized_reads: u64,
    /// Synchronisation that orders nothing ([`Checks::SYNC`]).
    pub sync_misuse: u64,
}

impl Summary {
    /// Every hazard reported.
    pub fn total(&self) -> u64 {
        self.races + self.uninitialized_reads + self.sync_misuse
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} hazard(s): {} race(s), {} uninitialized read(s), {} sync misuse",
            self.total(),
            self.races,
            self.uninitialized_reads,
            self.sync_misuse
        )
    }
}

/// The checks on ([`Checks`] bits), and [`ECHO`].
static FLAGS: AtomicU8 = AtomicU8::new(0);
/// Reports are also printed to stderr (a sanitizer started by the
/// environment).
const ECHO: u8 = 0x80;

/// Starts the sanitizer with `checks` (added to any already on). Memory
/// allocated before it started has no history: its first accesses are not
/// checked against earlier ones, and it is never reported as unwritten.
///
/// ```
/// use ascend_sys::soft::{self, Checks};
/// soft::start_sanitizer(Checks::RACE | Checks::INIT);
/// assert!(soft::sanitizer_checks().contains(Checks::INIT));
/// ```
pub fn start_sanitizer(checks: Checks) {
    read_env();
    let mut tracker = tracker::lock();
    tracker.get_or_insert_with(Default::default);
    FLAGS.fetch_or(checks.bits(), Ordering::AcqRel);
}

/// Stops the sanitizer and forgets its state; returns what it reported.
///
/// ```
/// use ascend_sys::soft::{self, Checks};
/// soft::start_sanitizer(Checks::SYNC);
/// let summary = soft::stop_sanitizer();
/// assert!(soft::sanitizer_checks().is_empty());
/// # let _ = summary;
/// ```
pub fn stop_sanitizer() -> Summary {
    read_env();
    let mut tracker = tracker::lock();
    FLAGS.store(0, Ordering::Release);
    tracker.take().map(|state| state.summary()).unwrap_or_default()
}

/// The checks running now (empty: the sanitizer is off).
pub fn sanitizer_checks() -> Checks {
    read_env();
    Checks::from_bits_truncate(FLAGS.load(Ordering::Acquire))
}

/// What the sanitizer reported since it started.
///
/// ```
/// let summary = ascend_sys::soft::sanitizer_summary();
/// assert!(summary.total() >= summary.races);
/// ```
pub fn sanitizer_summary() -> Summary {
    read_env();
    tracker::lock()
        .as_ref()
        .map(|state| state.summary())
        .unwrap_or_default()
}

/// The exit code asked for by [`ENV_SANITIZE_EXITCODE`], if any.
pub fn sanitizer_exit_code() -> Option<i32> {
    read_env().as_ref().ok().copied().flatten()
}

/// Whether any check is on: the one load on the hot path.
#[inline]
pub(crate) fn on() -> bool {
    FLAGS.load(Ordering::Relaxed) & Checks::all().bits() != 0
}

/// The checks to run for a call of this thread.
fn checks_now() -> Checks {
    let checks = Checks::from_bits_truncate(FLAGS.load(Ordering::Acquire));
    if !checks.is_empty() && opaque() {
        checks - Checks::INIT
    } else {
        checks
    }
}

/// Runs `f` on the tracker when the sanitizer is on, then records what it
/// reported (after the lock is released).
fn with_tracker(f: impl FnOnce(&mut tracker::Tracker, Checks) -> tracker::Reports) {
    let checks = checks_now();
    if checks.is_empty() {
        return;
    }
    let reports = match tracker::lock().as_mut() {
        Some(state) => f(state, checks),
        None => return,
    };
    reports.record();
}

/// Runs `f` on the tracker when the sanitizer is on (no reports).
fn update(f: impl FnOnce(&mut tracker::Tracker)) {
    with_tracker(|state, _| {
        f(state);
        tracker::Reports::none()
    });
}

/// Records a report as misuse, and prints it when the sanitizer was
/// started by the environment.
fn publish(api: &'static str, text: String) {
    if FLAGS.load(Ordering::Relaxed) & ECHO != 0 {
        let _ = writeln!(std::io::stderr(), "ascend-rs sanitizer: in {api}: {text}");
    }
    crate::soft::check::misuse_log::record(api, text);
}

thread_local! {
    /// Set while this thread runs [`sanitize_opaque`].
    static OPAQUE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the calls it makes on this thread exempt from the
/// unwritten-read check ([`Checks::INIT`]): for layers that move bytes
/// whose values they never use, such as a pool that backs its blocks up to
/// the host before freeing their memory and copies them back later
/// (padding and blocks not yet written included). Races are still checked.
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// soft::start_sanitizer(soft::Checks::INIT);
/// let watch = soft::MisuseWatch::start();
/// let mut dev = std::ptr::null_mut();
/// let mut backup = [0u8; 64];
/// unsafe {
///     assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
///     assert_eq!(aclrtMalloc(&mut dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
///     // A backup of bytes nothing wrote yet: not a read of their values.
///     let rc = soft::sanitize_opaque(|| {
///         aclrtMemcpy(backup.as_mut_ptr().cast(), 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST)
///     });
///     assert_eq!(rc, ACL_SUCCESS);
///     assert_eq!(aclrtFree(dev), ACL_SUCCESS);
/// }
/// assert!(watch.seen().is_empty());
/// ```
pub fn sanitize_opaque<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = OPAQUE.try_with(|opaque| opaque.set(self.0));
        }
    }
    let _restore = Restore(OPAQUE.with(|opaque| opaque.replace(true)));
    f()
}

/// Whether this thread runs inside [`sanitize_opaque`].
fn opaque() -> bool {
    OPAQUE.try_with(std::cell::Cell::get).unwrap_or(false)
}

/// Work queued on a stream touches `touches`.
pub(crate) fn stream_op(site: Site, api: &'static str, touches: &[Touch<'_>]) {
    with_tracker(|state, checks| state.stream_op(checks, site, api, touches));
}

/// A synchronous call of the host touches `touches`.
pub(crate) fn host_op(api: &'static str, touches: &[Touch<'_>]) {
    let held = held_by();
    with_tracker(|state, checks| state.host_op(checks, api, touches, held));
}

/// The stream whose blocking callback this thread runs now, if any.
fn held_by() -> Option<clock::Actor> {
    HELD_BY.try_with(std::cell::Cell::get).unwrap_or(None)
}

/// Where a callback (`aclrtLaunchCallback`, `aclrtLaunchHostFunc`) was
/// queued, as the sanitizer orders it: after everything its stream and the
/// host did before the call.
#[derive(Debug, Clone)]
pub(crate) struct CallbackMark {
    clock: clock::Clock,
    /// The stream, when the callback holds back the work queued after it.
    holds: Option<clock::Actor>,
}

/// A callback queued on `site` (`blocking`: the work queued after it waits
/// for it); `None` when the sanitizer is off.
pub(crate) fn callback_queued(site: Site, blocking: bool) -> Option<CallbackMark> {
    let mut mark = None;
    update(|state| {
        mark = Some(CallbackMark {
            clock: state.callback_mark(site),
            holds: blocking.then_some(site.actor),
        });
    });
    mark
}

thread_local! {
    /// The stream whose blocking callback this thread runs now.
    static HELD_BY: std::cell::Cell<Option<clock::Actor>> = const { std::cell::Cell::new(None) };
}

/// Runs `f`, a callback queued at `mark`, on this thread: its host accesses
/// come after the work queued before it and, for a blocking callback,
/// before the work queued after it.
pub(crate) fn in_callback<R>(mark: Option<&CallbackMark>, f: impl FnOnce() -> R) -> R {
    let Some(mark) = mark else {
        return f();
    };
    update(|state| state.callback_begins(&mark.clock));
    struct Restore(Option<clock::Actor>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = HELD_BY.try_with(|held| held.set(self.0));
        }
    }
    let _restore = Restore(HELD_BY.with(|held| held.replace(mark.holds)));
    f()
}

/// `aclrtRecordEvent` on `site`.
pub(crate) fn record(site: Site, event: usize) {
    update(|state| state.record(site, event));
}

/// What a stream's wait for an event waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitFor {
    /// The event's latest record.
    Latest,
    /// Its next record (none was issued yet).
    Next,
    /// Nothing: an `aclrtCreateEventExWithFlag` event never recorded.
    Nothing,
}

/// `api` (`aclrtStreamWaitEvent*`): `site` waits for the event as `what`
/// says.
pub(crate) fn wait_event(site: Site, event: usize, what: WaitFor, api: &'static str) {
    with_tracker(|state, checks| match what {
        WaitFor::Latest => {
            state.wait_latest(site, event);
            tracker::Reports::none()
        }
        WaitFor::Next => {
            state.wait_next(site, event);
            tracker::Reports::none()
        }
        WaitFor::Nothing if checks.contains(Checks::SYNC) => state.sync_misuse(
            api,
            format!(
                "{} waits for event {event:#x}, which was never recorded: the wait is a no-op and orders \
                 nothing (record the event on the producing stream first)",
                site.name()
            ),
        ),
        WaitFor::Nothing => tracker::Reports::none(),
    });
}

/// The host synchronised with the event (`recorded`: it had a record).
pub(crate) fn host_synchronized_event(event: usize, recorded: bool, api: &'static str) {
    with_tracker(|state, checks| {
        if recorded {
            state.host_joins_event(event);
            tracker::Reports::none()
        } else if checks.contains(Checks::SYNC) {
            state.sync_misuse(
                api,
                format!(
                    "{api} on the host waits for event {event:#x}, which was never recorded: the call returns at \
                     once and waits for nothing (record the event after the work to wait for)"
                ),
            )
        } else {
            tracker::Reports::none()
        }
    });
}

/// The host saw the event's latest record complete (a status query).
pub(crate) fn host_saw_event(event: usize) {
    update(|state| {
        if state.knows_event(event) {
            state.host_joins_event(event);
        }
    });
}

/// The host waited for everything queued on `site` so far.
pub(crate) fn host_synchronized_stream(site: Site) {
    update(|state| state.host_joins_stream(site));
}

/// `site` was destroyed after its work ended.
pub(crate) fn stream_destroyed(site: Site) {
    update(|state| state.stream_gone(site));
}

/// The event was destroyed.
pub(crate) fn event_destroyed(event: usize) {
    update(|state| state.event_gone(event));
}

/// `aclrtValueWrite` on `site` at `address`.
pub(crate) fn value_write(site: Site, address: usize) {
    update(|state| state.value_write(site, address));
}

/// `aclrtValueWait` on `site` at `address`.
pub(crate) fn value_wait(site: Site, address: usize) {
    update(|state| state.value_wait(site, address));
}

/// Number of runs of memory the sanitizer keeps a history for (0 when it
/// is off): it grows with the distinct ranges a program touches, not with
/// their bytes.
///
/// ```
/// use ascend_sys::soft;
/// soft::stop_sanitizer();
/// assert_eq!(soft::sanitizer_tracked_runs(), 0);
/// ```
pub fn sanitizer_tracked_runs() -> usize {
    tracker::lock().as_ref().map_or(0, |state| state.runs())
}

static ENV_READ: OnceLock<Result<Option<i32>, ConfigError>> = OnceLock::new();

/// Reads [`ENV_SANITIZE`] and [`ENV_SANITIZE_EXITCODE`] once; starts the
/// sanitizer (echoing to stderr) when the first names checks.
fn read_env() -> &'static Result<Option<i32>, ConfigError> {
    ENV_READ.get_or_init(|| {
        let exit_code = match std::env::var(ENV_SANITIZE_EXITCODE) {
            Ok(text) => match text.trim().parse::<i32>() {
                Ok(code) if (1..=255).contains(&code) => Some(code),
                _ => {
                    return Err(ConfigError::BadVariable {
                        variable: ENV_SANITIZE_EXITCODE,
                        value: text,
                        reason: "not an exit code from 1 to 255",
                    });
                }
            },
            Err(_) => None,
        };
        let Ok(text) = std::env::var(ENV_SANITIZE) else {
            return Ok(exit_code);
        };
        let checks = parse_checks(&text).map_err(|entry| ConfigError::BadEntry {
            variable: ENV_SANITIZE,
            value: text.clone(),
            entry,
            reason: "not a check: use race, init, sync or all",
        })?;
        if !checks.is_empty() {
            tracker::lock().get_or_insert_with(Default::default);
            FLAGS.fetch_or(checks.bits() | ECHO, Ordering::AcqRel);
        }
        Ok(exit_code)
    })
}

/// Parses a list of check names, or returns the first word that is none.
fn parse_checks(text: &str) -> Result<Checks, String> {
    let mut checks = Checks::empty();
    for word in text.split(',').map(str::trim).filter(|word| !word.is_empty()) {
        checks |= match word {
            "race" => Checks::RACE,
            "init" => Checks::INIT,
            "sync" => Checks::SYNC,
            "all" => Checks::all(),
            other => return Err(other.to_string()),
        };
    }
    Ok(checks)
}

/// Why the software device must not start because of [`ENV_SANITIZE`] or
/// [`ENV_SANITIZE_EXITCODE`], if it must not. Reads them on first use.
pub(crate) fn env_problem() -> Option<ConfigError> {
    read_env().as_ref().err().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_lists_parse_and_bad_words_are_named() {
        assert_eq!(parse_checks("race, init"), Ok(Checks::RACE | Checks::INIT));
        assert_eq!(parse_checks("all"), Ok(Checks::all()));
        assert_eq!(parse_checks(""), Ok(Checks::empty()));
        assert_eq!(parse_checks("race,races"), Err("races".to_string()));
    }
}
