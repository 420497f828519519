//! The sanitizer's state, behind its one lock: each actor's clock, each
//! event's and each value word's clock, the shadow of memory, and the
//! counts of what was reported.
//!
//! The lock is a leaf of the software device's lock order: nothing is
//! called while it is held, and the reports it produces are recorded after
//! it is released.

use super::clock::{Actor, Clock, HOST};
use super::report;
use super::shadow::{Findings, Init, Kind, Op, Shadow};
use super::{Checks, Summary};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A stream, as the sanitizer names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site {
    /// The stream's software-device id (its actor).
    pub(crate) actor: Actor,
    pub(crate) device: i32,
    /// The handle programs hold (0: the device's default stream).
    pub(crate) handle: usize,
}

impl Site {
    /// The stream's name in messages.
    pub(crate) fn name(&self) -> String {
        if self.handle == 0 {
            format!("the default stream of device {}", self.device)
        } else {
            format!("stream {:#x} (device {})", self.handle, self.device)
        }
    }
}

/// One range an operation touches: the range the program named, and the
/// bytes behind it (`(pointer, len, offset into the range)` runs).
pub(crate) struct Touch<'a> {
    pub(crate) address: usize,
    pub(crate) len: usize,
    pub(crate) kind: Kind,
    /// Device memory (checked for unwritten reads); pinned host memory is
    /// not, since the host writes it directly.
    pub(crate) device: bool,
    pub(crate) bytes: &'a [(usize, usize, usize)],
}

#[derive(Debug, Default)]
struct StreamState {
    clock: Clock,
    place: Option<Arc<str>>,
    /// Set by a wait whose condition a later call may satisfy (a value
    /// wait, a wait for an event's next record): until the host
    /// synchronises the stream (or the record comes), its accesses are
    /// neither checked nor kept, since the sanitizer cannot order them.
    deferred: bool,
}

#[derive(Debug, Default)]
struct EventState {
    /// The clock of its latest record.
    clock: Option<Clock>,
    /// Streams waiting for its next record.
    waiters: Vec<Actor>,
}

#[derive(Debug, Default)]
pub(crate) struct Tracker {
    host: Clock,
    /// "the host", as reports name it (made once).
    host_place: Option<Arc<str>>,
    streams: HashMap<Actor, StreamState>,
    events: HashMap<usize, EventState>,
    values: HashMap<usize, Clock>,
    memory: Memory,
}

/// The shadow and the counts of what was reported: apart from the clocks,
/// so that an operation's clock is lent, not copied, while its accesses
/// are checked.
#[derive(Debug, Default)]
struct Memory {
    shadow: Shadow,
    summary: Summary,
}

static TRACKER: Mutex<Option<Tracker>> = Mutex::new(None);

/// The tracker, locked (a leaf lock); `None` inside when the sanitizer
/// is off.
pub(crate) fn lock() -> MutexGuard<'static, Option<Tracker>> {
    TRACKER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The most reports kept in the misuse list; later ones are only counted.
const MAX_REPORTS: u64 = 1000;

