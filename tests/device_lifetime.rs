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

#[test]
fn a_thread_exit_does_not_tear_down_what_other_threads_own() {
    common::run_child("child_owners_outlive_their_creating_thread");
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
    println!("child child_owners_outlive_their_creating_thread done");
}

#[test]
fn a_buffer_cloned_on_an_exited_thread_outlives_every_device() {
    common::run_child("child_buffer_outlives_the_threads_and_devices");
}

/// A buffer holds the share of the thread that made it (each bound thread
/// clones a `Device` on its own count): that share alone must keep the
/// device set once the thread and every `Device` are gone.
#[test]
#[ignore = "run in a child process by a_buffer_cloned_on_an_exited_thread_outlives_every_device"]
fn child_buffer_outlives_the_threads_and_devices() {
    let data: Vec<u16> = (0..2048).collect();
    let buffer = std::thread::spawn({
        let data = data.clone();
        move || {
            let device = Device::new(0).expect("device 0");
            let shared = &device;
            // A second thread, bound to the device, allocates through the
            // first thread's `Device` and exits before it.
            let buffer = std::thread::scope(|scope| {
                scope
                    .spawn(|| DeviceBuf::from_slice(shared, &data).expect("a buffer"))
                    .join()
                    .expect("the allocating thread")
            });
            drop(device);
            buffer
        }
    })
    .join()
    .expect("the creating thread");
    // Both threads have exited and reset what they set; no `Device` is left
    // but the buffer's own.
    assert_eq!(buffer.to_vec().expect("the buffer is still there"), data);
    buffer.free().expect("free the buffer");
    println!("child child_buffer_outlives_the_threads_and_devices done");
}
