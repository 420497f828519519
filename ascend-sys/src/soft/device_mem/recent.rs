//! Blocks a shard freed lately, kept whole for the next allocation of the
//! same size: that allocation and its free then skip the free-range
//! bookkeeping (as a thread cache does in a host allocator).

/// Only blocks up to this size are kept (a 64 KiB `aclrtMalloc` reserves
/// 32 bytes more).
const MAX_SIZE: u64 = 128 << 10;

/// Blocks kept per size at most.
const PER_SIZE: usize = 16;

/// Bytes kept per shard at most.
const MAX_BYTES: u64 = 1 << 20;

/// The kept blocks: offsets by size, the most recently freed last.
#[derive(Default)]
pub(super) struct Recent {
    by_size: Vec<(u64, Vec<u64>)>,
    bytes: u64,
}

impl Recent {
    /// A kept block of exactly `size` bytes, if any (the most recently
    /// freed one).
    pub(super) fn take(&mut self, size: u64) -> Option<u64> {
        let (_, offsets) = self.by_size.iter_mut().find(|(kept, _)| *kept == size)?;
        let offset = offsets.pop()?;
        self.bytes -= size;
        Some(offset)
    }

    /// Keeps the freed block `[offset, offset + size)`; `false` when it is
    /// too large or there is no room (then it is released as usual).
    pub(super) fn keep(&mut self, offset: u64, size: u64) -> bool {
        if size > MAX_SIZE || self.bytes + size > MAX_BYTES {
            return false;
        }
        let index = match self.by_size.iter().position(|(kept, _)| *kept == size) {
            Some(index) => index,
            None => {
                self.by_size.push((size, Vec::new()));
                self.by_size.len() - 1
            }
        };
        let offsets = &mut self.by_size[index].1;
        if offsets.len() >= PER_SIZE {
            return false;
        }
        offsets.push(offset);
        self.bytes += size;
        true
    }

    /// Every kept block, `(offset, size)`, no longer kept.
    pub(super) fn drain(&mut self) -> Vec<(u64, u64)> {
        self.bytes = 0;
        std::mem::take(&mut self.by_size)
            .into_iter()
            .flat_map(|(size, offsets)| offsets.into_iter().map(move |offset| (offset, size)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_by_exact_size_within_the_limits() {
        let mut recent = Recent::default();
        assert!(recent.keep(0, 4096));
        assert!(recent.keep(8192, 4096));
        assert!(recent.keep(4096, 512));
        assert!(!recent.keep(1 << 20, MAX_SIZE + 512), "too large");
        assert_eq!(recent.take(1024), None);
        assert_eq!(recent.take(4096), Some(8192), "the most recent first");
        assert_eq!(recent.take(4096), Some(0));
        assert_eq!(recent.take(4096), None);
        for index in 0..PER_SIZE as u64 {
            assert!(recent.keep(index * 64, 64));
        }
        assert!(!recent.keep(1 << 30, 64), "full for this size");
        let drained = recent.drain();
        assert_eq!(drained.len(), 1 + PER_SIZE);
        assert!(drained.contains(&(4096, 512)));
        assert_eq!(recent.take(64), None);
        // The byte limit.
        let mut recent = Recent::default();
        let big = MAX_SIZE;
        let fits = (MAX_BYTES / big) as usize;
        let kept = (0..2 * fits as u64)
            .filter(|&index| recent.keep(index * big, big))
            .count();
        assert_eq!(kept, fits.min(PER_SIZE));
    }
}
