//! MemFabric on the software fabric (`ascend::fabric`, issue 40's figures):
//!
//! - `fabric_copy_64B` / `fabric_batch_122x64B`: the safe layer against the
//!   raw `smem_bm_copy` / `smem_bm_copy_batch` it wraps, on this rank's own
//!   DRAM (no peer involved). Goal: ≤ 1 µs more per copy and ≤ 50 ns more
//!   per batch entry.
//! - `fabric_cross_process/<size>`: a copy from registered host memory into
//!   another process's DRAM through the global pool (H2GH), beside a host
//!   memcpy of the same bytes. Goal: ≥ 0.8× memcpy's speed from 1 MiB.
//! - `fabric_kv_batch`: the `kv_offload` example's batch, 61 × 128 KiB +
//!   61 × 16 KiB of device memory into the other process's DRAM (L2GH), beside
//!   a memcpy of the same 122 blocks.
//!
//! The benchmark starts a copy of itself as rank 1 of a world of two (it
//! contributes DRAM and waits until its standard input closes).
//!
//! ```text
//! cargo bench -p ascend-benches --bench fabric
//! ```

mod common;

use ascend::fabric::{BigMemory, BmConfig, Member, PoolOptions, StoreUrl, Transport, sys as mf};
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use common::{config, label, software_device};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::ffi::c_void;
use std::hint::black_box;
use std::io::Read;
use std::process::{Command, Stdio};

/// Set in the child: the store's port.
const HOLDER: &str = "ASCEND_BENCH_FABRIC_HOLDER";
const WORLD: u32 = 2;
const DRAM_PER_RANK: u64 = 32 << 20;
const POOL_ID: u32 = 3;
const SMALL: usize = 64;
const ENTRIES: usize = 122;
const CROSS_SIZES: [usize; 5] = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20];

fn options() -> PoolOptions {
    PoolOptions::new(Transport::HOST_SHM).dram(DRAM_PER_RANK)
}

fn world(port: u16, rank: u32) -> BigMemory {
    mf::select_backend(mf::BackendRequest::Software).expect("the software fabric");
    let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a URL");
    let device = Device::new(0).expect("device 0");
    BigMemory::init(&store, WORLD, &device, &BmConfig::default().with_rank(rank)).expect("the world")
}

/// Rank 1: gives its DRAM to the pool until the benchmark closes its stdin.
fn holder(port: u16) {
    let bm = world(port, 1);
    let pool = bm.create_pool(POOL_ID, &options()).expect("the pool");
    let member = pool.join().expect("join");
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    member.leave().expect("leave");
}

