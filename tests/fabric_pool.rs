//! `ascend::fabric`'s lifecycle and copies (issue 40 part 4), each body in
//! a child process on the software fabric (a BM world is one per process):
//! init → create → join → register → copy → unregister → leave → destroy →
//! uninit; every legal copy type once with its bytes checked; refusals
//! before any call; batches; asynchronous scopes; a `DevicePool` block to
//! the global pool and back; nothing left behind.

mod fabric_common;

use ascend::fabric::{
    BigMemory, BmConfig, FabricError, GlobalRange, Hbm, MemKind, Member, PoolOptions, StoreUrl, Transport,
};
use ascend::pool::{DevicePool, PoolConfig};
use ascend::stream::Ordered;
use ascend::sys::soft;
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use fabric_common::in_child;

const MIB: u64 = 1 << 20;

fn store(port: u16) -> StoreUrl {
    StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a store URL")
}

fn world(port: u16, device: &Device) -> BigMemory {
    BigMemory::init(&store(port), 1, device, &BmConfig::default()).expect("a BM world of one")
}

fn both() -> PoolOptions {
    PoolOptions::new(Transport::SDMA | Transport::HOST_SHM)
        .hbm(2 * MIB)
        .dram(2 * MIB)
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn refused(result: Result<impl std::fmt::Debug, FabricError>, method: &str, says: &str) {
    match result {
        Err(FabricError::InvalidArgument { method: m, reason, .. }) => {
            assert_eq!(m, method);
            assert!(reason.contains(says), "{reason}");
        }
        other => panic!("expected {method} to refuse ({says}), got {other:?}"),
    }
}

/// The C calls the safe layer logged (its debug lines name them first).
static CALLS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

struct CallLog;

impl log::Log for CallLog {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let text = record.args().to_string();
        if record.target().starts_with("ascend::fabric")
            && let Some((api, _)) = text.split_once(':')
            && api.starts_with("smem_bm_")
        {
            CALLS.lock().expect("the call log").push(api.to_string());
        }
    }

    fn flush(&self) {}
}

#[test]
fn the_lifecycle_runs_in_order_and_leaves_nothing() {
    in_child("the_lifecycle_runs_in_order_and_leaves_nothing", |port| {
        log::set_logger(&CallLog).expect("the only logger");
        log::set_max_level(log::LevelFilter::Debug);
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        for round in 0..2 {
            // Twice: everything was undone the first time.
            let bm = world(port, &device);
            assert_eq!((bm.rank(), bm.world_size()), (0, 1));
            let pool = bm.create_pool(5, &both()).expect("pool 5");
            refused(bm.create_pool(5, &both()), "BigMemory::create_pool", "pool 5 is alive");
            let member = pool.join().expect("join");
            refused(pool.join(), "GlobalPool::join", "joined pool 5 already");
            assert_eq!((member.rank(), member.world_size(), member.pool().id()), (0, 1, 5));
            let mut kv = DeviceBuf::from_slice(&device, &pattern(4096, round)).expect("a device buffer");
            let mut host = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("a pinned buffer");
            let device_side = member.register_device(&mut kv).expect("register the device buffer");
            let mut host_side = member.register_host(&mut host).expect("register the pinned buffer");
            let global = member.peer_hbm(0).expect("rank 0's HBM").slice(..4096).expect("4 KiB");
            member.copy(device_side.read(), global).expect("L2G");
            member.copy(global, host_side.write()).expect("G2H");
            assert_eq!(host_side.as_slice(), &pattern(4096, round)[..]);
            host_side.unregister().expect("unregister the pinned buffer");
            drop(device_side); // unregisters on drop
            host.free().expect("the pinned buffer is free again");
            kv.free().expect("the device buffer is free again");
            member.leave().expect("leave");
            // Left: the pool can be joined again.
            drop(pool.join().expect("join again"));
            drop(pool);
            // Destroyed: the id can be created again.
            drop(bm.create_pool(5, &both()).expect("pool 5 again"));
            drop(bm);
        }
        assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
        let round = [
            "smem_bm_create2",
            "smem_bm_join",
            "smem_bm_register_user_mem",
            "smem_bm_register_user_mem",
            "smem_bm_unregister_user_mem",
            "smem_bm_unregister_user_mem",
            "smem_bm_leave",
            "smem_bm_join",
            "smem_bm_leave",
            "smem_bm_destroy",
            "smem_bm_create2",
            "smem_bm_destroy",
            "smem_bm_uninit",
        ];
        assert_eq!(*CALLS.lock().expect("the call log"), [round, round].concat());
    });
}

