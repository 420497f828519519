//! `ascend::fabric` across two processes (two ranks of one world on the
//! software fabric): each rank's copies reach the other's HBM and DRAM,
//! what one writes the other reads in its own share, and neither leaves
//! anything behind.

mod fabric_common;

use ascend::fabric::{BigMemory, BmConfig, Dram, FabricError, GlobalRange, PoolOptions, StoreUrl, Transport};
use ascend::sys::soft;
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use fabric_common::{child_name, in_children};
use std::time::{Duration, Instant};

const N: usize = 64 << 10;
const FLAG: usize = 1 << 20;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed))
        .collect()
}

#[test]
fn two_ranks_copy_into_each_others_memory() {
    in_children("two_ranks_copy_into_each_others_memory", 2, |port| {
        let device = Device::new(0).expect("device 0");
        let before = soft::live();
        {
            let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a URL");
            let bm = BigMemory::init(&store, 2, &device, &BmConfig::default()).expect("a world of two");
            let (rank, peer) = (bm.rank(), 1 - bm.rank());
            println!("rank {rank}");
            let pool = bm
                .create_pool(
                    1,
                    &PoolOptions::new(Transport::HOST_SHM | Transport::SDMA)
                        .hbm(2 << 20)
                        .dram(2 << 20),
                )
                .expect("the pool");
            let member = pool.join().expect("join (waits for both ranks)");
            assert_eq!(member.world_size(), 2);
            let (mine, theirs) = (
                member.peer_dram(rank).expect("mine"),
                member.peer_dram(peer).expect("theirs"),
            );
            assert_eq!(theirs.rank(), peer);
            assert_ne!(mine.gva(), theirs.gva());
            let (mine_hbm, theirs_hbm) = (
                member.peer_hbm(rank).expect("mine"),
                member.peer_hbm(peer).expect("theirs"),
            );

            let mut host = PinnedHostBuf::<u8>::zeroed(&device, N).expect("pinned");
            let mut local = DeviceBuf::<u8>::zeroed(&device, N).expect("device");
            let mut host_side = member.register_host(&mut host).expect("register host");
            let mut device_side = member.register_device(&mut local).expect("register device");
            fn flag(range: GlobalRange<'_, Dram>) -> GlobalRange<'_, Dram> {
                range.slice(FLAG..FLAG + 4096).expect("the flag")
            }
            // Polls this rank's flag block until it holds `expected`.
            let await_flag = |expected: &[u8], host_side: &mut ascend::fabric::RegisteredHost<'_, '_, u8>| {
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    member
                        .copy(flag(mine), host_side.slice_mut(..4096).expect("4 KiB"))
                        .expect("GH2H of my flag");
                    if host_side.as_slice()[..4096] == *expected {
                        return;
                    }
                    assert!(Instant::now() < deadline, "rank {rank}: the peer never wrote the flag");
                    std::thread::sleep(Duration::from_millis(20));
                }
            };
            let (ready, done) = (pattern(4096, 200), pattern(4096, 201));
            if rank == 0 {
                // Into rank 1's DRAM from host memory (H2GH) and its HBM
                // from device memory (L2G); read both back (GH2H, G2H).
                host_side.as_mut_slice().copy_from_slice(&pattern(N, 1));
                member
                    .copy(host_side.read(), theirs.slice(..N).expect("N"))
                    .expect("H2GH to the peer");
                member
                    .copy(host_side.read(), mine_hbm.slice(..N).expect("N"))
                    .expect("H2G to me");
                member
                    .copy(mine_hbm.slice(..N).expect("N"), device_side.write())
                    .expect("G2L from me");
                host_side.as_mut_slice().copy_from_slice(&pattern(N, 2));
                member
                    .copy(host_side.read(), mine_hbm.slice(..N).expect("N"))
                    .expect("H2G to me");
                member
                    .copy(device_side.read(), theirs_hbm.slice(..N).expect("N"))
                    .expect("L2G to the peer");
                member
                    .copy(theirs.slice(..N).expect("N"), host_side.write())
                    .expect("GH2H from the peer");
                assert_eq!(host_side.as_slice(), &pattern(N, 1)[..]);
                member
                    .copy(theirs_hbm.slice(..N).expect("N"), host_side.write())
                    .expect("G2H from the peer");
                assert_eq!(host_side.as_slice(), &pattern(N, 1)[..]);
                // Tell rank 1, then wait for its answer.
                host_side.as_mut_slice()[..4096].copy_from_slice(&ready);
                member
                    .copy(host_side.slice(..4096).expect("4 KiB"), flag(theirs))
                    .expect("the flag");
                await_flag(&done, &mut host_side);
                // Let rank 1 leave before this rank (which serves the store)
                // goes.
                std::thread::sleep(Duration::from_millis(300));
            } else {
                await_flag(&ready, &mut host_side);
                // What rank 0 wrote, in this rank's own share: GH2L, G2H.
                member
                    .copy(mine.slice(..N).expect("N"), device_side.write())
                    .expect("GH2L from me");
                assert_eq!(device_side.storage().to_vec().expect("read"), pattern(N, 1));
                member
                    .copy(mine_hbm.slice(..N).expect("N"), host_side.write())
                    .expect("G2H from me");
                assert_eq!(host_side.as_slice(), &pattern(N, 1)[..]);
                // Rank 0's HBM from here (G2G into my DRAM), then answer.
                member
                    .copy(theirs_hbm.slice(..N).expect("N"), mine.slice(N..2 * N).expect("N"))
                    .expect("G2G from the peer");
                member
                    .copy(mine.slice(N..2 * N).expect("N"), host_side.write())
                    .expect("GH2H");
                assert_eq!(host_side.as_slice(), &pattern(N, 2)[..]);
                host_side.as_mut_slice()[..4096].copy_from_slice(&done);
                member
                    .copy(host_side.slice(..4096).expect("4 KiB"), flag(theirs))
                    .expect("the answer");
            }
        }
        assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
    });
}

