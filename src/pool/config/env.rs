//! [`PoolConfig`] from text: `ASCEND_ALLOC_CONF`, in the spirit of
//! torch_npu's `PYTORCH_NPU_ALLOC_CONF`.

use super::PoolConfig;
use super::rounding;
use crate::error::{Call, Error, Result};

/// The environment variable [`PoolConfig::from_env`] reads.
pub const ENV_ALLOC_CONF: &str = "ASCEND_ALLOC_CONF";

const MIB: usize = 1 << 20;

/// The pinned pool's settings in the same text
/// ([`PinnedPool::from_conf`](crate::pool::PinnedPool::from_conf)), in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::pool) struct PinnedSettings {
    /// `pinned_max_round_threshold_mb`.
    pub(in crate::pool) round_threshold: usize,
    /// `pinned_max_cached_size_mb`.
    pub(in crate::pool) max_cached: usize,
}

impl PinnedSettings {
    /// The default rounding threshold, 16 MiB
    /// ([`PinnedPool::DEFAULT_ROUND_THRESHOLD`](crate::pool::PinnedPool::DEFAULT_ROUND_THRESHOLD),
    /// which tells why): set here, with the other defaults of the text.
    pub(in crate::pool) const DEFAULT_ROUND_THRESHOLD: usize = 16 << 20;
}

impl Default for PinnedSettings {
    fn default() -> Self {
        Self {
            round_threshold: Self::DEFAULT_ROUND_THRESHOLD,
            max_cached: usize::MAX,
        }
    }
}

impl PoolConfig {
    /// Parses `key:value` pairs separated by commas over the defaults:
    ///
    /// | key | value | field |
    /// |---|---|---|
    /// | `expandable_segments` | `True` (the only mode) | — |
    /// | `rounding_bytes` | bytes, a power of two | [`rounding`](Self::rounding) |
    /// | `small_limit_mb` | MiB | [`small_limit`](Self::small_limit) |
    /// | `small_chunk_mb` | MiB | [`small_chunk`](Self::small_chunk) |
    /// | `large_chunk_mb`, or torch_npu's `segment_size_mb` | MiB | [`large_chunk`](Self::large_chunk) |
    /// | `small_reserve_mb` | MiB | [`small_reserve`](Self::small_reserve) |
    /// | `large_reserve_mb` | MiB | [`large_reserve`](Self::large_reserve) |
    /// | `max_split_size_mb` | MiB (20 at least, as in torch) | [`max_split_size`](Self::max_split_size) |
    /// | `garbage_collection_threshold` | a fraction in (0, 1) | [`garbage_collection_threshold`](Self::garbage_collection_threshold) |
    /// | `roundup_power2_divisions` | `4`, or `[256:1,512:2,>:8]` (MiB keys) | [`roundup_power2_divisions`](Self::roundup_power2_divisions) |
    /// | `per_process_memory_fraction` | a fraction in (0, 1] | [`memory_fraction`](Self::memory_fraction) |
    /// | `memory_limit_mb` | MiB | [`memory_limit`](Self::memory_limit) |
    /// | `pinned_max_round_threshold_mb`, `pinned_max_cached_size_mb` | MiB | the pinned pool's ([`PinnedPool::from_conf`](crate::pool::PinnedPool::from_conf)): checked here |
    ///
    /// The list form of `roundup_power2_divisions` keeps its commas inside
    /// the brackets. A torch_npu line carries over as it is:
    ///
    /// ```
    /// use ascend::pool::PoolConfig;
    /// let config = PoolConfig::parse("expandable_segments:True,large_chunk_mb:40,large_reserve_mb:4000")?;
    /// assert_eq!(config.large_chunk, 40 << 20);
    /// let torch = PoolConfig::parse(
    ///     "max_split_size_mb:128,garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,>:4]",
    /// )?;
    /// assert_eq!(torch.max_split_size, Some(128 << 20));
    /// assert_eq!(torch.roundup_power2_divisions[9], 4); // 512 MiB..1 GiB
    /// // torch_npu's keys with no counterpart here are refused, with the reason.
    /// let refused = PoolConfig::parse("page_size:1g").unwrap_err().to_string();
    /// assert!(refused.contains("`page_size:1g`: refused: chunks use the device's VMM granularity"), "{refused}");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the entry for an unknown key
    /// (whatever its value; the error lists the known keys), a torch_npu
    /// key with no counterpart here (`refused:` and the reason, as in the
    /// [pools guide](crate::guide::pools)'s table), a malformed
    /// entry or number, or `expandable_segments:False`. The values are
    /// checked against each other when a pool is made.
    pub fn parse(text: &str) -> Result<Self> {
        parse_both(Call::rust("PoolConfig::parse"), text).map(|(config, _)| config)
    }

