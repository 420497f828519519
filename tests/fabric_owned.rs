//! `ascend::fabric`'s owned forms (issue 40 part 4): `OwnedPool`,
//! `OwnedMember`, owned registrations and `OwnedTransfer`, each body in a
//! child process on the software fabric (a BM world is one per process).
//! An owned pool in an `Arc` used from several threads; every drop order
//! tearing down in the right one; buffers given back with their bytes; a
//! transfer holding its buffers until waited; a failed wait or
//! unregistration leaking, never freeing. Assertions that only the software
//! fabric can answer (its leak counts, its fault injection) say so.

mod fabric_common;

use ascend::fabric::sys::{self, soft::Fault, soft::inject_fault};
use ascend::fabric::{
    BigMemory, BmConfig, FabricError, OwnedMember, OwnedPool, OwnedRegisteredDevice, OwnedRegisteredHost, PoolOptions,
    StoreUrl, TransferWaitError, Transport, UnregisterError,
};
use ascend::pool::{DevicePool, PoolConfig};
use ascend::sys::soft;
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use fabric_common::in_child;
use std::sync::{Arc, Mutex};

const MIB: u64 = 1 << 20;

fn bm(port: u16, device: &Device) -> Arc<BigMemory> {
    let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a store URL");
    Arc::new(BigMemory::init(&store, 1, device, &BmConfig::default()).expect("a BM world of one"))
}

fn options() -> PoolOptions {
    PoolOptions::new(Transport::SDMA | Transport::HOST_SHM)
        .hbm(2 * MIB)
        .dram(2 * MIB)
}

fn member(bm: &Arc<BigMemory>, id: u32) -> Arc<OwnedMember> {
    let pool = Arc::new(OwnedPool::create(Arc::clone(bm), id, &options()).expect("a pool"));
    Arc::new(pool.join().expect("join"))
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

/// The `smem_bm_*` calls the safe layer logged (its debug lines name them
/// first), and its error lines.
static CALLS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct CallLog;

impl log::Log for CallLog {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        if !record.target().starts_with("ascend::fabric") {
            return;
        }
        let text = record.args().to_string();
        if record.level() == log::Level::Error {
            ERRORS.lock().expect("the error log").push(text.clone());
        }
        if let Some((api, _)) = text.split_once(':')
            && api.starts_with("smem_bm_")
        {
            CALLS.lock().expect("the call log").push(api.to_string());
        }
    }

    fn flush(&self) {}
}

fn log_calls() {
    log::set_logger(&CallLog).expect("the only logger");
    log::set_max_level(log::LevelFilter::Debug);
}

fn take_calls() -> Vec<String> {
    std::mem::take(&mut *CALLS.lock().expect("the call log"))
}

/// An engine's long-lived state: the member, shared by its workers.
struct Engine {
    fabric: Arc<OwnedMember>,
}

