//! KV-cache offload across processes through MemFabric's global pool.
//!
//! The program starts three copies of itself, the ranks of one BM world of
//! three, and steers them over their standard input and output:
//!
//! 1. **rank 0** (the prefill side) fills a request's KV cache in its
//!    `DevicePool`, shaped as DeepSeek-V3's: 61 layers, each a block of
//!    128 KiB (the compressed latent KV) and one of 16 KiB (the rotary key),
//!    122 blocks in all. It registers the blocks with the pool and copies
//!    them into **rank 1**'s DRAM in the global pool, one batch (L2GH).
//! 2. **rank 2** (the decode side) fetches the 122 blocks from rank 1's DRAM
//!    into blocks of its own `DevicePool` (GH2L, one batch) and verifies
//!    every byte.
//! 3. Rank 1 leaves the world. Rank 2's next fetch from its range returns a
//!    typed error (`FabricError::PeerUnreachable`) after the control
//!    timeout: not a hang, not a panic.
//!
//! Every process ends with a leak check: no pool block is live and no
//! registration is left; on the software device and fabric also nothing of
//! the device. The exit status is 0 only if every step and check passed.
//!
//! Runs on the software fabric (and the software device) when no
//! `libmf_smem.so` is found:
//!
//! ```text
//! cargo run --example kv_offload
//! ```

use ascend::Device;
use ascend::fabric::{BigMemory, BmConfig, FabricError, Member, PoolOptions, StoreUrl, Transport};
use ascend::pool::{DevicePool, PoolBlock, PoolConfig};
use ascend::stream::Ordered;
use std::error::Error;
use std::io::{BufRead, BufReader, Lines, StdinLock, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

type Outcome<T = ()> = Result<T, Box<dyn Error>>;

/// DeepSeek-V3's layers, and the bytes of a layer's two KV blocks for one
/// request's share of the cache.
const LAYERS: usize = 61;
const LATENT_BLOCK: usize = 128 << 10;
const ROPE_BLOCK: usize = 16 << 10;
/// The ranks: the prefill side, the holder of the offloaded cache, the
/// decode side.
const PREFILL: u32 = 0;
const HOLDER: u32 = 1;
const DECODE: u32 = 2;
const WORLD: u32 = 3;
/// The pool's id (every rank creates it with the same id and sizes), and
/// the DRAM each rank gives it.
const POOL_ID: u32 = 7;
const DRAM_PER_RANK: u64 = 16 << 20;
/// How long a copy waits for a rank that stopped answering.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(2);
/// What a protocol line starts with (the rest of a child's output is
/// passed through).
const STEP: &str = "step: ";

/// Each block's offset in the holder's DRAM and its length: layer by layer,
/// the latent block then the rotary one.
fn layout() -> Vec<(usize, usize)> {
    let mut offset = 0;
    (0..LAYERS)
        .flat_map(|_| [LATENT_BLOCK, ROPE_BLOCK])
        .map(|len| {
            let at = offset;
            offset += len;
            (at, len)
        })
        .collect()
}

/// The bytes rank 0 writes into block `index`.
fn pattern(index: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add((index as u8).wrapping_mul(7)) ^ 0x5a)
        .collect()
}

