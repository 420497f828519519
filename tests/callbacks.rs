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