#[test]
fn pool_options_are_checked_before_any_call() {
    in_child("pool_options_are_checked_before_any_call", |port| {
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let create = "BigMemory::create_pool";
        refused(
            bm.create_pool(1, &PoolOptions::new(Transport::SDMA)),
            create,
            "neither DRAM nor HBM",
        );
        refused(
            bm.create_pool(1, &PoolOptions::new(Transport::empty()).dram(MIB)),
            create,
            "no transport",
        );
        refused(
            bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 * MIB).max_hbm(MIB)),
            create,
            "HBM maximum of 1048576 bytes",
        );
        let pool = bm
            .create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 * MIB))
            .expect("HBM only");
        let member = pool.join().expect("join");
        refused(member.peer_dram(0), "Member::peer_dram", "no DRAM");
        refused(member.peer_hbm(1), "Member::peer_hbm", "rank 1 in a world of 1");
        let hbm = member.peer_hbm(0).expect("rank 0's HBM");
        assert_eq!(hbm.len(), 2 << 20);
        refused(hbm.slice(..(2 << 20) + 1), "GlobalRange::slice", "of 2097152");
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = hbm.slice(8..4);
        refused(reversed, "GlobalRange::slice", "");
        let mut empty = DeviceBuf::<u8>::zeroed(&device, 0).expect("an empty buffer");
        refused(
            member.register_device(&mut empty),
            "Member::register_device",
            "an empty buffer",
        );
    });
}

/// Copies `data` through `member` into registered memory and a global
/// range and back, checking every copy type once.
#[test]
fn every_copy_type_moves_the_bytes() {
    in_child("every_copy_type_moves_the_bytes", |port| {
        const N: usize = 64 << 10;
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let pool = bm.create_pool(2, &both()).expect("a pool");
        let member = pool.join().expect("join");
        let (hbm, dram) = (member.peer_hbm(0).expect("HBM"), member.peer_dram(0).expect("DRAM"));
        fn at<'m, K: MemKind>(range: GlobalRange<'m, K>, block: usize) -> GlobalRange<'m, K> {
            range.slice(block * N..(block + 1) * N).expect("a block")
        }

        let source = pattern(N, 1);
        let mut local = DeviceBuf::from_slice(&device, &source).expect("device source");
        let mut staging = PinnedHostBuf::from_slice(&device, &pattern(N, 2)).expect("host source");
        let mut device_side = member.register_device(&mut local).expect("register device");
        let mut host_side = member.register_host(&mut staging).expect("register host");

        // L2G, then G2H reads it back.
        member.copy(device_side.read(), at(hbm, 0)).expect("L2G");
        member.copy(at(hbm, 0), host_side.write()).expect("G2H");
        assert_eq!(host_side.as_slice(), &source[..], "L2G then G2H");
        // H2G, then G2L.
        host_side.as_mut_slice().copy_from_slice(&pattern(N, 3));
        member.copy(host_side.read(), at(hbm, 1)).expect("H2G");
        member.copy(at(hbm, 1), device_side.write()).expect("G2L");
        assert_eq!(
            device_side.storage().to_vec().expect("read"),
            pattern(N, 3),
            "H2G then G2L"
        );
        // L2GH, then GH2H.
        member.copy(device_side.read(), at(dram, 0)).expect("L2GH");
        host_side.as_mut_slice().fill(0);
        member.copy(at(dram, 0), host_side.write()).expect("GH2H");
        assert_eq!(host_side.as_slice(), &pattern(N, 3)[..], "L2GH then GH2H");
        // H2GH, then GH2L.
        host_side.as_mut_slice().copy_from_slice(&pattern(N, 4));
        member.copy(host_side.read(), at(dram, 1)).expect("H2GH");
        member.copy(at(dram, 1), device_side.write()).expect("GH2L");
        assert_eq!(
            device_side.storage().to_vec().expect("read"),
            pattern(N, 4),
            "H2GH then GH2L"
        );
        // G2G, each pair of kinds: HBM 1 (pattern 3) → DRAM 2 → HBM 2 →
        // HBM 3 → DRAM 3 → DRAM 4.
        member.copy(at(hbm, 1), at(dram, 2)).expect("G2G HBM to DRAM");
        member.copy(at(dram, 2), at(hbm, 2)).expect("G2G DRAM to HBM");
        member.copy(at(hbm, 2), at(hbm, 3)).expect("G2G HBM to HBM");
        member.copy(at(hbm, 3), at(dram, 3)).expect("G2G HBM to DRAM");
        member.copy(at(dram, 3), at(dram, 4)).expect("G2G DRAM to DRAM");
        member.copy(at(dram, 4), host_side.write()).expect("GH2H");
        assert_eq!(host_side.as_slice(), &pattern(N, 3)[..], "G2G");
        // Sub-ranges of registered buffers.
        member
            .copy(
                host_side.slice(100..200).expect("a slice"),
                at(dram, 5).slice(..100).expect("100 bytes"),
            )
            .expect("H2GH of a slice");
        member
            .copy(
                at(dram, 5).slice(..100).expect("100 bytes"),
                device_side.slice_mut(0..100).expect("a slice"),
            )
            .expect("GH2L into a slice");
        assert_eq!(
            device_side.storage().to_vec().expect("read")[..100],
            pattern(N, 3)[100..200],
            "slices"
        );
    });
}