/// Logs go to standard error through `env_logger` (`RUST_LOG=ascend=debug`
/// shows each MemFabric call).
fn main() -> std::process::ExitCode {
    env_logger::init();
    let args: Vec<String> = std::env::args().collect();
    let outcome = match &args[1..] {
        [flag, rank, port] if flag == "--rank" => match (rank.parse(), port.parse()) {
            (Ok(rank), Ok(port)) => run_rank(rank, port),
            _ => Err(format!("bad arguments {args:?}").into()),
        },
        [] => launch(),
        _ => Err(format!("usage: {} [--rank N PORT]", args[0]).into()),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------
// The launcher
// ---------------------------------------------------------------------------

/// One rank's process, steered over its standard input and output.
struct RankProcess {
    rank: u32,
    process: Child,
    to: ChildStdin,
    from: Lines<BufReader<ChildStdout>>,
}

impl RankProcess {
    fn start(rank: u32, port: u16) -> Outcome<Self> {
        let mut process = Command::new(std::env::current_exe()?)
            .args(["--rank", &rank.to_string(), &port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let (Some(to), Some(from)) = (process.stdin.take(), process.stdout.take()) else {
            return Err(format!("rank {rank}: the pipes are missing").into());
        };
        Ok(RankProcess {
            rank,
            process,
            to,
            from: BufReader::new(from).lines(),
        })
    }

    /// Tells the rank to go on with `command`.
    fn tell(&mut self, command: &str) -> Outcome {
        writeln!(self.to, "{command}")?;
        Ok(self.to.flush()?)
    }

    /// Waits for the rank's step `word`, passing its other output through;
    /// returns the rest of the step's line.
    fn expect(&mut self, word: &str) -> Outcome<String> {
        loop {
            let Some(line) = self.from.next() else {
                return Err(format!("rank {} exited before `{word}`", self.rank).into());
            };
            let line = line?;
            println!("  rank {}: {line}", self.rank);
            if let Some(step) = line.strip_prefix(STEP) {
                return match step.strip_prefix(word) {
                    Some(rest) => Ok(rest.trim().to_string()),
                    None => Err(format!("rank {}: expected `{word}`, got `{step}`", self.rank).into()),
                };
            }
        }
    }

    /// Waits for the rank's process to end, which must be a success.
    fn finish(&mut self) -> Outcome {
        let status = self.process.wait()?;
        if !status.success() {
            return Err(format!("rank {} ended with {status}", self.rank).into());
        }
        Ok(())
    }
}

impl Drop for RankProcess {
    fn drop(&mut self) {
        // A rank still running here is abandoned by a failed launch.
        if let Ok(None) = self.process.try_wait() {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

fn launch() -> Outcome {
    println!("{}", ascend::fabric::library()?.describe());
    // The store's port: any free one on loopback (no TLS needed there).
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut ranks = (0..WORLD)
        .map(|rank| RankProcess::start(rank, port))
        .collect::<Outcome<Vec<_>>>()?;
    let [prefill, holder, decode] = &mut ranks[..] else {
        return Err("three ranks".into());
    };
    for rank in [&mut *prefill, &mut *holder, &mut *decode] {
        rank.expect("joined")?;
    }

    prefill.tell("offload")?;
    println!("rank 0 offloaded the KV cache: {}", prefill.expect("offloaded")?);
    decode.tell("fetch")?;
    println!("rank 2 fetched and verified it: {}", decode.expect("verified")?);

    holder.tell("leave")?;
    holder.expect("clean")?;
    holder.finish()?;
    println!("rank 1 left the world");
    decode.tell("fetch")?;
    println!("rank 2's next fetch: {}", decode.expect("refused")?);

    for rank in [&mut *decode, &mut *prefill] {
        rank.tell("exit")?;
        rank.expect("clean")?;
        rank.finish()?;
    }
    println!("every rank verified its part and left nothing behind");
    Ok(())
}

// ---------------------------------------------------------------------------
// A rank
// ---------------------------------------------------------------------------

/// Prints a protocol line for the launcher.
fn say(step: &str) -> Outcome {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{STEP}{step}")?;
    Ok(out.flush()?)
}

/// The launcher's next command, which must be `expected`.
fn wait_for(commands: &mut Lines<StdinLock<'_>>, expected: &str) -> Outcome {
    match commands.next().transpose()? {
        Some(line) if line == expected => Ok(()),
        Some(line) => Err(format!("expected the command `{expected}`, got `{line}`").into()),
        None => Err(format!("the launcher went away before `{expected}`").into()),
    }
}

fn run_rank(rank: u32, port: u16) -> Outcome {
    let device = Device::new(0)?;
    let software = ascend::backend()?.backend == ascend::sys::Backend::Software;
    let device_before = ascend::sys::soft::live();
    {
        let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}"))?;
        let config = BmConfig::default()
            .with_rank(rank)
            .with_control_timeout(CONTROL_TIMEOUT);
        let bm = BigMemory::init(&store, WORLD, &device, &config)?;
        let pool = bm.create_pool(POOL_ID, &PoolOptions::new(Transport::HOST_SHM).dram(DRAM_PER_RANK))?;
        let member = pool.join()?; // waits until every rank created the pool
        let blocks = DevicePool::new(&device, PoolConfig::default())?;
        say(&format!("joined as rank {} of {}", member.rank(), member.world_size()))?;

        let mut commands = std::io::stdin().lock().lines();
        match rank {
            PREFILL => prefill(&member, &blocks, &mut commands)?,
            HOLDER => wait_for(&mut commands, "leave")?,
            DECODE => decode(&member, &blocks, &mut commands)?,
            _ => return Err(format!("no part for rank {rank}").into()),
        }

        // The leak check: every block given back to the pool, every
        // registration gone.
        let stats = blocks.stats();
        if stats.allocated != 0 || stats.allocations != stats.frees {
            return Err(format!("rank {rank}: pool blocks still live: {stats:?}").into());
        }
        let fabric = ascend::fabric::sys::soft::live();
        if fabric.registrations != 0 {
            return Err(format!("rank {rank}: registrations left: {fabric:?}").into());
        }
        // Leaves, destroys the pool and uninitialises, in that order.
        member.leave()?;
    }
    // On the software device, nothing of the device may be left either.
    if software && ascend::sys::soft::live() != device_before {
        return Err(format!("rank {rank} left behind:\n{}", ascend::sys::soft::leak_report()).into());
    }
    say("clean")
}

/// Rank 0: the KV cache in pool blocks, into rank 1's DRAM in one batch.
fn prefill(member: &Member<'_>, blocks: &DevicePool, commands: &mut Lines<StdinLock<'_>>) -> Outcome {
    let layout = layout();
    let mut kv = layout
        .iter()
        .enumerate()
        .map(|(index, &(_, len))| {
            let block = blocks.alloc(len)?;
            block.view().write_from_host(&pattern(index, len))?;
            Ok(block.into_inner()?)
        })
        .collect::<Outcome<Vec<PoolBlock>>>()?;
    wait_for(commands, "offload")?;
    {
        // Registered: the blocks are borrowed until unregistered (dropped).
        let sides = kv
            .iter_mut()
            .map(|block| member.register_device(block))
            .collect::<Result<Vec<_>, _>>()?;
        let holder = member.peer_dram(HOLDER)?;
        let pairs = sides
            .iter()
            .zip(&layout)
            .map(|(side, &(at, len))| Ok((side.read(), holder.slice(at..at + len)?)))
            .collect::<Result<Vec<_>, FabricError>>()?;
        let start = Instant::now();
        member.copy_batch(&pairs)?; // L2GH
        let took = start.elapsed();
        say(&format!(
            "offloaded {} blocks, {} KiB, in one batch (L2GH) in {took:.2?}",
            layout.len(),
            bytes(&layout) >> 10
        ))?;
    }
    wait_for(commands, "exit")?;
    drop(kv); // back to the pool
    Ok(())
}

/// Rank 2: fetch, verify; after rank 1 left, fetch again and get a typed
/// error.
fn decode(member: &Member<'_>, blocks: &DevicePool, commands: &mut Lines<StdinLock<'_>>) -> Outcome {
    let layout = layout();
    let mut fetched = layout
        .iter()
        .map(|&(_, len)| Ok(blocks.alloc(len)?.into_inner()?))
        .collect::<Outcome<Vec<PoolBlock>>>()?;
    wait_for(commands, "fetch")?;
    let took = fetch(member, &mut fetched)?;
    let mut verified = Vec::with_capacity(fetched.len());
    for (index, (block, &(_, len))) in fetched.into_iter().zip(&layout).enumerate() {
        let block = Ordered::new(block);
        if block.view().to_vec::<u8>()? != pattern(index, len) {
            return Err(format!("block {index} came back different").into());
        }
        verified.push(block.into_inner()?);
    }
    say(&format!(
        "verified {} blocks, {} KiB, fetched in one batch (GH2L) in {took:.2?}",
        layout.len(),
        bytes(&layout) >> 10
    ))?;

    wait_for(commands, "fetch")?;
    let start = Instant::now();
    match fetch(member, &mut verified) {
        Err(error @ FabricError::PeerUnreachable { .. }) => {
            say(&format!("refused after {:.1?}: {error}", start.elapsed()))?;
        }
        Err(other) => return Err(format!("expected PeerUnreachable, got {other}").into()),
        Ok(_) => return Err("a fetch from the rank that left succeeded".into()),
    }
    // This rank's own range goes on.
    let mut last = verified.pop().ok_or("no blocks")?;
    {
        let side = member.register_device(&mut last)?;
        let mine = member.peer_dram(member.rank())?;
        member.copy(side.read(), mine.slice(..side.len())?)?;
    }
    wait_for(commands, "exit")?;
    drop((verified, last));
    Ok(())
}

/// Every block of rank 1's DRAM into `into` (registered for the copy), in
/// one batch (GH2L); the batch's time.
fn fetch(member: &Member<'_>, into: &mut [PoolBlock]) -> Result<Duration, FabricError> {
    let mut sides = into
        .iter_mut()
        .map(|block| member.register_device(block))
        .collect::<Result<Vec<_>, _>>()?;
    let holder = member.peer_dram(HOLDER)?;
    let pairs = sides
        .iter_mut()
        .zip(layout())
        .map(|(side, (at, len))| Ok((holder.slice(at..at + len)?, side.write())))
        .collect::<Result<Vec<_>, FabricError>>()?;
    let start = Instant::now();
    member.copy_batch(&pairs)?;
    Ok(start.elapsed())
}

fn bytes(layout: &[(usize, usize)]) -> usize {
    layout.iter().map(|&(_, len)| len).sum()
}
