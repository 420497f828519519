//! Software-device settings: how many devices, how much memory each.

use std::fmt;

/// Environment variable: number of software devices (default 2).
pub const ENV_DEVICE_COUNT: &str = "ASCEND_SOFT_DEVICE_COUNT";
/// Environment variable: memory per software device, in bytes, or with a
/// `K`, `M`, `G` or `T` suffix (binary units; default `64G`).
pub const ENV_DEVICE_MEMORY: &str = "ASCEND_SOFT_DEVICE_MEMORY";
/// Environment variable: VMM granularity for normal and huge pages (default
/// `2M`).
pub const ENV_GRANULARITY: &str = "ASCEND_SOFT_GRANULARITY";

/// The largest device count accepted.
pub const MAX_DEVICES: u32 = 64;

/// Settings of the software device, fixed when it starts (on the first call
/// routed to it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Number of devices (1 to [`MAX_DEVICES`]). Default 2, so that
    /// multi-device and peer rules are exercised.
    pub device_count: u32,
    /// Bytes of memory per device. Default 64 GiB. The memory is sparse:
    /// host RAM is committed only for bytes actually written.
    pub device_memory: u64,
    /// VMM allocation granularity for normal and huge pages (MINIMUM and
    /// RECOMMENDED alike); 1 GiB pages always have 1 GiB. Default 2 MiB, the
    /// huge-page size of the hardware; a power of two from 4 KiB to 1 GiB.
    pub granularity: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            device_count: 2,
            device_memory: 64 << 30,
            granularity: 2 << 20,
        }
    }
}

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// An environment variable could not be parsed or is out of range.
    #[error("{variable}={value:?}: {reason}")]
    BadVariable {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An entry of a list-valued environment variable (the fault list
    /// [`ENV_FAULTS`](crate::soft::ENV_FAULTS)) is malformed; nothing of the list
    /// is used.
    #[error("{variable}={value:?}: bad entry {entry:?}: {reason}")]
    BadEntry {
        /// The variable.
        variable: &'static str,
        /// Its whole value.
        value: String,
        /// The first entry that cannot be used.
        entry: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A field of [`Config`] is out of range.
    #[error("software device configuration: {0}")]
    OutOfRange(&'static str),
    /// The software device has already started with another configuration.
    #[error("the software device has already started; configure it before the first call")]
    AlreadyStarted,
}

impl Config {
    /// The default configuration overridden by the environment variables.
    ///
    /// # Errors
    ///
    /// [`ConfigError::BadVariable`] naming the variable that is malformed.
    pub fn from_env() -> Result<Self, ConfigError> {
        let mut config = Self::default();
        let bad = |variable, value: &str, reason| ConfigError::BadVariable {
            variable,
            value: value.to_string(),
            reason,
        };
        if let Ok(value) = std::env::var(ENV_DEVICE_COUNT) {
            config.device_count = value
                .trim()
                .parse()
                .map_err(|_| bad(ENV_DEVICE_COUNT, &value, "not a whole number"))?;
            if let Some(reason) = count_problem(config.device_count) {
                return Err(bad(ENV_DEVICE_COUNT, &value, reason));
            }
        }
        if let Ok(value) = std::env::var(ENV_DEVICE_MEMORY) {
            config.device_memory = parse_size(&value).ok_or_else(|| bad(ENV_DEVICE_MEMORY, &value, NOT_A_SIZE))?;
            if let Some(reason) = memory_problem(config.device_memory) {
                return Err(bad(ENV_DEVICE_MEMORY, &value, reason));
            }
        }
        if let Ok(value) = std::env::var(ENV_GRANULARITY) {
            config.granularity = parse_size(&value).ok_or_else(|| bad(ENV_GRANULARITY, &value, NOT_A_SIZE))?;
            if let Some(reason) = granularity_problem(config.granularity) {
                return Err(bad(ENV_GRANULARITY, &value, reason));
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks the ranges.
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] when the device count is 0 or above
    /// [`MAX_DEVICES`], the memory is under 64 MiB or above 1 TiB, or the
    /// granularity is not a power of two from 4 KiB to 1 GiB.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let problem = count_problem(self.device_count)
            .or_else(|| memory_problem(self.device_memory))
            .or_else(|| granularity_problem(self.granularity));
        match problem {
            Some(reason) => Err(ConfigError::OutOfRange(reason)),
            None => Ok(()),
        }
    }
}

const NOT_A_SIZE: &str = "not a size (bytes, or a number with K, M, G or T)";

fn count_problem(count: u32) -> Option<&'static str> {
    (count == 0 || count > MAX_DEVICES).then_some("device_count must be 1 to 64")
}

fn memory_problem(bytes: u64) -> Option<&'static str> {
    (!((64 << 20)..=(1 << 40)).contains(&bytes)).then_some("device_memory must be 64 MiB to 1 TiB")
}

fn granularity_problem(bytes: u64) -> Option<&'static str> {
    (!bytes.is_power_of_two() || !(4096..=(1 << 30)).contains(&bytes))
        .then_some("granularity must be a power of two from 4 KiB to 1 GiB")
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} device(s) x {} MiB, VMM granularity {} KiB",
            self.device_count,
            self.device_memory >> 20,
            self.granularity >> 10
        )
    }
}

/// Parses `123`, `64M`, `64G`, `1T` (binary units, case-insensitive, an
/// optional trailing `B` or `iB`).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_uppercase();
    let text = text
        .strip_suffix("IB")
        .or_else(|| text.strip_suffix('B'))
        .unwrap_or(&text);
    let (digits, shift) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 10),
        'M' => (&text[..text.len() - 1], 20),
        'G' => (&text[..text.len() - 1], 30),
        'T' => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    let number: u64 = digits.trim().parse().ok()?;
    number.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("64g"), Some(64 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1T"), Some(1 << 40));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999999999T"), None);
    }

    #[test]
    fn ranges_are_checked() {
        assert!(Config::default().validate().is_ok());
        let zero = Config {
            device_count: 0,
            ..Config::default()
        };
        assert!(zero.validate().is_err());
        let tiny = Config {
            device_memory: 1 << 20,
            ..Config::default()
        };
        assert!(tiny.validate().is_err());
    }
}