#[test]
fn copies_of_different_lengths_or_pools_are_refused_before_the_call() {
    in_child(
        "copies_of_different_lengths_or_pools_are_refused_before_the_call",
        |port| {
            let device = Device::new(0).expect("device 0");
            let bm = world(port, &device);
            let (first, second) = (
                bm.create_pool(1, &both()).expect("pool 1"),
                bm.create_pool(2, &both()).expect("pool 2"),
            );
            let (one, two) = (first.join().expect("join 1"), second.join().expect("join 2"));
            let mut host = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("pinned");
            let registered = one.register_host(&mut host).expect("register");
            let dram = one.peer_dram(0).expect("DRAM");
            refused(
                one.copy(registered.read(), dram.slice(..4095).expect("a range")),
                "Member::copy",
                "4096 source bytes, 4095 destination bytes",
            );
            refused(
                one.copy_batch(&[
                    (registered.slice(..8).expect("8"), dram.slice(..8).expect("8")),
                    (registered.slice(..8).expect("8"), dram.slice(..9).expect("9")),
                ]),
                "Member::copy_batch",
                "8 source bytes, 9 destination bytes",
            );
            // A side of pool 1 with pool 2's member.
            let other = two.peer_dram(0).expect("pool 2's DRAM");
            refused(
                two.copy(registered.read(), other.slice(..4096).expect("a range")),
                "Member::copy",
                "another pool than pool 2",
            );
            refused(
                one.copy(other.slice(..8).expect("8"), dram.slice(..8).expect("8")),
                "Member::copy",
                "another pool",
            );
            // Zero bytes: nothing to do.
            one.copy(registered.slice(..0).expect("empty"), dram.slice(..0).expect("empty"))
                .expect("an empty copy");
        },
    );
}

#[test]
fn a_batch_moves_every_entry_and_an_empty_batch_nothing() {
    in_child("a_batch_moves_every_entry_and_an_empty_batch_nothing", |port| {
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let pool = bm.create_pool(3, &both()).expect("a pool");
        let member = pool.join().expect("join");
        let data = pattern(4 * 4096, 8);
        let mut host = PinnedHostBuf::from_slice(&device, &data).expect("pinned");
        let mut back = DeviceBuf::<u8>::zeroed(&device, 4 * 4096).expect("device");
        let registered = member.register_host(&mut host).expect("register host");
        let mut back_side = member.register_device(&mut back).expect("register device");
        let hbm = member.peer_hbm(0).expect("HBM");
        // Four blocks, scattered in reverse order: H2G.
        let scatter: Vec<_> = (0..4)
            .map(|i| {
                let dst = (3 - i) * 65536;
                (
                    registered.slice(i * 4096..(i + 1) * 4096).expect("a block"),
                    hbm.slice(dst..dst + 4096).expect("a block"),
                )
            })
            .collect();
        member.copy_batch(&scatter).expect("H2G batch");
        // Gathered back in order into the device buffer: G2L, its
        // destinations split from one write side.
        let mut gather = Vec::new();
        let mut rest = back_side.write();
        for i in 0..4 {
            let (head, tail) = rest.split_at(4096).expect("split");
            gather.push((
                hbm.slice((3 - i) * 65536..(3 - i) * 65536 + 4096).expect("a block"),
                head,
            ));
            rest = tail;
        }
        member.copy_batch(&gather).expect("G2L batch");
        drop(gather);
        assert_eq!(back_side.storage().to_vec().expect("read"), data);
        // An empty batch calls nothing and succeeds.
        let none: [(GlobalRange<'_, Hbm>, GlobalRange<'_, Hbm>); 0] = [];
        member.copy_batch(&none).expect("an empty batch");
    });
}

