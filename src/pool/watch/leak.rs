//! [`PoolBlockLeak`]: a pool block the checked code left live, as a
//! [`LeakCheck`](crate::testing::LeakCheck) reports it, and [`PoolKind`],
//! the kind of its pool. Public as `ascend::testing::{PoolBlockLeak,
//! PoolKind}`; defined here, beside the pools' watch that finds them.

use std::fmt;

/// Which kind of pool a [`PoolBlockLeak`] belongs to.
///
/// ```
/// use ascend::pool::PinnedPool;
/// use ascend::testing::{LeakCheck, LeakCheckError, PoolKind};
/// let pool = PinnedPool::new(&ascend::Device::new(0)?);
/// let check = LeakCheck::start()?;
/// let staging = pool.alloc(512)?; // kept past the check
/// let Err(LeakCheckError::PoolLeaked { blocks, .. }) = check.finish() else {
///     panic!("expected a pool leak");
/// };
/// assert_eq!(blocks[0].pool, PoolKind::Pinned);
/// assert_eq!(blocks[0].pool.to_string(), "PinnedPool");
/// drop(staging);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PoolKind {
    /// A [`DevicePool`](crate::pool::DevicePool) (the block is device
    /// memory).
    Device,
    /// A [`PinnedPool`](crate::pool::PinnedPool) (the block is pinned host
    /// memory).
    Pinned,
}

impl fmt::Display for PoolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PoolKind::Device => "DevicePool",
            PoolKind::Pinned => "PinnedPool",
        })
    }
}

/// A block a pool handed out while a [`LeakCheck`](crate::testing::LeakCheck) ran
/// and that is still live at its end (never given back: forgotten, or
/// kept past the check).
///
/// A pool hit makes no runtime call, so the software device's tables cannot
/// show such a block; the pools report it themselves (with the feature
/// `testing`, every pool is known to the check from its creation). Blocks
/// handed out before the check are never listed, whether the checked code
/// gave them back or not, and the pool's own cache (cached blocks, the
/// chunks mapped for them) is not a leak.
///
/// ```
/// use ascend::pool::{DevicePool, PoolConfig};
/// use ascend::testing::{LeakCheck, LeakCheckError, PoolKind};
/// let pool = DevicePool::new(&ascend::Device::new(0)?, PoolConfig::default())?;
/// let check = LeakCheck::start()?;
/// let block = pool.alloc_tagged(3000, "kv-cache")?;
/// let Err(LeakCheckError::PoolLeaked { blocks, .. }) = check.finish() else {
///     panic!("expected a pool leak");
/// };
/// let leak = &blocks[0];
/// assert_eq!((leak.pool, leak.device, leak.tag.as_deref()), (PoolKind::Device, 0, Some("kv-cache")));
/// assert!(leak.bytes >= 3000); // the block's size, rounded up by the pool
/// assert_eq!(leak.address, block.device_ptr() as u64);
/// drop(block);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolBlockLeak {
    /// The kind of pool.
    pub pool: PoolKind,
    /// The id of the pool's device.
    pub device: i32,
    /// The block's tag ([`DevicePool::alloc_tagged`](crate::pool::DevicePool::alloc_tagged);
    /// `None` for a pinned pool).
    pub tag: Option<String>,
    /// The block's address (device memory for a device pool, host memory
    /// for a pinned pool).
    pub address: u64,
    /// The block's size in bytes.
    pub bytes: usize,
}

impl fmt::Display for PoolBlockLeak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of device {}", self.pool, self.device)?;
        if let Some(tag) = &self.tag {
            write!(f, ", tag {tag:?}")?;
        }
        write!(f, ": block at {:#x}, {} bytes", self.address, self.bytes)
    }
}
