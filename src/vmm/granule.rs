//! The VMM size and alignment preconditions, checked in Rust before any
//! call, with one message for every entry point: what is wrong, the
//! granularity, and how to fix it. (The runtime checks few of them itself;
//! on real CANN the outcome of a misaligned size is not specified.)

use super::properties::{Granularity, MemAttr, PhysicalMemProp};
use crate::Device;
use crate::byte_units::human_bytes;
use crate::error::{Call, Error, Result};
use crate::memory::MemLocation;

/// `size` must be a positive multiple of `granularity`.
pub(super) fn require_size(call: Call, size: usize, granularity: usize) -> Result<()> {
    if size != 0 && size.is_multiple_of(granularity) {
        return Ok(());
    }
    Err(Error::invalid(
        call,
        format!(
            "size {size} is not a positive multiple of the granularity, {}: round it up with \
             PhysicalMemProp::round_up",
            granule_text(granularity)
        ),
    ))
}

/// `what` (an offset or an address, shown in hex) must be a multiple of
/// `granularity`; zero is.
pub(super) fn require_aligned(call: Call, what: &str, value: usize, granularity: usize) -> Result<()> {
    if value.is_multiple_of(granularity) {
        return Ok(());
    }
    Err(Error::invalid(
        call,
        format!(
            "{what} {value:#x} is not aligned to the granularity, {}",
            granule_text(granularity)
        ),
    ))
}

/// The minimum granularity of huge-page memory on the current device (device
/// 0 when the thread has none): what a range of device addresses is
/// reserved and mapped in.
pub(super) fn address_granularity() -> Result<usize> {
    let id = Device::current()?.map_or(0, |device| device.id());
    PhysicalMemProp::new(MemLocation::Device(id), MemAttr::HUGE).granularity(Granularity::Minimum)
}

/// A granularity as `2.00 MiB (2097152 bytes)`: readable, and exact.
fn granule_text(granularity: usize) -> String {
    format!("{} ({granularity} bytes)", human_bytes(granularity))
}

#[cfg(test)]
mod tests {
    use super::{granule_text, require_aligned, require_size};
    use crate::Call;

    const X: Call = Call::rust("x");

    #[test]
    fn messages_name_the_granularity_in_units_and_bytes() {
        assert_eq!(granule_text(2 << 20), "2.00 MiB (2097152 bytes)");
        assert_eq!(granule_text(1 << 30), "1.00 GiB (1073741824 bytes)");
        assert_eq!(granule_text(64 << 10), "64.0 KiB (65536 bytes)");
        assert_eq!(granule_text(1000), "1000 B (1000 bytes)");
        let error = require_size(X, 3000, 2 << 20).expect_err("not a multiple");
        assert_eq!(
            error.to_string(),
            "x: size 3000 is not a positive multiple of the granularity, 2.00 MiB (2097152 bytes): round it up with \
             PhysicalMemProp::round_up"
        );
        assert!(require_size(X, 0, 2 << 20).is_err());
        assert!(require_size(X, 4 << 20, 2 << 20).is_ok());
        let error = require_aligned(X, "offset", 0x1000, 2 << 20).expect_err("misaligned");
        assert_eq!(
            error.to_string(),
            "x: offset 0x1000 is not aligned to the granularity, 2.00 MiB (2097152 bytes)"
        );
        assert!(require_aligned(X, "offset", 0, 2 << 20).is_ok());
    }
}
