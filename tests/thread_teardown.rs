//! Owners used and dropped by a thread-local destructor, while the thread
//! ends (issue 38): the crate's own thread-local binding may already be
//! gone then, and the thread's retains reset.
//!
//! Runs in a child process: without the fix the read on one device panics
//! inside the crate (a thread-local accessed after its destruction), which
//! aborts the process, and the other fails with "no current context".
//!
//! The same body runs on hardware (`ASCEND_BACKEND=hardware`); device 1 is
//! skipped when there is only one device.

mod common;

use ascend::pool::DevicePool;
use ascend::stream::{Ordered, Stream};
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// What the destructor found, one line per check ("ok ..." or the error).
static REPORT: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn report(line: String) {
    REPORT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(line);
}

/// Buffers with known contents (one per device), and a pool of device 0.
struct Held {
    buffers: Vec<(DeviceBuf<u32>, Vec<u32>)>,
    pool: Option<DevicePool>,
}

impl Drop for Held {
    fn drop(&mut self) {
        for (buffer, expected) in self.buffers.drain(..) {
            let id = buffer.device().id();
            match buffer.to_vec() {
                Ok(read) if read == expected => report(format!("ok read on device {id}")),
                Ok(_) => report(format!("device {id}: wrong contents")),
                Err(error) => report(format!("device {id}: read failed: {error}")),
            }
            match buffer.free() {
                Ok(()) => report(format!("ok free on device {id}")),
                Err(error) => report(format!("device {id}: free failed: {error}")),
            }
        }
        if let Some(pool) = self.pool.take() {
            let device = pool.device().clone();
            let outcome = Stream::new(&device).map(Arc::new).and_then(|stream| {
                let block = pool.alloc(4096)?;
                let mut host = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, block.byte_len())?);
                host.copy_from_device(&block, &stream)?;
                let len = host.get_mut()?.len();
                drop(block);
                stream.synchronize()?;
                Ok(len)
            });
            match outcome {
                Ok(4096) => report("ok pool block on device 0".to_owned()),
                Ok(len) => report(format!("pool block of {len} bytes")),
                Err(error) => report(format!("pool block failed: {error}")),
            }
        }
    }
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

#[test]
fn owners_work_from_a_thread_local_destructor() {
    common::run_child("child_owners_used_by_a_thread_local_destructor");
}

#[test]
#[ignore = "run in a child process by owners_work_from_a_thread_local_destructor"]
fn child_owners_used_by_a_thread_local_destructor() {
    let count = Device::count().expect("device count");
    let ids: Vec<i32> = (0..count.min(2) as i32).collect();
    std::thread::spawn({
        let ids = ids.clone();
        move || {
            // The holder is initialized before the crate's own thread
            // locals, so it is destroyed after them.
            HELD.with(|held| {
                held.borrow_mut().replace(Held {
                    buffers: Vec::new(),
                    pool: None,
                })
            });
            let mut buffers = Vec::new();
            for &id in &ids {
                let device = Device::new(id).expect("device");
                let data: Vec<u32> = (0..1024).map(|i| i * 3 + id as u32).collect();
                buffers.push((DeviceBuf::from_slice(&device, &data).expect("a buffer"), data));
            }
            let device = Device::new(0).expect("device 0");
            let pool = DevicePool::new(&device, ascend::pool::PoolConfig::default()).expect("a pool");
            drop(pool.alloc(4096).expect("a block"));
            // Switch to the last device and back to device 0, which the
            // thread ends with current: the read on device 0 then meets the
            // crate's record of the current device after the thread's
            // retains were reset, the read on device 1 the crate's binding
            // destroyed.
            if let Some(&last) = ids.last() {
                Device::new(last).expect("device").make_current().expect("make current");
            }
            HELD.with(|held| {
                if let Some(held) = held.borrow_mut().as_mut() {
                    held.buffers = buffers;
                    held.pool = Some(pool);
                }
            });
            device.make_current().expect("make device 0 current");
        }
    })
    .join()
    .expect("the thread and its thread-local destructors");
    let report = REPORT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    let mut expected: Vec<String> = Vec::new();
    for id in &ids {
        expected.push(format!("ok read on device {id}"));
        expected.push(format!("ok free on device {id}"));
    }
    expected.push("ok pool block on device 0".to_owned());
    assert_eq!(report, expected);
    // Every `Device` is gone with the thread: the retains the ending thread
    // took were reset with the devices' process retains, so no device is
    // set any more (this thread never set one).
    common::software_only(|| {
        for &id in &ids {
            // SAFETY: no pointer arguments.
            let code = unsafe { ascend::sys::aclrtResetDevice(id) };
            assert_eq!(
                code,
                ascend::sys::ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                "device {id} is still set"
            );
        }
    });
    // The devices still work on this thread, and were not left set by the
    // ended thread beyond the last `Device`.
    for &id in &ids {
        let device = Device::new(id).expect("device");
        let buffer = DeviceBuf::from_slice(&device, &[7u8; 64]).expect("a buffer");
        assert_eq!(buffer.to_vec().expect("read"), [7u8; 64]);
    }
    println!("child child_owners_used_by_a_thread_local_destructor done");
}