#[test]
fn a_scope_waits_for_its_copies_also_when_it_fails_or_panics() {
    in_child("a_scope_waits_for_its_copies_also_when_it_fails_or_panics", |port| {
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let pool = bm.create_pool(4, &both()).expect("a pool");
        let member = pool.join().expect("join");
        let data = pattern(8192, 5);
        let mut source = DeviceBuf::from_slice(&device, &data).expect("device");
        let mut back = PinnedHostBuf::<u8>::zeroed(&device, 8192).expect("pinned");
        let source_side = member.register_device(&mut source).expect("register device");
        let mut back_side = member.register_host(&mut back).expect("register host");
        let (hbm, dram) = (
            member.peer_hbm(0).expect("HBM").slice(..8192).expect("8 KiB"),
            member.peer_dram(0).expect("DRAM").slice(..8192).expect("8 KiB"),
        );
        let value = member
            .scope(|s| {
                s.copy(source_side.read(), hbm)?; // L2G
                s.copy(hbm, dram)?; // G2G
                s.copy_batch(&[(dram.slice(..4096)?, dram.slice(4096..)?)])?; // G2G batch
                Ok(7)
            })
            .expect("a scope");
        assert_eq!(value, 7);
        member.scope(|s| s.copy(dram, back_side.write())).expect("GH2H");
        let mut expected = data[..4096].to_vec();
        expected.extend_from_slice(&data[..4096]);
        assert_eq!(back_side.as_slice(), &expected[..]);

        // A failing closure: its error, after the queued copy was waited for.
        back_side.as_mut_slice().fill(0);
        let error = member
            .scope(|s| -> Result<(), FabricError> {
                s.copy(hbm, back_side.write())?;
                s.copy(source_side.read(), hbm.slice(..1)?)?; // refused
                Ok(())
            })
            .expect_err("the refused copy");
        assert!(
            matches!(
                error,
                FabricError::InvalidArgument {
                    method: "FabricScope::copy",
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(back_side.as_slice(), &data[..]);

        // A panicking closure: the scope waits while unwinding.
        back_side.as_mut_slice().fill(0);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = member.scope(|s| -> Result<(), FabricError> {
                s.copy(dram, back_side.write())?;
                panic!("inside the scope");
            });
        }));
        assert!(unwound.is_err());
        assert_eq!(back_side.as_slice(), &expected[..]);
    });
}

