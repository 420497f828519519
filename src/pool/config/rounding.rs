//! torch's `roundup_power2_divisions`: request sizes rounded up to one of
//! N equal steps between two powers of two, so that a model whose shapes
//! vary a little reuses the same cached blocks.

/// How many power-of-two intervals have a setting of their own: the first
/// is every size below 2 MiB, the last every size from 32 GiB up.
pub(in crate::pool) const INTERVALS: usize = 16;

/// The start of the first interval, 1 MiB, as a power of two.
const FIRST_LOG2: u32 = 20;

/// The divisions of the interval holding `size`.
fn divisions_for(size: usize, divisions: &[usize; INTERVALS]) -> usize {
    let log2 = size.max(1).ilog2();
    let index = log2.saturating_sub(FIRST_LOG2) as usize;
    divisions[index.min(INTERVALS - 1)]
}

/// `size` rounded as torch rounds a request, with `rounding` (a power of
/// two) as the smallest block and the step otherwise: below `rounding`,
/// `rounding`; with more than one division for its interval and above
/// `rounding × divisions`, up to the next of the `divisions` equal steps
/// between the power of two at or below `size` and the next one (a power
/// of two stays as it is); else up to a multiple of `rounding`. `None` on
/// overflow.
pub(in crate::pool) fn round_size(size: usize, rounding: usize, divisions: &[usize; INTERVALS]) -> Option<usize> {
    let mask = rounding - 1;
    let plain = size.max(1).checked_add(mask).map(|sum| sum & !mask);
    let split = divisions_for(size, divisions);
    if split <= 1 || size <= rounding.saturating_mul(split) || size.is_power_of_two() {
        return plain;
    }
    // `size` > rounding × split, both powers of two: the step is a power of
    // two of at least `rounding`.
    let floor = 1usize << size.ilog2();
    let step = floor / split;
    let below = size & !(step - 1);
    if below == size {
        Some(size)
    } else {
        below.checked_add(step)
    }
}

/// Parses torch's value of `roundup_power2_divisions`: one number for
/// every interval (`4`), or a bracketed list of `MiB:divisions` pairs whose
/// keys are powers of two (`[256:1,512:2,1024:4,>:8]`). As in torch, each
/// key sets its own interval (a key past the last interval sets the last),
/// the first key also every interval below it, and `>` every interval
/// after the key before it; intervals no entry sets are not divided.
/// Every value is 0 or 1 (no division) or a power of two.
///
/// # Errors
///
/// Why the text is refused.
pub(in crate::pool) fn parse_divisions(value: &str) -> Result<[usize; INTERVALS], String> {
    let number = |text: &str| -> Result<usize, String> {
        let divisions: usize = text
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a whole number"))?;
        if divisions > 1 && !divisions.is_power_of_two() {
            return Err(format!("{divisions} divisions is not a power of two"));
        }
        Ok(divisions)
    };
    let value = value.trim();
    let Some(list) = value.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) else {
        return Ok([number(value)?; INTERVALS]);
    };
    let mut table = [0; INTERVALS];
    let mut last = None;
    for pair in list.split(',').map(str::trim).filter(|pair| !pair.is_empty()) {
        let Some((key, divisions)) = pair.split_once(':') else {
            return Err(format!("`{pair}` is not MiB:divisions"));
        };
        let divisions = number(divisions)?;
        let key = key.trim();
        if key == ">" {
            let from = last.map_or(1, |index: usize| index + 1).min(INTERVALS);
            table[from..].fill(divisions);
            continue;
        }
        let mib: usize = key.parse().map_err(|_| format!("`{key}` is not a size in MiB"))?;
        if !mib.is_power_of_two() {
            return Err(format!("{mib} MiB is not a power of two"));
        }
        let index = (mib.ilog2() as usize).min(INTERVALS - 1);
        if last.is_none() {
            table[..index].fill(divisions);
        }
        table[index] = divisions;
        last = Some(index);
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn sizes_round_to_divisions_of_their_power_of_two() {
        let off = [0; INTERVALS];
        assert_eq!(round_size(1, 512, &off), Some(512));
        assert_eq!(round_size(3 * MIB + 1, 512, &off), Some(3 * MIB + 512));
        let four = [4; INTERVALS];
        // 1 MiB..2 MiB in steps of 256 KiB.
        assert_eq!(round_size(MIB + 1, 512, &four), Some(MIB + 256 * 1024));
        assert_eq!(round_size(MIB + 256 * 1024, 512, &four), Some(MIB + 256 * 1024));
        // 4 MiB..8 MiB in steps of 1 MiB; a power of two stays.
        assert_eq!(round_size(5 * MIB + 3, 512, &four), Some(6 * MIB));
        assert_eq!(round_size(4 * MIB, 512, &four), Some(4 * MIB));
        // Below the interval start the first interval's divisions hold:
        // 96 KiB..128 KiB steps of 16 KiB for 100 KiB.
        assert_eq!(round_size(100 * 1024, 512, &four), Some(112 * 1024));
        // At or below rounding × divisions: plain rounding.
        assert_eq!(round_size(2000, 512, &four), Some(2048));
        assert_eq!(round_size(usize::MAX, 512, &four), None);
    }

    #[test]
    fn the_list_form_sets_intervals_from_each_key() {
        let table = parse_divisions("[256:1, 512:2, 1024:4, >:8]").unwrap();
        assert_eq!(table[..8], [1; 8], "the first key holds below it too");
        assert_eq!((table[8], table[9], table[10], table[11], table[15]), (1, 2, 4, 8, 8));
        // Intervals between keys are not divided; a key past the last
        // interval sets the last.
        let gaps = parse_divisions("[1:2, 64:4, 65536:8]").unwrap();
        assert_eq!(
            (gaps[0], gaps[1], gaps[5], gaps[6], gaps[7], gaps[15]),
            (2, 0, 0, 4, 0, 8)
        );
        assert_eq!(parse_divisions("2").unwrap(), [2; INTERVALS]);
        assert_eq!(parse_divisions("[>:4]").unwrap()[1..], [4; INTERVALS - 1]);
        for bad in ["3", "[3:2]", "[1:3]", "x", "[1-2]", "[x:2]"] {
            assert!(parse_divisions(bad).is_err(), "{bad}");
        }
    }
}
