//! [`PoolConfig`]: the knobs of a [`DevicePool`](super::DevicePool).

use crate::Call;
use crate::error::{Error, Result};

/// How a [`DevicePool`](super::DevicePool) rounds, splits and grows. The
/// defaults are torch_npu's: 512-byte rounding, a small pool for requests
/// up to 1 MiB growing in 2 MiB chunks, a large pool growing in 20 MiB
/// chunks.
///
/// Start from the defaults (or [`PoolConfig::parse`]) and change fields:
///
/// ```
/// use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let mut config = PoolConfig::default();
/// assert_eq!((config.rounding, config.small_limit), (512, 1 << 20));
/// config.rounding = 4096; // page-sized blocks
/// let pool = DevicePool::new(&device, config)?;
/// assert_eq!(pool.alloc(100)?.capacity(), 4096);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolConfig {
    /// Every block's size is a multiple of this (a power of two).
    pub rounding: usize,
    /// Requests up to this many bytes come from the small pool.
    pub small_limit: usize,
    /// The small pool's chunk (a multiple of the VMM granularity).
    pub small_chunk: usize,
    /// The large pool's chunk (a multiple of the VMM granularity).
    pub large_chunk: usize,
    /// Addresses reserved for the small pool (a multiple of its chunk).
    pub small_reserve: usize,
    /// Addresses reserved for the large pool (a multiple of its chunk;
    /// 1600 chunks, 31.25 GiB, by default).
    pub large_reserve: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            rounding: 512,
            small_limit: 1 << 20,
            small_chunk: 2 << 20,
            large_chunk: 20 << 20,
            small_reserve: 1 << 30,
            large_reserve: 1600 * (20 << 20),
        }
    }
}

impl PoolConfig {
    /// Checks the settings against each other and the granularity.
    pub(super) fn check(&self, granularity: usize) -> Result<()> {
        let refuse = |reason: String| Err(Error::invalid(Call::rust("DevicePool::new"), reason));
        if !self.rounding.is_power_of_two() {
            return refuse(format!("rounding {} is not a power of two", self.rounding));
        }
        for (name, chunk, reserve) in [
            ("small", self.small_chunk, self.small_reserve),
            ("large", self.large_chunk, self.large_reserve),
        ] {
            if chunk == 0 || !chunk.is_multiple_of(granularity) || !chunk.is_multiple_of(self.rounding) {
                return refuse(format!(
                    "the {name} chunk {chunk} is not a positive multiple of the granularity {granularity} and the rounding"
                ));
            }
            if reserve == 0 || !reserve.is_multiple_of(chunk) {
                return refuse(format!(
                    "the {name} reserve {reserve} is not a positive multiple of its chunk {chunk}"
                ));
            }
        }
        if self.small_limit > self.small_chunk {
            return refuse(format!(
                "the small limit {} is larger than the small chunk {}",
                self.small_limit, self.small_chunk
            ));
        }
        Ok(())
    }
}