    /// [`PoolConfig::parse`] of [`ENV_ALLOC_CONF`], or the defaults when it
    /// is unset.
    ///
    /// # Errors
    ///
    /// As [`PoolConfig::parse`], and for a value that is not UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{DevicePool, ENV_ALLOC_CONF, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// // e.g. ASCEND_ALLOC_CONF=large_chunk_mb:40,large_reserve_mb:4000
    /// let config = PoolConfig::from_env()?;
    /// match std::env::var(ENV_ALLOC_CONF) {
    ///     Ok(text) => assert_eq!(config, PoolConfig::parse(&text)?),
    ///     Err(_) => assert_eq!(config, PoolConfig::default()),
    /// }
    /// let pool = DevicePool::new(&device, config)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        const CALL: Call = Call::rust("PoolConfig::from_env");
        match read_env(CALL)? {
            Some(text) => parse_both(CALL, &text).map(|(config, _)| config),
            None => Ok(Self::default()),
        }
    }
}

/// Both pools' settings in `text` (the syntax of [`PoolConfig::parse`]),
/// over their defaults.
///
/// # Errors
///
/// As [`PoolConfig::parse`].
pub(in crate::pool) fn parse_both(call: Call, text: &str) -> Result<(PoolConfig, PinnedSettings)> {
    let (mut config, mut pinned) = (PoolConfig::default(), PinnedSettings::default());
    for entry in entries(text) {
        let refuse = |why: &str| Err(Error::invalid(call, format!("`{entry}`: {why}")));
        let Some((key, value)) = entry.split_once(':') else {
            return refuse("expected key:value");
        };
        let (key, value) = (key.trim(), value.trim());
        // The key first: a misspelt key is reported as such, whatever its
        // value.
        if let Some(&(_, reason)) = REFUSED.iter().find(|(refused, _)| *refused == key) {
            return refuse(&format!("refused: {reason}"));
        }
        let Some(&(_, key)) = KEYS.iter().find(|(known, _)| *known == key) else {
            let known: Vec<&str> = KEYS.iter().map(|(known, _)| *known).collect();
            return refuse(&format!("unknown key `{key}` (the keys are {})", known.join(", ")));
        };
        match key {
            Key::ExpandableSegments => {
                if value.eq_ignore_ascii_case("true") {
                    continue;
                }
                return refuse("the pool always uses expandable segments");
            }
            Key::RoundupPower2Divisions => {
                match rounding::parse_divisions(value) {
                    Ok(table) => config.roundup_power2_divisions = table,
                    Err(why) => return refuse(&why),
                }
                continue;
            }
            Key::GarbageCollectionThreshold | Key::PerProcessMemoryFraction => {
                let fraction = value.parse::<f64>().ok().filter(|fraction| {
                    *fraction > 0.0 && (*fraction < 1.0 || (key == Key::PerProcessMemoryFraction && *fraction == 1.0))
                });
                let Some(fraction) = fraction else {
                    return refuse(if key == Key::PerProcessMemoryFraction {
                        "the value is not a fraction in (0, 1]"
                    } else {
                        "the value is not a fraction strictly between 0 and 1"
                    });
                };
                if key == Key::PerProcessMemoryFraction {
                    config.memory_fraction = Some(fraction);
                } else {
                    config.garbage_collection_threshold = Some(fraction);
                }
                continue;
            }
            _ => {}
        }
        let Ok(number) = value.parse::<usize>() else {
            return refuse("the value is not a whole number");
        };
        let mib = number.checked_mul(MIB);
        let (slot, bytes) = match key {
            // Handled above.
            Key::ExpandableSegments
            | Key::RoundupPower2Divisions
            | Key::GarbageCollectionThreshold
            | Key::PerProcessMemoryFraction => continue,
            Key::MaxSplitSizeMb => {
                let Some(bytes) = mib else {
                    return refuse("the size overflows");
                };
                // torch raises it to its 20 MiB slack at least.
                config.max_split_size = Some(bytes.max(PoolConfig::OVERSIZE_SLACK));
                continue;
            }
            Key::MemoryLimitMb => {
                let Some(bytes) = mib else {
                    return refuse("the size overflows");
                };
                config.memory_limit = Some(bytes);
                continue;
            }
            Key::RoundingBytes => (&mut config.rounding, Some(number)),
            Key::SmallLimitMb => (&mut config.small_limit, mib),
            Key::SmallChunkMb => (&mut config.small_chunk, mib),
            Key::LargeChunkMb => (&mut config.large_chunk, mib),
            Key::SmallReserveMb => (&mut config.small_reserve, mib),
            Key::LargeReserveMb => (&mut config.large_reserve, mib),
            // The pinned pool's, in the same text.
            Key::PinnedMaxRoundThresholdMb => (&mut pinned.round_threshold, mib),
            Key::PinnedMaxCachedSizeMb => (&mut pinned.max_cached, mib),
        };
        match bytes {
            Some(bytes) => *slot = bytes,
            None => return refuse("the size overflows"),
        }
    }
    Ok((config, pinned))
}

