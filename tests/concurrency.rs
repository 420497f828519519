//! Several threads using the safe API at once, on independent and shared
//! resources: a `DeviceBuf` read by many threads, a `VirtualRange` mapped
//! concurrently at different offsets (and raced for one offset), streams
//! and events per thread with a shared source buffer, and owners moved
//! between threads. Every byte is checked, each test finishes within a
//! time bound (a hang fails instead of blocking CI), and on the software
//! device the live counts return to where they started.
//!
//! The tests of this file share one process: they are serialised by a
//! file-local lock so that each one's count comparison sees only its own
//! resources. Rounds: small by default, times `ASCEND_TEST_SCALE`.

mod common;

use ascend::stream::{Event, Stream};
use ascend::vmm::{Granularity, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Device, DeviceBuf, Error, PinnedHostBuf};
use common::software_only;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::time::Duration;

const THREADS: usize = 4;
/// A test that takes longer than this is reported as hung.
const TIME_LIMIT: Duration = Duration::from_secs(10);

static SERIAL: Mutex<()> = Mutex::new(());

fn scale() -> usize {
    std::env::var("ASCEND_TEST_SCALE")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1usize)
        .max(1)
}

fn pattern(seed: usize, len: usize) -> Vec<u32> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761) ^ seed as u32)
        .collect()
}

/// Runs `body` on its own thread, serialised with the other tests of this
/// file; fails if it takes longer than [`TIME_LIMIT`] or if the software
/// device's live counts do not return to their starting values.
fn bounded(name: &'static str, body: impl FnOnce() + Send + 'static) {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let before = ascend::sys::soft::live();
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match finished.recv_timeout(TIME_LIMIT) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked: report its panic.
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
            unreachable!("{name}: the worker ended without finishing");
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{name}: not finished after {TIME_LIMIT:?} (deadlock?)"),
    }
    worker.join().expect("the worker finished");
    software_only(|| {
        let after = ascend::sys::soft::live();
        assert_eq!(after, before, "{name} leaked: {}", ascend::sys::soft::leak_report());
    });
}

#[test]
fn a_shared_device_buffer_is_read_by_many_threads() {
    bounded("shared DeviceBuf", || {
        let device = Device::new(0).unwrap();
        let data = pattern(7, 64 * 1024);
        let shared = Arc::new(DeviceBuf::from_slice(&device, &data).unwrap());
        let data = Arc::new(data);
        let rounds = 400 * scale();
        let readers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (shared, data) = (Arc::clone(&shared), Arc::clone(&data));
                std::thread::spawn(move || {
                    for round in 0..rounds {
                        // Whole reads and windows at moving offsets.
                        let start = (thread * 4099 + round * 1031) % (data.len() - 512);
                        let window = shared.as_slice().slice(start..start + 512).unwrap().to_vec().unwrap();
                        assert_eq!(window, data[start..start + 512], "thread {thread} round {round}");
                        if round % 8 == 0 {
                            assert_eq!(shared.to_vec().unwrap(), *data);
                        }
                    }
                })
            })
            .collect();
        for reader in readers {
            reader.join().unwrap();
        }
        // The last owner frees it explicitly.
        let shared = Arc::try_unwrap(shared).expect("all readers are done");
        shared.free().unwrap();
    });
}

#[test]
fn one_range_is_mapped_concurrently_at_different_offsets() {
    bounded("shared VirtualRange", || {
        let device = Device::new(0).unwrap();
        let prop = PhysicalMemProp::device(&device);
        let granule = prop.granularity(Granularity::Minimum).unwrap();
        let range = Arc::new(VirtualRange::reserve(THREADS * granule).unwrap());
        let rounds = 200 * scale();
        let start = Arc::new(Barrier::new(THREADS));
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (range, start, prop) = (Arc::clone(&range), Arc::clone(&start), prop);
                std::thread::spawn(move || {
                    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
                    let words = 1024;
                    start.wait();
                    for round in 0..rounds {
                        // `map` takes `&self`: every thread maps into the
                        // same range, each at its own granule.
                        let mut region = range.map(thread * granule, &physical).unwrap();
                        let data = pattern(thread * 1000 + round, words);
                        let mut view = region.as_mut_slice::<u32>().unwrap();
                        view.slice_mut(..words).unwrap().write_from_host(&data).unwrap();
                        let back = region
                            .as_slice::<u32>()
                            .unwrap()
                            .slice(..words)
                            .unwrap()
                            .to_vec()
                            .unwrap();
                        assert_eq!(back, data, "thread {thread} round {round}");
                        if round % 2 == 0 {
                            region.unmap().unwrap();
                        } else {
                            drop(region);
                        }
                    }
                    physical.free().unwrap();
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        Arc::try_unwrap(range).expect("all mappers are done").release().unwrap();
    });
}

#[test]
fn threads_racing_for_one_offset_never_both_map_it() {
    bounded("racing for one offset", || {
        let device = Device::new(0).unwrap();
        let prop = PhysicalMemProp::device(&device);
        let granule = prop.granularity(Granularity::Minimum).unwrap();
        let range = VirtualRange::reserve(2 * granule).unwrap();
        let holders = AtomicUsize::new(0);
        let wins = AtomicUsize::new(0);
        let rounds = 500 * scale();
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (range, holders, wins) = (&range, &holders, &wins);
                scope.spawn(move || {
                    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
                    for _ in 0..rounds {
                        match range.map(granule, &physical) {
                            Ok(region) => {
                                let others = holders.fetch_add(1, Ordering::SeqCst);
                                assert_eq!(others, 0, "thread {thread}: two mappings at one offset");
                                wins.fetch_add(1, Ordering::Relaxed);
                                std::thread::yield_now();
                                holders.fetch_sub(1, Ordering::SeqCst);
                                region.unmap().unwrap();
                            }
                            Err(Error::InvalidArgument { reason, .. }) => {
                                assert!(reason.contains("overlaps"), "thread {thread}: {reason}");
                            }
                            Err(other) => panic!("thread {thread}: {other}"),
                        }
                    }
                });
            }
        });
        assert!(wins.load(Ordering::Relaxed) > 0, "nobody ever mapped");
    });
}

