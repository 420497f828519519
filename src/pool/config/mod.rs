//! The pools' configuration: [`PoolConfig`], the knobs of a
//! [`DevicePool`](super::DevicePool) (here); the text both pools are
//! configured by, [`ENV_ALLOC_CONF`] (`env.rs`); torch's rounding of
//! request sizes (`rounding.rs`).

pub(super) mod env;
pub(super) mod rounding;

pub use env::ENV_ALLOC_CONF;

use crate::Call;
use crate::error::{Error, Result};
use rounding::INTERVALS;

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
#[derive(Debug, Clone, Copy, PartialEq)]
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
    /// torch's `roundup_power2_divisions`, by power-of-two interval of the
    /// request: entry `i` holds for sizes in `[2^i MiB, 2^(i+1) MiB)`,
    /// entry 0 also for every size below 1 MiB and entry 15 for every
    /// size from 32 GiB up. With `n` > 1 divisions, a request above
    /// `rounding × n` is rounded up to the next of `n` equal steps between
    /// the power of two below it and the next one (a power of two stays as
    /// it is); 0 and 1 (the default) round to [`rounding`](Self::rounding)
    /// only. Each entry is 0, 1 or a power of two.
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let mut config = PoolConfig::default();
    /// config.roundup_power2_divisions = [4; 16]; // quarter steps everywhere
    /// let pool = DevicePool::new(&device, config)?;
    /// // 5 MiB + 3 bytes lies in 4..8 MiB: steps of 1 MiB.
    /// assert_eq!(pool.alloc((5 << 20) + 3)?.capacity(), 6 << 20);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub roundup_power2_divisions: [usize; INTERVALS],
    /// torch's `max_split_size_mb`, in bytes: a block of at least this
    /// size is *oversize*. Freed, it is cached whole instead of coalescing
    /// with its neighbours, and it serves only a later oversize request
    /// that it exceeds by less than [`PoolConfig::OVERSIZE_SLACK`] (20 MiB),
    /// whole (its capacity is its own size); a smaller request never takes
    /// it. The cached oversize blocks go back to the free ranges, oldest
    /// first, before the pool grows past its garbage-collection threshold,
    /// and all of them before an out-of-memory retry, in
    /// [`DevicePool::empty_cache`](super::DevicePool::empty_cache), a
    /// sleep and a snapshot. `None` (the default): no block is oversize.
    /// Must be larger than [`small_limit`](Self::small_limit)
    /// (`ASCEND_ALLOC_CONF`'s `max_split_size_mb` is raised to 20 MiB at
    /// least, as torch does).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let mut config = PoolConfig::default();
    /// config.max_split_size = Some(32 << 20);
    /// let pool = DevicePool::new(&device, config)?;
    /// let big = pool.alloc(60 << 20)?;
    /// let address = big.device_ptr();
    /// drop(big); // cached whole
    /// let again = pool.alloc(50 << 20)?; // within 20 MiB: the same block, whole
    /// assert_eq!((again.device_ptr(), again.capacity()), (address, 60 << 20));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub max_split_size: Option<usize>,
    /// torch's `garbage_collection_threshold`, a fraction strictly between
    /// 0 and 1 of the pool's memory limit ([`memory_limit`](Self::memory_limit),
    /// [`memory_fraction`](Self::memory_fraction)): before growing while
    /// the reserved bytes pass it, the pool gives cached memory back (the
    /// cached oversize blocks, oldest first, then the cached chunks past
    /// the last live block of each segment, as
    /// [`DevicePool::empty_cache`](super::DevicePool::empty_cache) does)
    /// until they no longer pass it or nothing is left
    /// ([`PoolStats::gc_runs`](super::PoolStats::gc_runs) counts the runs).
    /// Without a limit it does nothing, as in torch. `None` by default.
    ///
    /// ```
    /// # use ascend::pool::PoolConfig;
    /// let config = PoolConfig::parse("garbage_collection_threshold:0.8,per_process_memory_fraction:0.5")?;
    /// assert_eq!(config.garbage_collection_threshold, Some(0.8));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub garbage_collection_threshold: Option<f64>,
    /// A cap on the pool's reserved (mapped) bytes: growing past it is
    /// refused, and after the usual out-of-memory retry the request fails
    /// with [`Error::PoolExhausted`] whose `limit` is the cap. `None` (the
    /// default): no cap. With [`memory_fraction`](Self::memory_fraction)
    /// too, the smaller holds.
    ///
    /// ```
    /// use ascend::Error;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let mut config = PoolConfig::default();
    /// config.memory_limit = Some(40 << 20); // two large chunks
    /// let pool = DevicePool::new(&device, config)?;
    /// let refused = pool.alloc(64 << 20);
    /// assert!(matches!(refused, Err(Error::PoolExhausted { limit: Some(cap), .. }) if cap == 40 << 20));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub memory_limit: Option<usize>,
    /// torch's `set_per_process_memory_fraction` as a setting: a fraction
    /// in (0, 1] of the device's total memory (`aclrtGetMemInfo`) that
    /// caps the pool's reserved bytes, resolved when the pool is made
    /// ([`DevicePool::set_memory_fraction`](super::DevicePool::set_memory_fraction)
    /// changes it later). `None` by default.
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let mut config = PoolConfig::default();
    /// config.memory_fraction = Some(0.5);
    /// let pool = DevicePool::new(&device, config)?;
    /// let (_, total) = device.memory_info()?;
    /// assert_eq!(pool.memory_limit(), Some(total / 2));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub memory_fraction: Option<f64>,
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
            roundup_power2_divisions: [1; INTERVALS],
            max_split_size: None,
            garbage_collection_threshold: None,
            memory_limit: None,
            memory_fraction: None,
        }
    }
}

impl PoolConfig {
    /// A cached oversize block serves an oversize request only when it is
    /// less than this much larger (torch's `kLargeBuffer`, 20 MiB).
    ///
    /// ```
    /// assert_eq!(ascend::pool::PoolConfig::OVERSIZE_SLACK, 20 << 20);
    /// ```
    pub const OVERSIZE_SLACK: usize = 20 << 20;

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
        if let Some(&bad) = self
            .roundup_power2_divisions
            .iter()
            .find(|&&divisions| divisions > 1 && !divisions.is_power_of_two())
        {
            return refuse(format!("roundup_power2_divisions: {bad} is not 0, 1 or a power of two"));
        }
        if let Some(max_split) = self.max_split_size
            && max_split <= self.small_limit
        {
            return refuse(format!(
                "max_split_size {max_split} is not larger than the small limit {}",
                self.small_limit
            ));
        }
        if let Some(threshold) = self.garbage_collection_threshold
            && !(threshold > 0.0 && threshold < 1.0)
        {
            return refuse(format!(
                "garbage_collection_threshold {threshold} is not strictly between 0 and 1"
            ));
        }
        if let Some(fraction) = self.memory_fraction
            && !(fraction > 0.0 && fraction <= 1.0)
        {
            return refuse(format!("memory_fraction {fraction} is not in (0, 1]"));
        }
        Ok(())
    }

    /// Whether rounding uses divisions (not the plain mask).
    pub(super) fn divides(&self) -> bool {
        self.roundup_power2_divisions.iter().any(|&divisions| divisions > 1)
    }
}
