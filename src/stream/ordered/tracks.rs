//! [`Tracks`]: the streams whose queued work may still use one owner's
//! memory, and the waits that order a new use after them.

use super::super::completion::Completion;
use crate::error::{Error, Result};
use crate::stream::{Event, EventFlags, Stream};
use std::sync::Arc;

/// What [`Tracks::settle`] proved.
pub(crate) enum Settled {
    /// Every noted use finished; the first task error reported, if any.
    Proven(Result<()>),
    /// A stream's work cannot be proven finished: its first error.
    Unproven(Error),
}

/// The streams whose writes and reads of one owner's memory may still be
/// queued. Work on one stream runs in order, so only uses on *other*
/// streams need a wait. After a write there is one writer and no reader;
/// memory put together from several owners' (a pool coalescing free
/// blocks) may have several writers.
///
/// Memory with no use noted (the common case: a pool hit, a buffer used
/// synchronously) holds one null pointer, so moving and dropping it costs
/// almost nothing.
#[derive(Default, Clone)]
pub(crate) struct Tracks {
    /// `None` when no use is noted.
    lists: Option<Box<Lists>>,
}

#[derive(Default, Clone)]
struct Lists {
    writers: Vec<Arc<Stream>>,
    readers: Vec<Arc<Stream>>,
}

fn same(a: &Stream, b: &Stream) -> bool {
    a.as_raw() == b.as_raw()
}

/// Makes `stream` wait for the work queued on `other` so far: an event
/// recorded on `other` now covers every use queued there before.
fn wait_for(stream: &Stream, other: &Stream) -> Result<()> {
    let event = Event::with_flags(other.device(), EventFlags::SYNC)?;
    event.record(other)?;
    stream.wait_event(&event)
    // The event may go now: the wait is for a record already issued.
}

impl Tracks {
    /// The noted uses, made if none was.
    fn lists_mut(&mut self) -> &mut Lists {
        self.lists.get_or_insert_with(Box::default)
    }

    /// Queues on `stream` the waits a use (a write if `write`) must follow:
    /// the writers on other streams, and for a write every reader on
    /// another stream.
    pub(crate) fn order(&self, stream: &Stream, write: bool) -> Result<()> {
        let Some(lists) = self.lists.as_deref() else {
            return Ok(());
        };
        let readers = if write { &lists.readers[..] } else { &[] };
        for other in lists.writers.iter().chain(readers).filter(|other| !same(other, stream)) {
            wait_for(stream, other)?;
        }
        Ok(())
    }

    /// Notes a use queued on `stream`. A write is ordered after every use
    /// before it, so it is the only one left to wait for.
    pub(crate) fn note(&mut self, stream: &Arc<Stream>, write: bool) {
        let lists = self.lists_mut();
        if write {
            lists.writers = vec![Arc::clone(stream)];
            lists.readers.clear();
        } else if !lists
            .readers
            .iter()
            .chain(&lists.writers)
            .any(|known| same(known, stream))
        {
            lists.readers.push(Arc::clone(stream));
        }
    }

    /// Notes work queued on `stream` outside this crate that may write the
    /// memory, without assuming it was ordered after the uses noted so far
    /// (they all stay noted).
    pub(crate) fn add_writer(&mut self, stream: &Arc<Stream>) {
        let lists = self.lists_mut();
        if !lists.writers.iter().any(|known| same(known, stream)) {
            lists.writers.push(Arc::clone(stream));
        }
    }

    /// The tracks of memory made of this owner's and `other`'s: every use
    /// of either may still be queued.
    pub(crate) fn merge(mut self, other: Tracks) -> Tracks {
        let Some(other) = other.lists else {
            return self;
        };
        let Some(lists) = self.lists.as_deref_mut() else {
            return Tracks { lists: Some(other) };
        };
        for writer in other.writers {
            if !lists.writers.iter().any(|known| same(known, &writer)) {
                lists.writers.push(writer);
            }
        }
        for reader in other.readers {
            if !lists.readers.iter().any(|known| same(known, &reader)) {
                lists.readers.push(reader);
            }
        }
        self
    }

    /// Whether any use is noted.
    pub(crate) fn is_empty(&self) -> bool {
        self.lists
            .as_deref()
            .is_none_or(|lists| lists.writers.is_empty() && lists.readers.is_empty())
    }

    /// Proves every noted use finished (the failure model of
    /// [`Stream::complete`] per stream). When all are proven the tracks are
    /// cleared; when one is not they stay, so the memory is never released.
    pub(crate) fn settle(&mut self, context: &str) -> Settled {
        let Some(lists) = self.lists.as_deref() else {
            return Settled::Proven(Ok(()));
        };
        let mut reported = Ok(());
        for stream in lists.writers.iter().chain(&lists.readers) {
            match stream.complete() {
                Completion::Finished(Ok(())) => {}
                Completion::Finished(Err(error)) => {
                    if reported.is_ok() {
                        reported = Err(error);
                    }
                }
                Completion::Unproven { first, later } => {
                    log::error!(
                        "{context}: the work queued on stream {:?} cannot be proven finished; the memory it uses is \
                         kept: {}",
                        stream.as_raw(),
                        Completion::describe(&first, &later)
                    );
                    return Settled::Unproven(first);
                }
            }
        }
        *self = Self::default();
        Settled::Proven(reported)
    }
}