#[test]
fn streams_per_thread_with_a_shared_source() {
    bounded("streams per thread", || {
        let devices = Device::count().unwrap().min(2) as usize;
        let len = 16 * 1024;
        // One read-only source per device, shared by every thread of it.
        let sources: Arc<Vec<(Vec<u32>, DeviceBuf<u32>)>> = Arc::new(
            (0..devices)
                .map(|id| {
                    let data = pattern(100 + id, len);
                    let buf = DeviceBuf::from_slice(&Device::new(id as i32).unwrap(), &data).unwrap();
                    (data, buf)
                })
                .collect(),
        );
        let rounds = 100 * scale();
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let sources = Arc::clone(&sources);
                std::thread::spawn(move || {
                    let id = thread % sources.len();
                    let device = Device::new(id as i32).unwrap();
                    let stream = Stream::new(&device).unwrap();
                    let done = Event::new(&device).unwrap();
                    let (source_data, source) = &sources[id];
                    let mut private = DeviceBuf::<u32>::zeroed(&device, len).unwrap();
                    let mut host_in = PinnedHostBuf::<u32>::zeroed(&device, len).unwrap();
                    let mut host_out = PinnedHostBuf::<u32>::zeroed(&device, len).unwrap();
                    for round in 0..rounds {
                        let mine = pattern(thread * 1000 + round, len);
                        host_in.copy_from_slice(&mine);
                        stream
                            .scope(|s| {
                                let private = s.hold_device(&mut private);
                                let host_out = s.hold_host(&mut host_out);
                                // Own data up and back down.
                                s.copy_to_device(&host_in, private)?;
                                s.copy_to_host(private, host_out)?;
                                Ok(())
                            })
                            .unwrap();
                        assert_eq!(&host_out[..], &mine[..], "thread {thread} round {round}: own data");
                        // The shared source, copied on the device by every
                        // thread of that device at once.
                        stream
                            .scope(|s| {
                                let private = s.hold_device(&mut private);
                                s.copy_on_device(source, private)?;
                                s.copy_to_host(private, &mut host_out)?;
                                s.record(&done)
                            })
                            .unwrap();
                        assert!(done.query().unwrap(), "a synchronised event is complete");
                        assert_eq!(
                            &host_out[..],
                            &source_data[..],
                            "thread {thread} round {round}: shared source"
                        );
                    }
                    stream.destroy().unwrap();
                    done.destroy().unwrap();
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        // The sources still hold their data after all that reading.
        for (data, buf) in sources.iter() {
            assert_eq!(buf.to_vec().unwrap(), *data);
        }
    });
}

#[test]
fn owners_move_between_threads() {
    bounded("owners move between threads", || {
        let (to_consumer, from_producer) = mpsc::channel::<(usize, DeviceBuf<u32>, PhysicalAlloc, Stream)>();
        let rounds = 100 * scale();
        let producer = std::thread::spawn(move || {
            let device = Device::new(1 % Device::count().unwrap() as i32).unwrap();
            let prop = PhysicalMemProp::device(&device);
            let granule = prop.granularity(Granularity::Minimum).unwrap();
            for round in 0..rounds {
                let buf = DeviceBuf::from_slice(&device, &pattern(round, 256)).unwrap();
                let physical = PhysicalAlloc::new(&prop, granule).unwrap();
                let stream = Stream::new(&device).unwrap();
                to_consumer.send((round, buf, physical, stream)).unwrap();
            }
        });
        let consumer = std::thread::spawn(move || {
            let mut received = 0;
            for (round, buf, physical, stream) in from_producer {
                // Used and freed on a thread that did not create them.
                assert_eq!(buf.to_vec().unwrap(), pattern(round, 256));
                let range = VirtualRange::reserve(physical.size()).unwrap();
                let region = range.map(0, &physical).unwrap();
                let mut host = vec![0u32; 256];
                stream.scope(|s| s.copy_to_host(&buf, &mut host)).unwrap();
                assert_eq!(host, pattern(round, 256));
                region.unmap().unwrap();
                range.release().unwrap();
                physical.free().unwrap();
                stream.destroy().unwrap();
                buf.free().unwrap();
                received += 1;
            }
            received
        });
        producer.join().unwrap();
        assert_eq!(consumer.join().unwrap(), rounds);
    });
}
