//! Byte counts for people: the one formatter of sizes in binary units, used
//! by the pool's snapshot picture and by argument errors.

/// `n` bytes in binary units with three significant digits: `1023 B`,
/// `1.50 KiB`, `31.2 GiB`.
pub(crate) fn human_bytes(n: usize) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64;
    let mut unit = 0;
    // Move up while the value would show as 1000 or more (1023.9 KiB is
    // 1.00 MiB, not "1024 KiB").
    while value >= 999.5 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let digits = if value < 9.995 {
        2
    } else if value < 99.95 {
        1
    } else {
        0
    };
    format!("{value:.digits$} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.00 KiB");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(2 << 20), "2.00 MiB");
        assert_eq!(human_bytes(20 << 20), "20.0 MiB");
        assert_eq!(human_bytes(512 << 20), "512 MiB");
        assert_eq!(human_bytes(33_554_432_000), "31.2 GiB", "31.25, the tie to even");
        assert_eq!(human_bytes((1 << 20) - 1), "1.00 MiB", "not 1024 KiB");
        assert_eq!(human_bytes(1000 << 10), "0.98 MiB", "not 1000 KiB");
        #[cfg(target_pointer_width = "64")]
        assert_eq!(human_bytes(usize::MAX), "16.0 EiB");
    }
}