#[test]
fn copies_into_a_rank_that_died_fail_with_a_typed_error_and_others_go_on() {
    in_children(
        "copies_into_a_rank_that_died_fail_with_a_typed_error_and_others_go_on",
        2,
        |port| {
            let device = Device::new(0).expect("device 0");
            let before = soft::live();
            {
                let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a URL");
                let config = BmConfig::default().with_control_timeout(Duration::from_secs(1));
                let bm = BigMemory::init(&store, 2, &device, &config).expect("a world of two");
                let (rank, peer) = (bm.rank(), 1 - bm.rank());
                let pool = bm
                    .create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram(2 << 20))
                    .expect("the pool");
                let member = pool.join().expect("join");
                let (mine, theirs) = (
                    member.peer_dram(rank).expect("mine"),
                    member.peer_dram(peer).expect("theirs"),
                );
                let mut host = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("pinned");
                let mut side = member.register_host(&mut host).expect("register");
                let flag = pattern(4096, 77);
                if rank == 1 {
                    // Tell rank 0, then die without leaving.
                    side.as_mut_slice().copy_from_slice(&flag);
                    member
                        .copy(side.read(), theirs.slice(..4096).expect("4 KiB"))
                        .expect("the flag");
                    println!("child {} done", child_name());
                    std::process::exit(0);
                }
                let deadline = Instant::now() + Duration::from_secs(30);
                while side.as_slice() != flag {
                    assert!(Instant::now() < deadline, "rank 1 never wrote the flag");
                    std::thread::sleep(Duration::from_millis(20));
                    member
                        .copy(mine.slice(..4096).expect("4 KiB"), side.write())
                        .expect("my flag");
                }
                // Once the store has seen rank 1 go, copies touching its range
                // time out (hybm's BM_TIMEOUT, -7): an error, not a hang.
                let mut error = None;
                for _ in 0..250 {
                    match member.copy(theirs.slice(..4096).expect("4 KiB"), side.write()) {
                        Ok(()) => std::thread::sleep(Duration::from_millis(20)),
                        Err(failed) => {
                            error = Some(failed);
                            break;
                        }
                    }
                }
                let error = error.expect("a copy from the dead rank fails");
                assert!(
                    matches!(
                        error,
                        FabricError::PeerUnreachable {
                            api: "smem_bm_copy",
                            code: -7,
                            ..
                        }
                    ),
                    "{error}"
                );
                // This rank's own range goes on.
                member
                    .copy(side.read(), mine.slice(8192..12288).expect("4 KiB"))
                    .expect("H2GH to me");
            }
            assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
        },
    );
}