/// The entries of `text`: split at the commas outside brackets, trimmed,
/// the empty ones skipped.
fn entries(text: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    text.split(move |c: char| {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        c == ',' && depth == 0
    })
    .map(str::trim)
    .filter(|entry| !entry.is_empty())
}

/// A key of [`parse_both`]'s text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    ExpandableSegments,
    RoundingBytes,
    SmallLimitMb,
    SmallChunkMb,
    LargeChunkMb,
    SmallReserveMb,
    LargeReserveMb,
    MaxSplitSizeMb,
    GarbageCollectionThreshold,
    RoundupPower2Divisions,
    PerProcessMemoryFraction,
    MemoryLimitMb,
    PinnedMaxRoundThresholdMb,
    PinnedMaxCachedSizeMb,
}

/// Every key [`parse_both`] knows, as written, in the order of
/// [`PoolConfig::parse`]'s table (an unknown key's error lists them).
const KEYS: [(&str, Key); 15] = [
    ("expandable_segments", Key::ExpandableSegments),
    ("rounding_bytes", Key::RoundingBytes),
    ("small_limit_mb", Key::SmallLimitMb),
    ("small_chunk_mb", Key::SmallChunkMb),
    ("large_chunk_mb", Key::LargeChunkMb),
    ("segment_size_mb", Key::LargeChunkMb),
    ("small_reserve_mb", Key::SmallReserveMb),
    ("large_reserve_mb", Key::LargeReserveMb),
    ("max_split_size_mb", Key::MaxSplitSizeMb),
    ("garbage_collection_threshold", Key::GarbageCollectionThreshold),
    ("roundup_power2_divisions", Key::RoundupPower2Divisions),
    ("per_process_memory_fraction", Key::PerProcessMemoryFraction),
    ("memory_limit_mb", Key::MemoryLimitMb),
    ("pinned_max_round_threshold_mb", Key::PinnedMaxRoundThresholdMb),
    ("pinned_max_cached_size_mb", Key::PinnedMaxCachedSizeMb),
];

/// The reason the pinned pool needs none of torch_npu's pinned segment
/// keys.
const PINNED_ON_DEMAND: &str = "the pinned pool allocates each buffer on demand and needs no background thread (a \
                                buffer's next owner waits for its old copies)";

/// torch_npu's documented keys that have no counterpart here, each with
/// the reason its error gives: the same text as the table of
/// `docs/pools.md` (`tests/pool_knobs.rs` checks them against it).
const REFUSED: [(&str, &str); 6] = [
    (
        "base_addr_aligned_kb",
        "every block here is at least 512-byte aligned and a segment's base is the reservation's, aligned to the VMM \
         granularity, so the 16 KiB alignment torch_npu asks for large blocks holds for their chunks, not per block",
    ),
    (
        "page_size",
        "chunks use the device's VMM granularity (`large_chunk_mb` sets their size, not their page size)",
    ),
    ("pinned_reserve_segment_size_mb", PINNED_ON_DEMAND),
    ("pinned_use_background_threads", PINNED_ON_DEMAND),
    ("pinned_mem_register", PINNED_ON_DEMAND),
    ("pin_memory_expandable_segments", PINNED_ON_DEMAND),
];

