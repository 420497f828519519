//! A device stays set while anything created on it lives: a thread that
//! made the device current and exits (resetting its own retains) does not
//! tear down buffers, streams and events that other threads own.
//!
//! Runs in a child process, whose main thread never touches the device, so
//! that the exiting thread's reset would be the last one without the
//! process-wide retain that every `Device` shares. On the software device
//! the last reset destroys the device's streams, events and memory, as on
//! hardware; before the fix the buffer below was gone once the thread
//! exited.

mod common;

use ascend::stream::{Event, Stream};
use ascend::{Device, DeviceBuf};
use std::process::Command;

#[test]
fn a_thread_exit_does_not_tear_down_what_other_threads_own() {
    let name = "child_owners_outlive_their_creating_thread";
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"])
        .output()
        .expect("start the child test");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("child done"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "run in a child process by a_thread_exit_does_not_tear_down_what_other_threads_own"]
fn child_owners_outlive_their_creating_thread() {
    let data: Vec<u32> = (0..4096).collect();
    let (buffer, stream, event) = std::thread::spawn({
        let data = data.clone();
        move || {
            let device = Device::new(0).expect("device 0");
            let buffer = DeviceBuf::from_slice(&device, &data).expect("a buffer");
            let stream = Stream::new(&device).expect("a stream");
            let event = Event::new(&device).expect("an event");
            (buffer, stream, event)
        }
    })
    .join()
    .expect("the creating thread");
    // The creating thread has exited and reset every device it set.
    assert_eq!(buffer.to_vec().expect("the buffer is still there"), data);
    stream.synchronize().expect("the stream is still there");
    event.record(&stream).expect("the event is still there");
    event.synchronize().expect("the event is reached");
    event.destroy().expect("destroy the event");
    stream.destroy().expect("destroy the stream");
    buffer.free().expect("free the buffer");
    println!("child done");
}
