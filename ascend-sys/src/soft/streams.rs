//! Streams and events: an in-order worker per stream (to be built).

/// Every live stream and event.
#[derive(Debug, Default)]
pub(crate) struct Streams {}