#[test]
fn an_owned_pool_in_an_arc_serves_several_threads() {
    in_child("an_owned_pool_in_an_arc_serves_several_threads", |port| {
        const BLOCK: usize = 64 << 10;
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        {
            let bm = bm(port, &device);
            let engine = Arc::new(Engine { fabric: member(&bm, 1) });
            drop(bm); // the engine keeps the world
            let workers: Vec<_> = (0..4u8)
                .map(|worker| {
                    let engine = Arc::clone(&engine);
                    let device = device.clone();
                    std::thread::spawn(move || {
                        let fabric = &engine.fabric;
                        let data = pattern(BLOCK, worker);
                        let offset = usize::from(worker) * BLOCK;
                        for _ in 0..8 {
                            // A device block out to the global HBM, back
                            // through the global DRAM into a host buffer.
                            let kv = DeviceBuf::from_slice(&device, &data).expect("a device buffer");
                            let kv = fabric.register_device(kv).expect("register the block");
                            let back = PinnedHostBuf::<u8>::zeroed(&device, BLOCK).expect("pinned");
                            let mut back = fabric.register_host(back).expect("register the host buffer");
                            let hbm = fabric.peer_hbm(0).expect("HBM").slice(offset..offset + BLOCK);
                            let dram = fabric.peer_dram(0).expect("DRAM").slice(offset..offset + BLOCK);
                            let (hbm, dram) = (hbm.expect("a block"), dram.expect("a block"));
                            fabric.copy(kv.read(), hbm).expect("L2G");
                            fabric.copy(hbm, dram).expect("G2G");
                            fabric.copy(dram, back.write()).expect("GH2H");
                            assert_eq!(back.as_slice(), &data[..], "worker {worker}");
                            kv.into_inner().expect("unregister").free().expect("free");
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().expect("a worker without a panic");
            }
            drop(engine); // the last owner: leave, destroy, uninit
        }
        // Software fabric only: its device counts every buffer.
        assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
        // The world is gone: a new one can start.
        drop(bm(port, &device));
    });
}

/// The four owners of one registration's chain, dropped in `order`.
fn drop_in_order(port: u16, device: &Device, order: &[usize; 4]) {
    let bm = bm(port, device);
    let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 3, &options()).expect("a pool"));
    let member = Arc::new(pool.join().expect("join"));
    let data = pattern(4096, order[0] as u8);
    let host = PinnedHostBuf::from_slice(device, &data).expect("pinned");
    let registered = member.register_host(host).expect("register");
    member
        .copy(
            registered.read(),
            member.peer_dram(0).expect("DRAM").slice(..4096).expect("4 KiB"),
        )
        .expect("H2GH");
    let mut owners: [Option<Box<dyn Send>>; 4] = [
        Some(Box::new(bm)),
        Some(Box::new(pool)),
        Some(Box::new(member)),
        Some(Box::new(registered)),
    ];
    for &index in order {
        drop(owners[index].take());
    }
}

#[test]
fn every_drop_order_tears_down_in_the_right_one() {
    in_child("every_drop_order_tears_down_in_the_right_one", |port| {
        log_calls();
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        let mut orders = Vec::new();
        for a in 0..4 {
            for b in 0..4 {
                for c in 0..4 {
                    for d in 0..4 {
                        let order = [a, b, c, d];
                        let mut seen = [false; 4];
                        order.iter().for_each(|&i| seen[i] = true);
                        if seen.iter().all(|&s| s) {
                            orders.push(order);
                        }
                    }
                }
            }
        }
        assert_eq!(orders.len(), 24);
        for order in orders {
            take_calls();
            drop_in_order(port, &device, &order);
            assert_eq!(
                take_calls(),
                [
                    "smem_bm_create2",
                    "smem_bm_join",
                    "smem_bm_register_user_mem",
                    "smem_bm_unregister_user_mem",
                    "smem_bm_leave",
                    "smem_bm_destroy",
                    "smem_bm_uninit",
                ],
                "dropped in the order {order:?} (0 BM, 1 pool, 2 member, 3 registration)"
            );
            // Software fabric only: nothing of the round is left.
            assert_eq!(soft::live(), before, "order {order:?} left:\n{}", soft::leak_report());
        }
    });
}

#[test]
fn into_inner_gives_each_buffer_back_with_its_bytes() {
    in_child("into_inner_gives_each_buffer_back_with_its_bytes", |port| {
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        {
            let bm = bm(port, &device);
            let member = member(&bm, 4);
            let data = pattern(8192, 7);
            let staging = member
                .register_host(PinnedHostBuf::from_slice(&device, &data).expect("pinned"))
                .expect("register the host buffer");
            let device_buf = DeviceBuf::<u8>::zeroed(&device, 8192).expect("a device buffer");
            let mut device_side = member.register_device(device_buf).expect("register the device buffer");
            let blocks = DevicePool::new(&device, PoolConfig::default()).expect("a device pool");
            let block = blocks.alloc(8192).expect("a block").into_inner().expect("ready");
            let mut block_side = member.register_device(block).expect("register the pool block");
            let dram = member.peer_dram(0).expect("DRAM").slice(..8192).expect("8 KiB");
            member.copy(staging.read(), dram).expect("H2GH");
            member.copy(dram, device_side.write()).expect("GH2L");
            let (front, back) = block_side.write().split_at(4096).expect("halves");
            member
                .copy_batch(&[
                    (dram.slice(4096..).expect("half"), front),
                    (dram.slice(..4096).expect("half"), back),
                ])
                .expect("GH2L batch, halves swapped");
            assert_eq!(&staging.into_inner().expect("the host buffer back")[..], &data[..]);
            assert_eq!(
                device_side
                    .into_inner()
                    .expect("the device buffer back")
                    .to_vec()
                    .expect("read"),
                data
            );
            let block = block_side.into_inner().expect("the block back");
            let mut swapped = data[4096..].to_vec();
            swapped.extend_from_slice(&data[..4096]);
            let mut read = vec![0u8; 8192];
            ascend::DeviceSlice::<u8>::from_storage(&block)
                .expect("a view")
                .read_to_host(&mut read)
                .expect("read");
            assert_eq!(read, swapped);
            // A buffer that cannot be registered comes back too.
            let other = DeviceBuf::<u8>::zeroed(&device, 0).expect("empty");
            let refused = member.register_device(other).expect_err("empty is refused");
            assert!(
                matches!(refused.error, FabricError::InvalidArgument { .. }),
                "{}",
                refused.error
            );
            assert_eq!(refused.storage.len(), 0);
        }
        // Software fabric only.
        assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
    });
}

#[test]
fn a_transfer_holds_its_buffers_until_waited() {
    in_child("a_transfer_holds_its_buffers_until_waited", |port| {
        log_calls();
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        {
            let bm = bm(port, &device);
            let member = member(&bm, 5);
            drop(bm);
            let data = pattern(16384, 3);
            let kv = member
                .register_device(DeviceBuf::from_slice(&device, &data).expect("device"))
                .expect("register");
            let hbm = member.peer_hbm(0).expect("HBM");
            let dram = member.peer_dram(0).expect("DRAM");
            let mut offload = member.transfer::<OwnedRegisteredDevice<DeviceBuf<u8>>>();
            offload
                .hold(kv, |kv, queue| {
                    let (head, tail) = kv.read().split_at(8192)?;
                    queue.copy(head, hbm.slice(..8192)?)?; // L2G
                    queue.copy_batch(&[(tail, dram.slice(..8192)?)]) // L2GH
                })
                .expect("queued");
            assert_eq!(offload.len(), 1);
            // MemFabric's wait finishes the calling thread's copies only: a
            // wait on another thread is refused with the transfer back, and
            // nothing is called.
            take_calls();
            let elsewhere = std::thread::spawn(move || offload.wait()).join().expect("no panic");
            let offload = match elsewhere {
                Err(TransferWaitError {
                    transfer,
                    error: FabricError::InvalidArgument { method, reason, .. },
                    ..
                }) => {
                    assert_eq!(method, "OwnedTransfer::wait");
                    assert!(reason.contains("thread"), "{reason}");
                    transfer
                }
                other => panic!("expected the wait on another thread refused, got {other:?}"),
            };
            assert!(take_calls().is_empty(), "nothing called on the other thread");
            let waited = offload.wait().expect("waited on the thread that queued");
            assert_eq!(take_calls(), ["smem_bm_wait"], "waited, nothing unregistered yet");
            let kv = waited.into_iter().next().expect("the registration back");

            // A side the transfer does not hold is refused, and nothing is
            // queued for it.
            let outside = member
                .register_host(PinnedHostBuf::<u8>::zeroed(&device, 8192).expect("pinned"))
                .expect("register");
            let mut refusing = member.transfer::<OwnedRegisteredHost<u8>>();
            let inside = member
                .register_host(PinnedHostBuf::<u8>::zeroed(&device, 16384).expect("pinned"))
                .expect("register");
            let refused = refusing.hold(inside, |_, queue| queue.copy(outside.read(), dram.slice(..8192)?));
            match refused {
                Err(FabricError::InvalidArgument { method, reason, .. }) => {
                    assert_eq!(method, "TransferQueue::copy");
                    assert!(reason.contains("does not hold"), "{reason}");
                }
                other => panic!("expected a refusal, got {other:?}"),
            }
            take_calls();
            drop(refusing);
            assert_eq!(take_calls(), ["smem_bm_unregister_user_mem"], "nothing queued: no wait");
            // Both halves back into a held buffer.
            let mut fetch = member.transfer::<OwnedRegisteredHost<u8>>();
            let inside = member
                .register_host(PinnedHostBuf::<u8>::zeroed(&device, 16384).expect("pinned"))
                .expect("register");
            fetch
                .hold(inside, |mut inside, queue| {
                    let (head, tail) = inside.write().split_at(8192)?;
                    queue.copy(hbm.slice(..8192)?, head)?; // G2H
                    queue.copy(dram.slice(..8192)?, tail) // GH2H
                })
                .expect("queued");
            take_calls();
            let fetched = fetch.wait().expect("waited").pop().expect("held");
            assert_eq!(fetched.as_slice(), &data[..]);
            take_calls();
            let mut unwaited = member.transfer::<OwnedRegisteredHost<u8>>();
            unwaited
                .hold(fetched, |f, queue| queue.copy(f.read(), dram.slice(..16384)?))
                .expect("queued");
            drop(unwaited);
            assert_eq!(
                take_calls(),
                ["smem_bm_wait", "smem_bm_unregister_user_mem"],
                "dropped un-waited: waited, then unregistered"
            );
            drop((kv, outside));
        }
        // Software fabric only.
        assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
    });
}

#[test]
fn a_failed_wait_or_unregistration_leaks_and_never_frees() {
    in_child("a_failed_wait_or_unregistration_leaks_and_never_frees", |port| {
        log_calls();
        let device = Device::new(0).expect("device 0");
        let bm = bm(port, &device);
        let member = member(&bm, 6);
        let dram = member.peer_dram(0).expect("DRAM");
        let data = pattern(4096, 9);
        let staging = || {
            member
                .register_host(PinnedHostBuf::from_slice(&device, &data).expect("pinned"))
                .expect("register")
        };

        // `wait` fails: the transfer comes back, holding; waiting again works.
        let mut transfer = member.transfer();
        transfer
            .hold(staging(), |s, queue| queue.copy(s.read(), dram.slice(..4096)?))
            .expect("queued");
        inject_fault("smem_bm_wait", 1, Fault::Fail(sys::SMEM_TIMEOUT)).expect("armed");
        let Err(TransferWaitError { transfer, error }) = transfer.wait() else {
            panic!("the injected fault fails the wait");
        };
        assert_eq!(error.code(), Some(sys::SMEM_TIMEOUT), "{error}");
        assert_eq!(transfer.len(), 1, "still held");
        let back = transfer.wait().expect("the second wait").pop().expect("held");
        assert_eq!(back.as_slice(), &data[..]);
        drop(back);

        // Dropped un-waited and the drop's wait fails: the buffer is leaked
        // (still allocated: software fabric only), never unregistered or
        // freed, and nothing panics.
        let live = soft::live();
        let mut transfer = member.transfer();
        transfer
            .hold(staging(), |s, queue| queue.copy(s.read(), dram.slice(..4096)?))
            .expect("queued");
        inject_fault("smem_bm_wait", 1, Fault::Fail(sys::SMEM_ERROR)).expect("armed");
        take_calls();
        drop(transfer);
        assert_eq!(take_calls(), ["smem_bm_wait"], "no unregistration after a failed wait");
        assert_eq!(
            soft::live().host_allocations,
            live.host_allocations + 1,
            "the held buffer is leaked, not freed"
        );
        assert!(
            ERRORS
                .lock()
                .expect("the error log")
                .iter()
                .any(|line| line.contains("are leaked")),
            "the leak is logged"
        );

        // `into_inner` fails: the registration comes back; trying again works.
        inject_fault("smem_bm_unregister_user_mem", 1, Fault::Fail(sys::SMEM_ERROR)).expect("armed");
        let Err(UnregisterError { registration, error }) = staging().into_inner() else {
            panic!("the injected fault fails the unregistration");
        };
        assert_eq!(error.code(), Some(sys::SMEM_ERROR), "{error}");
        let buffer = registration
            .into_inner()
            .map_err(FabricError::from)
            .expect("unregistered");
        assert_eq!(&buffer[..], &data[..]);
        drop(buffer);

        // Dropped and the unregistration fails: the buffer is leaked.
        let live = soft::live();
        let registered = staging();
        inject_fault("smem_bm_unregister_user_mem", 1, Fault::Fail(sys::SMEM_ERROR)).expect("armed");
        drop(registered);
        assert_eq!(
            soft::live().host_allocations,
            live.host_allocations + 1,
            "a buffer whose unregistration failed is leaked, not freed"
        );
        assert!(
            ERRORS
                .lock()
                .expect("the error log")
                .iter()
                .any(|line| line.contains("the buffer is leaked")),
            "the leak is logged"
        );
        // The leaked transfer holds the member: the rank stays joined.
        assert_eq!(Arc::strong_count(&member), 2, "the leaked registration's share");
    });
}

#[test]
fn a_panic_after_queueing_still_waits_before_the_buffer_comes_back() {
    in_child(
        "a_panic_after_queueing_still_waits_before_the_buffer_comes_back",
        |port| {
            let device = Device::new(0).expect("device 0");
            let bm = bm(port, &device);
            let member = member(&bm, 8);
            let data = pattern(4096, 11);
            let source = member
                .register_host(PinnedHostBuf::from_slice(&device, &data).expect("pinned"))
                .expect("register");
            let dram = member.peer_dram(0).expect("DRAM").slice(..4096).expect("4 KiB");
            let mut transfer = member.transfer::<OwnedRegisteredHost<u8>>();
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                transfer.hold(source, |source, queue| {
                    queue.copy(source.read(), dram)?; // H2GH, queued
                    panic!("after queueing");
                })
            }));
            assert!(unwound.is_err());
            // The queued copy is still known: the wait runs it (on the software
            // fabric the bytes move at this thread's wait).
            let source = transfer.wait().expect("waited").pop().expect("held");
            let back = member
                .register_host(PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("pinned"))
                .expect("register");
            let mut back = back;
            member.copy(dram, back.write()).expect("GH2H");
            assert_eq!(back.as_slice(), &data[..]);
            drop((source, back));
        },
    );
}
