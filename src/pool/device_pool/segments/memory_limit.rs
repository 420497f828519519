//! [`Limit`]: the cap on a pool's reserved bytes (a memory limit, or
//! torch's per-process memory fraction of the device's memory).

use crate::Call;
use crate::error::{Error, Result};
use crate::pool::DevicePool;

impl DevicePool {
    /// Caps the pool's reserved bytes at `fraction` of the device's total
    /// memory (`aclrtGetMemInfo`), as torch's
    /// `set_per_process_memory_fraction`: a request that would grow the
    /// pool past it first makes the pool give its cache back and retry,
    /// then fails with [`Error::PoolExhausted`] whose `limit` is the cap;
    /// a request larger than the cap fails at once. Memory already
    /// reserved is kept. It replaces
    /// [`PoolConfig::memory_limit`](crate::pool::PoolConfig::memory_limit) and
    /// [`PoolConfig::memory_fraction`](crate::pool::PoolConfig::memory_fraction).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a fraction outside (0, 1]; the
    /// runtime's code of `aclrtGetMemInfo`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// pool.set_memory_fraction(0.01)?;
    /// let (_, total) = device.memory_info()?;
    /// let limit = pool.memory_limit().unwrap_or(0);
    /// assert_eq!(limit, (0.01 * total as f64) as usize);
    /// let refused = pool.alloc(limit + 1); // at once, no retry
    /// assert_eq!(pool.stats().retries, 0);
    /// assert!(matches!(refused, Err(Error::PoolExhausted { limit: Some(_), .. })));
    /// assert!(pool.set_memory_fraction(1.5).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn set_memory_fraction(&self, fraction: f64) -> Result<()> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(Error::invalid(
                Call::rust("DevicePool::set_memory_fraction"),
                format!("the fraction {fraction} is not in (0, 1]"),
            ));
        }
        let (_, total) = self.shared.device.memory_info()?;
        self.shared.state().limit = Some(Limit::of_fraction(fraction, total));
        Ok(())
    }

    /// The cap on the pool's reserved bytes, if any
    /// ([`DevicePool::set_memory_fraction`]).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let mut config = PoolConfig::default();
    /// assert_eq!(DevicePool::new(&device, config)?.memory_limit(), None);
    /// config.memory_limit = Some(1 << 30);
    /// assert_eq!(DevicePool::new(&device, config)?.memory_limit(), Some(1 << 30));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn memory_limit(&self) -> Option<usize> {
        self.shared.state().limit.map(|limit| limit.bytes)
    }
}

/// A cap on reserved bytes, and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::pool) struct Limit {
    /// The cap, in bytes.
    pub(in crate::pool) bytes: usize,
    /// The fraction of the device's total bytes it was set as, if any.
    pub(in crate::pool) fraction: Option<(f64, usize)>,
}

impl Limit {
    /// The cap of `fraction` of `total` bytes.
    pub(in crate::pool) fn of_fraction(fraction: f64, total: usize) -> Self {
        // A fraction in (0, 1] of a byte count: the product fits.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let bytes = (fraction * total as f64) as usize;
        Self {
            bytes,
            fraction: Some((fraction, total)),
        }
    }

    /// The smaller of two optional caps.
    pub(in crate::pool) fn smaller(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.bytes < a.bytes { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Why growing from `reserved` by `more` bytes is refused, or `None`
    /// when it stays within the cap.
    pub(in crate::pool) fn refuses(&self, reserved: usize, more: usize) -> Option<String> {
        if reserved.checked_add(more).is_some_and(|after| after <= self.bytes) {
            return None;
        }
        Some(format!("{more} more bytes would pass {}", self.describe()))
    }

    /// The cap in words, for an out-of-memory error.
    pub(in crate::pool) fn describe(&self) -> String {
        match self.fraction {
            Some((fraction, total)) => format!(
                "the pool's memory limit of {} bytes (fraction {fraction} of {total})",
                self.bytes
            ),
            None => format!("the pool's memory limit of {} bytes", self.bytes),
        }
    }

    /// `threshold` (in (0, 1)) of the cap, in bytes.
    pub(in crate::pool) fn share(&self, threshold: f64) -> usize {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let bytes = (threshold * self.bytes as f64) as usize;
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_refuses_growth_past_it_and_says_so() {
        let limit = Limit::of_fraction(0.5, 1000);
        assert_eq!(limit.bytes, 500);
        assert!(limit.refuses(400, 100).is_none());
        let cause = limit.refuses(400, 101).unwrap_or_default();
        assert!(cause.contains("limit of 500 bytes (fraction 0.5 of 1000)"), "{cause}");
        let plain = Limit {
            bytes: 300,
            fraction: None,
        };
        assert_eq!(Limit::smaller(Some(limit), Some(plain)), Some(plain));
        assert_eq!(Limit::smaller(None, Some(limit)), Some(limit));
        assert_eq!(limit.share(0.8), 400);
    }
}
