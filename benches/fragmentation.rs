//! Fragmentation on a deterministic trace (issue 15, benchmark c): a model
//! of 24 layers whose per-layer tensors grow by one batch row per step, as
//! in PyTorch's motivation for expandable segments. Each step allocates
//! every layer's two activations, then frees them.
//!
//! Reported: reserved ÷ peak live bytes for `DevicePool` (expandable
//! segments), and for the same trace on a model of the classic caching
//! allocator with fixed-size segments (PyTorch's classic sizes: a 2 MiB
//! segment for requests up to 1 MiB, 20 MiB below 10 MiB, the request
//! rounded to 2 MiB above; blocks split and merge inside a segment, never
//! across segments, and cached segments are kept).
//! Deterministic: the figures are exact. Run:
//! `cargo bench --bench fragmentation`.

mod common;

use ascend::Device;
use ascend::pool::{DevicePool, PoolConfig};
use common::software_device;

const LAYERS: usize = 24;
const STEPS: usize = 64;
/// Bytes per batch row of the two activations of a layer.
const ROWS: [usize; 2] = [256 << 10, 1 << 20];
const ROUND: usize = 512;

fn trace() -> impl Iterator<Item = Vec<usize>> {
    (1..=STEPS).map(|rows| {
        (0..LAYERS)
            .flat_map(|_| ROWS.map(|row| (rows * row).next_multiple_of(ROUND)))
            .collect()
    })
}

/// The classic allocator with fixed-size segments: best fit over the free
/// ranges of every segment, a new segment when none fits.
#[derive(Default)]
struct FixedSegments {
    /// Per segment: its size and its free ranges (offset, len).
    segments: Vec<(usize, Vec<(usize, usize)>)>,
}

impl FixedSegments {
    fn reserved(&self) -> usize {
        self.segments.iter().map(|(size, _)| size).sum()
    }

    fn alloc(&mut self, size: usize) -> (usize, usize) {
        let best = self
            .segments
            .iter()
            .enumerate()
            .flat_map(|(segment, (_, free))| free.iter().enumerate().map(move |(at, range)| (segment, at, *range)))
            .filter(|(_, _, (_, len))| *len >= size)
            .min_by_key(|(_, _, (_, len))| *len);
        let (segment, at, (offset, len)) = match best {
            Some(found) => found,
            None => {
                // PyTorch's classic sizes: 2 MiB segments for small
                // requests, 20 MiB for requests below 10 MiB, and the
                // request rounded to 2 MiB above.
                let segment_size = match size {
                    size if size <= 1 << 20 => 2 << 20,
                    size if size < 10 << 20 => 20 << 20,
                    size => size.next_multiple_of(2 << 20),
                };
                self.segments.push((segment_size, vec![(0, segment_size)]));
                (self.segments.len() - 1, 0, (0, segment_size))
            }
        };
        let free = &mut self.segments[segment].1;
        free.remove(at);
        if len > size {
            free.push((offset + size, len - size));
        }
        (segment, offset)
    }

    fn free(&mut self, (segment, offset): (usize, usize), size: usize) {
        let free = &mut self.segments[segment].1;
        free.push((offset, size));
        free.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (start, len) in free.drain(..) {
            match merged.last_mut() {
                Some((last, last_len)) if *last + *last_len == start => *last_len += len,
                _ => merged.push((start, len)),
            }
        }
        *free = merged;
    }
}

fn main() {
    software_device();
    let device = Device::new(0).expect("device");
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let mut fixed = FixedSegments::default();
    let (mut peak_live, mut fixed_reserved_peak) = (0usize, 0usize);
    for step in trace() {
        let live: usize = step.iter().sum();
        peak_live = peak_live.max(live);
        let blocks: Vec<_> = step.iter().map(|&size| pool.alloc(size).expect("alloc")).collect();
        let places: Vec<_> = step.iter().map(|&size| fixed.alloc(size)).collect();
        fixed_reserved_peak = fixed_reserved_peak.max(fixed.reserved());
        drop(blocks);
        for (place, &size) in places.into_iter().zip(&step) {
            fixed.free(place, size);
        }
    }
    let stats = pool.stats();
    let ratio = |reserved: usize| reserved as f64 / peak_live as f64;
    println!("fragmentation trace: {LAYERS} layers x 2 tensors, {STEPS} steps, one more batch row per step");
    println!("peak live bytes: {peak_live}");
    println!(
        "expandable segments (DevicePool): peak reserved {} bytes, {:.3}x the peak live bytes",
        stats.reserved_peak,
        ratio(stats.reserved_peak)
    );
    println!(
        "fixed-size segments (model): peak reserved {fixed_reserved_peak} bytes, {:.3}x the peak live bytes",
        ratio(fixed_reserved_peak)
    );
}
