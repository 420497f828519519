//! [`Tracks`]: the streams whose queued work may still use one owner's
//! memory, and the waits that order a new use after them.

use super::super::completion::Completion;
use crate::error::{Error, Result};
use crate::stream::{Event, EventFlags, Stream};
use std::sync::Arc;

/// What [`Tracks::settle`] proved.
pub(super) enum Settled {
    /// Every noted use finished; the first task error reported, if any.
    Proven(Result<()>),
    /// A stream's work cannot be proven finished: its first error.
    Unproven(Error),
}

/// The last writer and the readers since, of one owner's memory. Work on
/// one stream runs in order, so only uses on *other* streams need a wait.
#[derive(Default)]
pub(super) struct Tracks {
    writer: Option<Arc<Stream>>,
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
    /// Queues on `stream` the waits a use (a write if `write`) must follow:
    /// the last writer on another stream, and for a write every reader on
    /// another stream.
    pub(super) fn order(&self, stream: &Stream, write: bool) -> Result<()> {
        if let Some(writer) = &self.writer
            && !same(writer, stream)
        {
            wait_for(stream, writer)?;
        }
        if write {
            for reader in self.readers.iter().filter(|reader| !same(reader, stream)) {
                wait_for(stream, reader)?;
            }
        }
        Ok(())
    }

    /// Notes a use queued on `stream`. A write is ordered after every use
    /// before it, so it is the only one left to wait for.
    pub(super) fn note(&mut self, stream: &Arc<Stream>, write: bool) {
        if write {
            self.writer = Some(Arc::clone(stream));
            self.readers.clear();
        } else if !self.readers.iter().any(|reader| same(reader, stream))
            && !self.writer.as_ref().is_some_and(|writer| same(writer, stream))
        {
            self.readers.push(Arc::clone(stream));
        }
    }

    /// Whether any use is noted.
    pub(super) fn is_empty(&self) -> bool {
        self.writer.is_none() && self.readers.is_empty()
    }

    /// Proves every noted use finished (the failure model of
    /// [`Stream::complete`] per stream). When all are proven the tracks are
    /// cleared; when one is not they stay, so the memory is never released.
    pub(super) fn settle(&mut self, context: &str) -> Settled {
        let mut reported = Ok(());
        for stream in self.writer.iter().chain(&self.readers) {
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