fn main() {
    software_device();
    if let Ok(port) = std::env::var(HOLDER) {
        holder(port.parse().expect("a port"));
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(std::env::current_exe().expect("this program"))
        .env(HOLDER, port.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("rank 1");
    {
        let bm = world(port, 0);
        let pool = bm.create_pool(POOL_ID, &options()).expect("the pool");
        let member = pool.join().expect("join (waits for rank 1)");
        let mut c = config().configure_from_args();
        safe_against_raw(&mut c, &member);
        cross_process(&mut c, &member);
        kv_batch(&mut c, &member);
        c.final_summary();
        // Rank 1 leaves before this rank, which serves the store, ends.
        drop(child.stdin.take());
        let status = child.wait().expect("rank 1 ends");
        assert!(status.success(), "rank 1: {status}");
        member.leave().expect("leave");
    }
}

/// The safe layer over the raw calls, on this rank's own DRAM.
fn safe_against_raw(c: &mut Criterion, member: &Member<'_>) {
    let device = member.pool().big_memory().device().clone();
    let mut host = PinnedHostBuf::<u8>::zeroed(&device, SMALL * ENTRIES).expect("pinned");
    let registered = member.register_host(&mut host).expect("register");
    let mine = member.peer_dram(member.rank()).expect("my DRAM");
    let handle = member.pool().as_raw();
    let (src, dst) = (registered.as_slice().as_ptr() as u64, mine.gva());

    let mut group = c.benchmark_group("fabric_copy_64B");
    group.bench_function("raw", |b| {
        b.iter(|| {
            let mut params = mf::smem_copy_params_t {
                src: black_box(src) as *const c_void,
                dest: dst as *mut c_void,
                dataSize: SMALL,
                stream: std::ptr::null_mut(),
            };
            // SAFETY: registered host memory and this rank's own DRAM, 64
            // bytes each, of a live joined handle.
            let code = unsafe { mf::smem_bm_copy(handle, &mut params, mf::SMEMB_COPY_H2GH, 0) };
            assert_eq!(code, mf::SMEM_OK);
        })
    });
    let (small_src, small_dst) = (
        registered.slice(..SMALL).expect("64 B"),
        mine.slice(..SMALL).expect("64 B"),
    );
    group.bench_function("safe", |b| {
        b.iter(|| member.copy(black_box(small_src), small_dst).expect("copy"))
    });
    group.finish();

    let mut group = c.benchmark_group("fabric_batch_122x64B");
    let mut sources: Vec<*mut c_void> = (0..ENTRIES)
        .map(|i| (src + (i * SMALL) as u64) as *mut c_void)
        .collect();
    let mut destinations: Vec<*mut c_void> = (0..ENTRIES).map(|i| (dst + (i * 4096) as u64) as *mut c_void).collect();
    let sizes = vec![SMALL as u64; ENTRIES];
    group.bench_function("raw", |b| {
        b.iter(|| {
            let mut params = mf::smem_batch_copy_params_t {
                sources: sources.as_mut_ptr(),
                destinations: destinations.as_mut_ptr(),
                dataSizes: sizes.as_ptr(),
                batchSize: ENTRIES as u32,
                stream: std::ptr::null_mut(),
            };
            // SAFETY: 122 entries in each array, each as in the single copy.
            let code = unsafe { mf::smem_bm_copy_batch(handle, &mut params, mf::SMEMB_COPY_H2GH, 0) };
            assert_eq!(code, mf::SMEM_OK);
        })
    });
    let pairs: Vec<_> = (0..ENTRIES)
        .map(|i| {
            (
                registered.slice(i * SMALL..(i + 1) * SMALL).expect("64 B"),
                mine.slice(i * 4096..i * 4096 + SMALL).expect("64 B"),
            )
        })
        .collect();
    group.bench_function("safe", |b| {
        b.iter(|| member.copy_batch(black_box(&pairs)).expect("batch"))
    });
    group.finish();
}

/// Into the other process's DRAM (H2GH), beside a host memcpy.
fn cross_process(c: &mut Criterion, member: &Member<'_>) {
    let device = member.pool().big_memory().device().clone();
    let largest = CROSS_SIZES[CROSS_SIZES.len() - 1];
    let mut host = PinnedHostBuf::from_slice(&device, &vec![7u8; largest]).expect("pinned");
    let registered = member.register_host(&mut host).expect("register");
    let theirs = member.peer_dram(1).expect("rank 1's DRAM");
    let source = vec![7u8; largest];
    let mut target = vec![0u8; largest];
    let mut group = c.benchmark_group("fabric_cross_process");
    for size in CROSS_SIZES {
        group.throughput(Throughput::Bytes(size as u64));
        let (from, to) = (
            registered.slice(..size).expect("source"),
            theirs.slice(..size).expect("destination"),
        );
        group.bench_with_input(BenchmarkId::new("fabric_h2gh", label(size)), &size, |b, _| {
            b.iter(|| member.copy(from, to).expect("H2GH"))
        });
        group.bench_with_input(BenchmarkId::new("memcpy", label(size)), &size, |b, &size| {
            b.iter(|| target[..size].copy_from_slice(black_box(&source[..size])))
        });
    }
    group.finish();
}

/// The kv_offload example's batch: 122 device blocks into rank 1's DRAM.
fn kv_batch(c: &mut Criterion, member: &Member<'_>) {
    let device = member.pool().big_memory().device().clone();
    let layout: Vec<usize> = (0..61).flat_map(|_| [128 << 10, 16 << 10]).collect();
    let mut blocks = layout
        .iter()
        .map(|&len| DeviceBuf::from_slice(&device, &vec![9u8; len]))
        .collect::<Result<Vec<_>, _>>()
        .expect("blocks");
    let sides = blocks
        .iter_mut()
        .map(|block| member.register_device(block))
        .collect::<Result<Vec<_>, _>>()
        .expect("register");
    let theirs = member.peer_dram(1).expect("rank 1's DRAM");
    let mut offset = 0;
    let pairs: Vec<_> = sides
        .iter()
        .zip(&layout)
        .map(|(side, &len)| {
            let pair = (side.read(), theirs.slice(offset..offset + len).expect("slot"));
            offset += len;
            pair
        })
        .collect();
    let total = offset;
    let sources: Vec<Vec<u8>> = layout.iter().map(|&len| vec![9u8; len]).collect();
    let mut targets = vec![0u8; total];
    let mut group = c.benchmark_group("fabric_kv_batch");
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function("fabric_l2gh_122_blocks", |b| {
        b.iter(|| member.copy_batch(&pairs).expect("L2GH batch"))
    });
    group.bench_function("memcpy_122_blocks", |b| {
        b.iter(|| {
            let mut at = 0;
            for block in &sources {
                targets[at..at + block.len()].copy_from_slice(black_box(block));
                at += block.len();
            }
        })
    });
    group.finish();
}
