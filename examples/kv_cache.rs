//! A decoder-style loop over a growing KV cache, in safe code only.
//!
//! - The cache is a list of blocks of the caching device pool (tag
//!   `kv_cache`, on the pool's expandable segment), each holding 256
//!   token pages; it grows by one block when the last one is full.
//! - Each step computes one token's page (its K and V for every layer and
//!   head) into a pinned staging buffer from the pinned pool and appends
//!   it with a copy into a view of the cache: 8 KiB move, not the cache.
//!   Two staging buffers alternate, so the host fills one while the other
//!   is in flight.
//! - Every 100 steps an "attention" stream reads back a window of the last
//!   48 tokens (it may span two blocks) into pinned memory. It is ordered
//!   after the appends of those pages by the views alone, and every byte
//!   is checked. At the end the whole cache is read back and checked.
//!
//! Run: `cargo run --example kv_cache`

use ascend::pool::{DevicePool, PinnedPool, PoolBlock, PoolConfig};
use ascend::stream::{Ordered, OrderedView, Stream};
use ascend::{Device, Error, PinnedHostBuf, Result};
use std::ops::Range;
use std::sync::Arc;

const LAYERS: usize = 4;
const HEADS: usize = 8;
const HEAD_DIM: usize = 64;
/// Bytes of one token's page: K and V (f16) of every layer and head.
const PAGE_BYTES: usize = 2 * LAYERS * HEADS * HEAD_DIM * size_of::<u16>();
const PAGES_PER_BLOCK: usize = 256;
const STEPS: usize = 1000;
const WINDOW: usize = 48;
const READ_EVERY: usize = 100;

/// The f16 bit pattern of element `at` of `token`'s page.
fn value(token: usize, at: usize) -> u16 {
    ((token * 131 + at * 7) % 0x7800) as u16
}

/// Writes `token`'s page into `page` (little-endian f16 bits).
fn fill(page: &mut [u8], token: usize) {
    for (at, pair) in page.chunks_exact_mut(2).enumerate() {
        pair.copy_from_slice(&value(token, at).to_le_bytes());
    }
}

/// Checks that `bytes` hold the pages of `tokens`, in order.
fn check(bytes: &[u8], tokens: Range<usize>) -> Result<usize> {
    for (index, token) in tokens.clone().enumerate() {
        let page = &bytes[index * PAGE_BYTES..(index + 1) * PAGE_BYTES];
        for (at, pair) in page.chunks_exact(2).enumerate() {
            let found = u16::from_le_bytes([pair[0], pair[1]]);
            if found != value(token, at) {
                return Err(Error::external(
                    "kv_cache",
                    format!(
                        "token {token}, element {at}: {found:#x}, expected {:#x}",
                        value(token, at)
                    ),
                ));
            }
        }
    }
    Ok(tokens.len() * PAGE_BYTES)
}

/// The cache: pool blocks of `PAGES_PER_BLOCK` pages each.
struct KvCache<'pool> {
    pool: &'pool DevicePool,
    blocks: Vec<Ordered<PoolBlock>>,
    tokens: usize,
}

impl<'pool> KvCache<'pool> {
    fn new(pool: &'pool DevicePool) -> Self {
        Self {
            pool,
            blocks: Vec::new(),
            tokens: 0,
        }
    }

    /// The bytes of `tokens` (within one block) in the cache.
    fn pages(&self, tokens: Range<usize>) -> Result<OrderedView<'_, PoolBlock>> {
        let block = &self.blocks[tokens.start / PAGES_PER_BLOCK];
        let at = (tokens.start % PAGES_PER_BLOCK) * PAGE_BYTES;
        block.bytes(at..at + tokens.len() * PAGE_BYTES)
    }

    /// Queues on `stream` the copy of one token's page from `staging` into
    /// the next page of the cache, growing it by a block when full.
    fn append(&mut self, staging: &Ordered<PinnedHostBuf<u8>>, stream: &Arc<Stream>) -> Result<()> {
        if self.tokens.is_multiple_of(PAGES_PER_BLOCK) {
            let block = self.pool.alloc_tagged(PAGES_PER_BLOCK * PAGE_BYTES, "kv_cache")?;
            self.blocks.push(block);
        }
        let page = self.pages(self.tokens..self.tokens + 1)?;
        page.copy_from_host(staging, stream)?;
        self.tokens += 1;
        Ok(())
    }

    /// Queues on `stream` the copy of the pages of `tokens` into the start
    /// of `out`, one copy per block they span.
    fn read(&self, tokens: Range<usize>, out: &Ordered<PinnedHostBuf<u8>>, stream: &Arc<Stream>) -> Result<()> {
        let mut token = tokens.start;
        while token < tokens.end {
            let end = ((token / PAGES_PER_BLOCK + 1) * PAGES_PER_BLOCK).min(tokens.end);
            let at = (token - tokens.start) * PAGE_BYTES;
            let part = out.slice(at..at + (end - token) * PAGE_BYTES)?;
            part.copy_from_device(self.pages(token..end)?, stream)?;
            token = end;
        }
        Ok(())
    }
}

/// Logs go to standard error through `env_logger` (`RUST_LOG=ascend=trace`).
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

fn run() -> Result<()> {
    println!("backend: {:?}", ascend::backend()?.backend);
    let device = Device::new(0)?;
    let pool = DevicePool::new(&device, PoolConfig::default())?;
    let pinned = PinnedPool::new(&device);
    let (decode, attend) = (Arc::new(Stream::new(&device)?), Arc::new(Stream::new(&device)?));
    let mut staging = [pinned.alloc(PAGE_BYTES)?, pinned.alloc(PAGE_BYTES)?];
    let mut window = pinned.alloc(WINDOW * PAGE_BYTES)?;
    let mut cache = KvCache::new(&pool);

    let mut checked = 0;
    for token in 0..STEPS {
        let slot = &mut staging[token % 2];
        // Waits for this buffer's previous upload only; the other one may
        // still be in flight.
        fill(slot.get_mut()?, token);
        cache.append(slot, &decode)?;
        if (token + 1) % READ_EVERY == 0 {
            let last = token + 1 - WINDOW..token + 1;
            // Ordered after the appends of these pages by the views alone.
            cache.read(last.clone(), &window, &attend)?;
            checked += check(&window.get_mut()?[..], last)?;
        }
    }
    println!(
        "{STEPS} steps appended one {PAGE_BYTES}-byte page each to a KV cache of {} pool blocks",
        cache.blocks.len()
    );
    println!(
        "{} windows of the last {WINDOW} tokens read back on another stream: {checked} bytes checked",
        STEPS / READ_EVERY
    );

    let mut all = pinned.alloc(STEPS * PAGE_BYTES)?;
    cache.read(0..STEPS, &all, &attend)?;
    let whole = check(&all.get_mut()?[..], 0..STEPS)?;
    println!("the whole cache read back: {whole} bytes checked");

    let stats = pool.stats();
    println!(
        "pool: {} bytes allocated in {} allocations, {} reserved, {} chunks mapped",
        stats.allocated, stats.allocations, stats.reserved, stats.chunks_mapped
    );
    assert_eq!(
        cache.blocks.len(),
        STEPS.div_ceil(PAGES_PER_BLOCK),
        "one block per 256 tokens"
    );
    assert_eq!(
        stats.allocations,
        cache.blocks.len() as u64,
        "no allocation but the blocks"
    );
    drop(cache);
    assert_eq!(pool.stats().allocated, 0, "every block went back to the pool");
    println!("all checks passed");
    Ok(())
}