/// What an operation found, to record once the lock is released.
#[must_use]
pub(crate) struct Reports(Vec<(&'static str, String)>);

impl Reports {
    pub(crate) fn none() -> Self {
        Self(Vec::new())
    }

    /// Records each report as misuse (and echoes it when asked to).
    pub(crate) fn record(self) {
        for (api, text) in self.0 {
            super::publish(api, text);
        }
    }
}

/// The state of the stream `site` (made on first use).
fn stream_state(streams: &mut HashMap<Actor, StreamState>, site: Site) -> &mut StreamState {
    let state = streams.entry(site.actor).or_default();
    if state.place.is_none() {
        state.place = Some(Arc::from(site.name()));
    }
    state
}

impl Memory {
    fn keep(&mut self, out: &mut Vec<(&'static str, String)>, api: &'static str, text: String) {
        if self.summary.total() < MAX_REPORTS {
            out.push((api, text));
        } else if self.summary.total() == MAX_REPORTS {
            out.push((
                api,
                format!("sanitizer: more than {MAX_REPORTS} hazards; the rest are counted, not listed"),
            ));
        }
    }

    /// Checks and records the accesses of one operation, operation `epoch`
    /// of `actor` (named `place`), whose clock (after counting the
    /// operation) is `seen`.
    fn accesses(
        &mut self,
        (checks, api): (Checks, &'static str),
        (actor, epoch, place): (Actor, u64, &Arc<str>),
        seen: &Clock,
        touches: &[Touch<'_>],
    ) -> Reports {
        let mut out = Vec::new();
        for touch in touches {
            let op = || {
                Arc::new(Op {
                    api,
                    actor,
                    epoch,
                    place: Arc::clone(place),
                    address: touch.address,
                    len: touch.len,
                    kind: touch.kind,
                })
            };
            let mut found = Findings::default();
            let op = if touch.kind == Kind::Free {
                // A free is checked, then its bytes are forgotten; its
                // operation is made for a report only.
                for &run in touch.bytes {
                    self.shadow.free(run, actor, seen, &mut found);
                }
                if found.is_empty() {
                    continue;
                }
                op()
            } else {
                let op = op();
                let check_init = checks.contains(Checks::INIT) && touch.device && touch.kind == Kind::Read;
                for &run in touch.bytes {
                    self.shadow.access(run, &op, seen, check_init, &mut found);
                }
                op
            };
            if checks.contains(Checks::RACE) {
                for conflict in &found.conflicts {
                    let text = report::race(&op, conflict, seen.get(conflict.earlier.actor));
                    self.keep(&mut out, api, text);
                    self.summary.races += 1;
                }
            }
            if let Some(unwritten) = found.unwritten {
                let text = report::unwritten(&op, &unwritten);
                self.keep(&mut out, api, text);
                self.summary.uninitialized_reads += 1;
            }
        }
        Reports(out)
    }
}

impl Tracker {
    pub(crate) fn summary(&self) -> Summary {
        self.memory.summary
    }

    fn stream(&mut self, site: Site) -> &mut StreamState {
        stream_state(&mut self.streams, site)
    }

    /// An operation queued on a stream: it comes after everything the host
    /// did before the call, and after the stream's earlier operations.
    pub(crate) fn stream_op(
        &mut self,
        checks: Checks,
        site: Site,
        api: &'static str,
        touches: &[Touch<'_>],
    ) -> Reports {
        let state = stream_state(&mut self.streams, site);
        state.clock.join(&self.host);
        let epoch = state.clock.tick(site.actor);
        if state.deferred {
            // Unordered, so unchecked; but what it writes is written.
            for touch in touches.iter().filter(|touch| touch.kind == Kind::Write) {
                for &(pointer, len, _) in touch.bytes {
                    self.memory.shadow.written(pointer, len);
                }
            }
            return Reports::none();
        }
        let place = state.place.get_or_insert_with(|| Arc::from(site.name()));
        self.memory
            .accesses((checks, api), (site.actor, epoch, place), &state.clock, touches)
    }

    /// A synchronous operation of the host; inside a blocking callback of
    /// stream `held` (`Some`), every operation of that stream is ordered
    /// with it (those queued after the callback wait for it to return).
    pub(crate) fn host_op(
        &mut self,
        checks: Checks,
        api: &'static str,
        touches: &[Touch<'_>],
        held: Option<Actor>,
    ) -> Reports {
        let epoch = self.host.tick(HOST);
        let place = self.host_place.get_or_insert_with(|| Arc::from("the host"));
        let Some(held) = held else {
            return self
                .memory
                .accesses((checks, api), (HOST, epoch, place), &self.host, touches);
        };
        let mut seen = self.host.clone();
        seen.all_of(held);
        self.memory
            .accesses((checks, api), (HOST, epoch, place), &seen, touches)
    }

    /// A callback queued on `site`: the clock its host accesses will learn
    /// (everything the stream and the host did before the call).
    pub(crate) fn callback_mark(&mut self, site: Site) -> Clock {
        let host = self.host.clone();
        let state = self.stream(site);
        state.clock.join(&host);
        state.clock.clone()
    }

    /// A callback starts on the host: the host learns `mark`.
    pub(crate) fn callback_begins(&mut self, mark: &Clock) {
        self.host.join(mark);
    }

    /// New memory at `bytes`: no history, and unwritten when `origin` names
    /// the call that allocated device memory.
    pub(crate) fn allocated(&mut self, bytes: &[(usize, usize, usize)], origin: Option<&'static str>) {
        let init = origin.map_or(Init::Unknown, Init::Unwritten);
        for &(pointer, len, _) in bytes {
            self.memory.shadow.reset(pointer, len, init);
        }
    }

    /// Memory at `bytes` given back: its history goes.
    pub(crate) fn forget(&mut self, bytes: &[(usize, usize, usize)]) {
        for &(pointer, len, _) in bytes {
            self.memory.shadow.forget(pointer, len);
        }
    }

    /// `aclrtRecordEvent`: the event's record carries the stream's clock.
    pub(crate) fn record(&mut self, site: Site, event: usize) {
        let host = self.host.clone();
        let state = self.stream(site);
        state.clock.join(&host);
        let clock = state.clock.clone();
        let entry = self.events.entry(event).or_default();
        entry.clock = Some(clock.clone());
        for waiter in std::mem::take(&mut entry.waiters) {
            if let Some(waiting) = self.streams.get_mut(&waiter) {
                waiting.clock.join(&clock);
                waiting.deferred = false;
            }
        }
    }

    /// `aclrtStreamWaitEvent` for the event's latest record: the stream
    /// learns that record's clock.
    pub(crate) fn wait_latest(&mut self, site: Site, event: usize) {
        let clock = self.events.get(&event).and_then(|state| state.clock.clone());
        let host = self.host.clone();
        let state = self.stream(site);
        state.clock.join(&host);
        match clock {
            Some(clock) => state.clock.join(&clock),
            // Recorded before the sanitizer started: nothing is known.
            None => state.deferred = true,
        }
    }

    /// `aclrtStreamWaitEvent` for a record not issued yet.
    pub(crate) fn wait_next(&mut self, site: Site, event: usize) {
        self.stream(site).deferred = true;
        self.events.entry(event).or_default().waiters.push(site.actor);
    }

    /// Whether `event` was ever recorded while the sanitizer ran.
    pub(crate) fn knows_event(&self, event: usize) -> bool {
        self.events.get(&event).is_some_and(|state| state.clock.is_some())
    }

    /// A sync-misuse report, counted.
    pub(crate) fn sync_misuse(&mut self, api: &'static str, text: String) -> Reports {
        let mut out = Vec::new();
        self.memory.keep(&mut out, api, format!("sync misuse: {text}"));
        self.memory.summary.sync_misuse += 1;
        Reports(out)
    }

    /// The host waited for every operation queued on the stream so far.
    pub(crate) fn host_joins_stream(&mut self, site: Site) {
        let state = self.stream(site);
        state.deferred = false;
        let clock = state.clock.clone();
        self.host.join(&clock);
    }

    /// The host waited for the event's latest record.
    pub(crate) fn host_joins_event(&mut self, event: usize) {
        if let Some(clock) = self.events.get(&event).and_then(|state| state.clock.clone()) {
            self.host.join(&clock);
        }
    }

    /// A destroyed stream: the destruction waited for its work.
    pub(crate) fn stream_gone(&mut self, site: Site) {
        self.host_joins_stream(site);
        self.streams.remove(&site.actor);
    }

    /// A destroyed event.
    pub(crate) fn event_gone(&mut self, event: usize) {
        self.events.remove(&event);
    }

    /// `aclrtValueWrite`: the word's clock learns the stream's.
    pub(crate) fn value_write(&mut self, site: Site, address: usize) {
        let host = self.host.clone();
        let state = self.stream(site);
        state.clock.join(&host);
        state.clock.tick(site.actor);
        let clock = state.clock.clone();
        self.values.entry(address).or_default().join(&clock);
    }

    /// `aclrtValueWait`: the stream learns every write of the word queued
    /// so far, and, since a later write may be the one it waits for, stops
    /// being checked until the host synchronises it.
    pub(crate) fn value_wait(&mut self, site: Site, address: usize) {
        let clock = self.values.get(&address).cloned();
        let host = self.host.clone();
        let state = self.stream(site);
        state.clock.join(&host);
        if let Some(clock) = clock {
            state.clock.join(&clock);
        }
        state.deferred = true;
    }

    /// Number of shadow runs kept (for tests and benchmarks).
    pub(crate) fn runs(&self) -> usize {
        self.memory.shadow.len()
    }
}