#[test]
fn copies_on_a_stream_run_in_its_order_and_have_run_when_the_scope_returns() {
    in_child(
        "copies_on_a_stream_run_in_its_order_and_have_run_when_the_scope_returns",
        |port| {
            let device = Device::new(0).expect("device 0");
            let before = soft::live();
            {
                let bm = world(port, &device);
                let pool = bm.create_pool(6, &both()).expect("a pool");
                let member = pool.join().expect("join");
                let stream = ascend::stream::Stream::new(&device).expect("a stream");
                const BLOCKS: usize = 4;
                const LEN: usize = 64 << 10;
                let mut sources: Vec<DeviceBuf<u8>> = (0..BLOCKS)
                    .map(|index| DeviceBuf::from_slice(&device, &pattern(LEN, index as u8)).expect("source"))
                    .collect();
                let mut targets: Vec<DeviceBuf<u8>> = (0..BLOCKS)
                    .map(|_| DeviceBuf::zeroed(&device, LEN).expect("target"))
                    .collect();
                let source_sides = sources
                    .iter_mut()
                    .map(|buffer| member.register_device(buffer).expect("register"))
                    .collect::<Vec<_>>();
                let mut target_sides = targets
                    .iter_mut()
                    .map(|buffer| member.register_device(buffer).expect("register"))
                    .collect::<Vec<_>>();
                // One slot of the global DRAM and one of the HBM, reused by
                // every block: only the stream's order gives each target its
                // own block.
                let slot = member.peer_dram(0).expect("DRAM").slice(..LEN).expect("a slot");
                let hbm = member.peer_hbm(0).expect("HBM").slice(..LEN).expect("a slot");
                let writes: Vec<_> = target_sides.iter_mut().map(|side| side.write()).collect();
                stream
                    .scope(|s| {
                        for (source, write) in source_sides.iter().zip(writes) {
                            member.copy_on(s, source.read(), slot)?; // L2GH
                            member.copy_batch_on(s, &[(slot, hbm)])?; // G2G
                            member.copy_on(s, hbm, write)?; // G2L
                        }
                        Ok(())
                    })
                    .expect("the stream's copies");
                drop(source_sides);
                drop(target_sides);
                for (index, target) in targets.iter().enumerate() {
                    assert_eq!(
                        target.to_vec().expect("read"),
                        pattern(LEN, index as u8),
                        "block {index}"
                    );
                }

                // A stream of another device is refused before any call.
                let other = Device::new(1).expect("device 1");
                let elsewhere = ascend::stream::Stream::new(&other).expect("a stream on device 1");
                let error = elsewhere
                    .scope(|s| Ok(member.copy_on(s, slot, hbm)?))
                    .expect_err("another device");
                let ascend::Error::External { source, .. } = &error else {
                    panic!("expected the fabric's error, got {error}");
                };
                refused(
                    Err::<(), _>(source.downcast_ref::<FabricError>().expect("a FabricError").clone()),
                    "Member::copy_on",
                    "device 1",
                );
            }
            // Software device only: nothing of the device is left.
            assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
        },
    );
}

#[test]
fn a_device_pool_block_goes_to_the_global_dram_and_back() {
    in_child("a_device_pool_block_goes_to_the_global_dram_and_back", |port| {
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        {
            let bm = world(port, &device);
            let pool = bm
                .create_pool(6, &PoolOptions::new(Transport::HOST_SHM).dram(4 * MIB))
                .expect("a DRAM pool");
            let member = pool.join().expect("join");
            let blocks = DevicePool::new(&device, PoolConfig::default()).expect("a device pool");
            let kv = pattern(128 << 10, 61);
            let mut block = blocks.alloc(kv.len()).expect("a block").into_inner().expect("ready");
            let mut fetched = blocks.alloc(kv.len()).expect("a block").into_inner().expect("ready");
            {
                let mut staging = PinnedHostBuf::from_slice(&device, &kv).expect("pinned");
                let staged = member.register_host(&mut staging).expect("register staging");
                let mut registered = member.register_device(&mut block).expect("register the block");
                let dram = member.peer_dram(0).expect("DRAM");
                let (first, second) = (
                    dram.slice(..kv.len()).expect("a range"),
                    dram.slice(MIB as usize..MIB as usize + kv.len()).expect("a range"),
                );
                // Fill the block through the pool: H2GH, then GH2L.
                member.copy(staged.read(), first).expect("H2GH");
                member.copy(first, registered.write()).expect("GH2L into the block");
                // The block to the global DRAM (L2GH) and back into another
                // block (GH2L), inside scopes.
                let mut target = member.register_device(&mut fetched).expect("register the other block");
                member
                    .scope(|s| s.copy(registered.read(), second))
                    .expect("L2GH from the block");
                member
                    .scope(|s| s.copy(second, target.write()))
                    .expect("GH2L into the other block");
            }
            // Unregistered: the blocks are the pool's again.
            assert_eq!(Ordered::new(block).view().to_vec::<u8>().expect("read"), kv);
            assert_eq!(Ordered::new(fetched).view().to_vec::<u8>().expect("read"), kv);
        }
        assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
    });
}

/// `Member` is used in signatures: keep the import honest.
#[allow(dead_code)]
fn takes_member(_: &Member<'_>) {}
