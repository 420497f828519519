//! KV blocks of a `DevicePool` through MemFabric's global pool and back,
//! without a staging copy: the blocks are registered with the pool and
//! copied to this rank's global DRAM (L2GH) and back into other blocks
//! (GH2L), synchronously and in an asynchronous scope; every byte verified.
//!
//! Runs on the software fabric (and the software device) when no
//! `libmf_smem.so` is found, in one process, a world of one rank:
//!
//! ```text
//! cargo run --example fabric_pool
//! ```

use ascend::Device;
use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
use ascend::pool::{DevicePool, PoolBlock, PoolConfig};
use ascend::stream::Ordered;

/// Bytes of one KV block (DeepSeek's 128 KiB per layer) and the blocks.
const BLOCK: usize = 128 << 10;
const BLOCKS: usize = 8;

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    println!("{}", ascend::fabric::library()?.describe());
    let device = Device::new(0)?;
    // A store on loopback: no TLS needed. The port: any free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}"))?;
    let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    let pool = bm.create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram((BLOCKS * BLOCK) as u64))?;
    let member = pool.join()?;
    println!(
        "rank {} of {} joined pool {}",
        member.rank(),
        member.world_size(),
        pool.id()
    );

    // KV blocks in the device pool, filled with a pattern per block.
    let blocks = DevicePool::new(&device, PoolConfig::default())?;
    let mut kv: Vec<PoolBlock> = Vec::new();
    let mut fetched: Vec<PoolBlock> = Vec::new();
    for index in 0..BLOCKS {
        let block = blocks.alloc(BLOCK)?;
        block.view().write_from_host(&pattern(index))?;
        kv.push(block.into_inner()?);
        fetched.push(blocks.alloc(BLOCK)?.into_inner()?);
    }

    let dram = member.peer_dram(member.rank())?;
    {
        // Registered: the blocks are borrowed until unregistered (dropped).
        let kv_sides = kv
            .iter_mut()
            .map(|block| member.register_device(block))
            .collect::<Result<Vec<_>, _>>()?;
        let mut fetched_sides = fetched
            .iter_mut()
            .map(|block| member.register_device(block))
            .collect::<Result<Vec<_>, _>>()?;
        let slot = |index: usize| dram.slice(index * BLOCK..(index + 1) * BLOCK);

        // Offload: every block to the global DRAM in one batch (L2GH).
        let offload = kv_sides
            .iter()
            .enumerate()
            .map(|(index, side)| Ok((side.read(), slot(index)?)))
            .collect::<Result<Vec<_>, ascend::fabric::FabricError>>()?;
        member.copy_batch(&offload)?;
        println!("offloaded {BLOCKS} blocks of {} KiB (L2GH, one batch)", BLOCK >> 10);

        // Fetch back, asynchronously: the scope waits before its borrows end.
        member.scope(|s| {
            for (index, side) in fetched_sides.iter_mut().enumerate() {
                s.copy(slot(index)?, side.write())?; // GH2L
            }
            Ok(())
        })?;
        println!("fetched them back into other blocks (GH2L, asynchronous)");
    }

    for (index, block) in fetched.into_iter().enumerate() {
        let bytes = Ordered::new(block).view().to_vec::<u8>()?;
        if bytes != pattern(index) {
            return Err(format!("block {index} came back different").into());
        }
    }
    println!("every byte of {BLOCKS} blocks verified");
    Ok(())
}

fn pattern(index: usize) -> Vec<u8> {
    (0..BLOCK)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(index as u8))
        .collect()
}
