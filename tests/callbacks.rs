//! Host functions and callback threads of the safe crate: closures run when
//! the stream reaches them, in order with its work, a panic is contained,
//! and the two forms refuse to be mixed on one stream. The bodies hold on
//! hardware too.

use ascend::stream::{CallbackBlock, CallbackThread};
use ascend::{Device, DeviceBuf, ErrorCode, PinnedHostBuf, Stream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn host_functions_run_in_stream_order() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let order = Arc::new(Mutex::new(Vec::new()));
    for step in 0..4 {
        let order = Arc::clone(&order);
        stream.launch_host_fn(move || order.lock().unwrap().push(step))?;
    }
    stream.synchronize()?;
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
    Ok(())
}

#[test]
fn a_host_function_sees_the_copy_queued_before_it() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let source = PinnedHostBuf::from_slice(&device, &[5u32; 64])?;
    let mut staged = DeviceBuf::<u32>::zeroed(&device, 64)?;
    stream.scope(|s| s.copy_to_device(&source, &mut staged))?;
    let on_device = Arc::new(Mutex::new(staged));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (buf, out) = (Arc::clone(&on_device), Arc::clone(&seen));
    stream.launch_host_fn(move || {
        if let Ok(values) = buf.lock().unwrap().to_vec() {
            *out.lock().unwrap() = values;
        }
    })?;
    stream.synchronize()?;
    assert_eq!(*seen.lock().unwrap(), vec![5; 64]);
    Ok(())
}

#[test]
fn a_panic_in_a_host_function_is_contained() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let after = Arc::new(AtomicUsize::new(0));
    stream.launch_host_fn(|| panic!("planted panic"))?;
    let counter = Arc::clone(&after);
    stream.launch_host_fn(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    })?;
    stream.synchronize()?;
    assert_eq!(after.load(Ordering::SeqCst), 1, "the stream went on");
    Ok(())
}

#[test]
fn a_callback_thread_runs_blocking_and_non_blocking_callbacks() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let count = Arc::new(AtomicUsize::new(0));
    let callbacks = CallbackThread::new(&stream)?;
    for block in [CallbackBlock::Block, CallbackBlock::NoBlock, CallbackBlock::Block] {
        let count = Arc::clone(&count);
        callbacks.launch(block, move || {
            count.fetch_add(1, Ordering::SeqCst);
        })?;
    }
    let error = stream.launch_host_fn(|| {}).unwrap_err();
    assert_eq!(
        error.code(),
        Some(ErrorCode(ascend_sys::ACL_ERROR_RT_STREAM_SUBSCRIBE)),
        "no mixing: {error}"
    );
    let second = CallbackThread::new(&stream).unwrap_err();
    assert_eq!(
        second.code(),
        Some(ErrorCode(ascend_sys::ACL_ERROR_RT_STREAM_SUBSCRIBE)),
        "one thread per stream"
    );
    callbacks.finish()?;
    assert_eq!(count.load(Ordering::SeqCst), 3);
    // Unsubscribed: a new thread may serve the stream.
    drop(CallbackThread::new(&stream)?);
    Ok(())
}

#[test]
fn a_stream_dropped_inside_its_own_host_function_is_leaked_not_destroyed() -> ascend::Result<()> {
    use ascend::stream::DeviceFlag;
    let device = Device::new(0)?;
    let stream = Arc::new(Stream::new(&device)?);
    let flag = DeviceFlag::new(&device, 0)?;
    let last = Arc::clone(&stream);
    let (done, finished) = std::sync::mpsc::channel();
    stream.launch_host_fn(move || {
        // Hold back the queue, then drop the last owner of the stream here.
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(last);
        let _ = done.send(());
    })?;
    // Queued behind the host function: it writes the flag's device memory.
    stream.write_value(&flag, 1)?;
    let watched = Arc::clone(&flag);
    drop(flag);
    drop(stream);
    finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the host function ran to its end (no hang, no panic)");
    // The stream could not wait for the write queued behind the host
    // function, so it kept (leaked) the flag that write uses: the flag's
    // memory is still allocated, and the write lands in it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while watched.get()? != 1 {
        assert!(std::time::Instant::now() < deadline, "the queued write never ran");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        Arc::strong_count(&watched),
        2,
        "the stream's hold on the flag was leaked, not dropped"
    );
    Ok(())
}

#[test]
fn finishing_a_callback_thread_runs_a_no_block_callback_queued_last() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let callbacks = CallbackThread::new(&stream)?;
    let (sent, received) = std::sync::mpsc::channel();
    callbacks.launch(CallbackBlock::NoBlock, move || {
        let _ = sent.send(7);
    })?;
    // A NoBlock callback does not hold the stream back: `finish` must still
    // see it run before it unsubscribes.
    callbacks.finish()?;
    assert_eq!(received.try_recv().ok(), Some(7));
    Ok(())
}