/// The text of [`ENV_ALLOC_CONF`], `None` when it is unset.
///
/// # Errors
///
/// [`Error::InvalidArgument`], naming `call`, for a value that is not UTF-8.
pub(in crate::pool) fn read_env(call: Call) -> Result<Option<String>> {
    match std::env::var(ENV_ALLOC_CONF) {
        Ok(text) => Ok(Some(text)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::invalid(call, format!("{ENV_ALLOC_CONF} is not UTF-8"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_torch_npus() {
        let config = PoolConfig::default();
        assert_eq!(
            (
                config.rounding,
                config.small_limit,
                config.small_chunk,
                config.large_chunk
            ),
            (512, 1 << 20, 2 << 20, 20 << 20),
            "512 B rounding, 1 MiB small limit, 2 MiB and 20 MiB chunks"
        );
        let parsed = PoolConfig::parse(" , ").unwrap();
        assert_eq!(
            (parsed.rounding, parsed.small_chunk, parsed.large_reserve),
            (config.rounding, config.small_chunk, config.large_reserve),
            "no entries: the defaults"
        );
    }

    #[test]
    fn entries_set_their_fields_and_bad_ones_are_named() {
        let config = PoolConfig::parse(" rounding_bytes:1024 , small_chunk_mb:4,small_limit_mb:2 ").unwrap();
        assert_eq!(
            (config.rounding, config.small_chunk, config.small_limit),
            (1024, 4 << 20, 2 << 20)
        );
        assert_eq!(PoolConfig::parse("").unwrap(), PoolConfig::default());
        for bad in [
            "nonsense",
            "small_chunk_mb:x",
            "expandable_segments:False",
            "max_split_size_mb:x",
            "garbage_collection_threshold:1.0",
            "per_process_memory_fraction:0",
            "roundup_power2_divisions:3",
            "pinned_max_cached_size_mb:x",
        ] {
            let error = PoolConfig::parse(bad).unwrap_err().to_string();
            assert!(error.contains(bad.split(',').next().unwrap_or(bad)), "{error}");
        }
        assert!(PoolConfig::parse(&format!("large_reserve_mb:{}", usize::MAX)).is_err());
        assert!(PoolConfig::parse(&format!("pinned_max_cached_size_mb:{}", usize::MAX)).is_err());
        assert_eq!(
            PoolConfig::parse("pinned_max_round_threshold_mb:64").unwrap(),
            PoolConfig::default(),
            "the pinned pool's keys are checked and left to it"
        );
        let (_, pinned) = parse_both(
            Call::rust("t"),
            "pinned_max_round_threshold_mb:64, pinned_max_cached_size_mb:2",
        )
        .unwrap();
        assert_eq!(
            pinned,
            PinnedSettings {
                round_threshold: 64 << 20,
                max_cached: 2 << 20
            }
        );
        assert_eq!(parse_both(Call::rust("t"), "").unwrap().1, PinnedSettings::default());
    }

    #[test]
    fn torchs_knobs_parse_with_their_syntax() {
        let config = PoolConfig::parse(
            "max_split_size_mb:64, garbage_collection_threshold:0.6, roundup_power2_divisions:[1:2,256:4,>:8], \
             per_process_memory_fraction:0.5,memory_limit_mb:1024",
        )
        .unwrap();
        assert_eq!(config.max_split_size, Some(64 << 20));
        assert_eq!(config.garbage_collection_threshold, Some(0.6));
        assert_eq!(config.memory_fraction, Some(0.5));
        assert_eq!(config.memory_limit, Some(1 << 30));
        assert_eq!(PoolConfig::parse("segment_size_mb:128").unwrap().large_chunk, 128 << 20);
        assert_eq!(
            PoolConfig::parse("max_split_size_mb:8").unwrap().max_split_size,
            Some(20 << 20),
            "raised to 20 MiB as torch does"
        );
        assert_eq!(
            (
                config.roundup_power2_divisions[0],
                config.roundup_power2_divisions[8],
                config.roundup_power2_divisions[15]
            ),
            (2, 4, 8)
        );
        assert_eq!(
            PoolConfig::parse("roundup_power2_divisions:4")
                .unwrap()
                .roundup_power2_divisions,
            [4; 16]
        );
        assert_eq!(
            PoolConfig::parse("per_process_memory_fraction:1")
                .unwrap()
                .memory_fraction,
            Some(1.0)
        );
        let error = PoolConfig::parse("roundup_power2_divisions:[256:3]")
            .unwrap_err()
            .to_string();
        assert!(error.contains("roundup_power2_divisions:[256:3]"), "{error}");
    }

    #[test]
    fn an_unknown_key_is_named_with_the_known_ones_whatever_its_value() {
        // A typo of `expandable_segments` with a value that is no number:
        // the key is what is wrong, not the value.
        for bad in ["expandable_segment:True", "page_sizes:1g", "base_addr_aligned:16"] {
            let error = PoolConfig::parse(bad).unwrap_err().to_string();
            let key = bad.split(':').next().unwrap_or(bad);
            assert!(error.contains("unknown key"), "{error}");
            assert!(error.contains(key), "{error}");
            assert!(!error.contains("whole number"), "{error}");
            for known in [
                "expandable_segments",
                "rounding_bytes",
                "small_limit_mb",
                "small_chunk_mb",
                "large_chunk_mb",
                "small_reserve_mb",
                "large_reserve_mb",
                "max_split_size_mb",
                "garbage_collection_threshold",
                "roundup_power2_divisions",
                "per_process_memory_fraction",
                "memory_limit_mb",
                "pinned_max_round_threshold_mb",
                "pinned_max_cached_size_mb",
            ] {
                assert!(error.contains(known), "{known} is not listed: {error}");
            }
        }
        // A known key's bad value is still reported as a bad value.
        let error = PoolConfig::parse("small_chunk_mb:True").unwrap_err().to_string();
        assert!(error.contains("whole number") && !error.contains("unknown"), "{error}");
    }
}
