//! A stream held back behind a gate: work queued on it runs only once a
//! helper thread opens the gate, after [`GATE_DELAY`]. A use queued on
//! another stream meanwhile is kept after it only by the waits the crate
//! inserts, so a missing wait shows as wrong bytes or as no delay.

use ascend::Device;
use ascend::stream::{Event, EventFlags, Stream};
use std::time::Duration;

/// How long the gate stays shut.
pub const GATE_DELAY: Duration = Duration::from_millis(200);

/// Runs `body` with `held` waiting for a gate that opens after
/// [`GATE_DELAY`]: work queued on `held` inside `body` runs only then.
pub fn gated<R>(device: &Device, held: &Stream, body: impl FnOnce() -> R) -> R {
    let gate = Event::with_flags(device, EventFlags::SYNC).expect("an event");
    let opener = Stream::new(device).expect("a stream");
    held.wait_event(&gate).expect("hold the stream");
    std::thread::scope(|threads| {
        threads.spawn(|| {
            std::thread::sleep(GATE_DELAY);
            gate.record(&opener).expect("open the gate");
        });
        body()
    })
}
