//! Virtual memory management: reserve an address range, allocate physical
//! memory, map it (one mapping with access from the start, one granted
//! access afterwards), copy through both, then tear everything down in the
//! only order the types allow.
//!
//! ```text
//! cargo run --example vmm
//! ```

use ascend::Device;
use ascend::vmm::{AccessDesc, Granularity, MemLocation, PhysicalAlloc, PhysicalMemProp, VirtualRange};

/// Logs go to standard error through `env_logger`: `RUST_LOG=ascend=trace`
/// shows every allocation, free, map and unmap; `RUST_LOG=info` the backend
/// choice.
fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    println!("{}", ascend::backend()?.describe());
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let granule = prop.granularity(Granularity::Minimum)?;
    println!(
        "granularity: minimum {} KiB, recommended {} KiB",
        granule >> 10,
        prop.granularity(Granularity::Recommended)? >> 10
    );

    // One range of four granules; two physical allocations of one granule.
    let range = VirtualRange::reserve(4 * granule)?;
    let first = PhysicalAlloc::new(&prop, granule)?;
    let second = PhysicalAlloc::new(&prop, granule)?;
    println!("reserved {} bytes at {:?}", range.size(), range.base());

    // Adjacent mappings: the first usable at once, the second only after
    // access is granted.
    let mut low = range.map(0, &first)?;
    let mut high = range.map_no_access(granule, &second)?;
    high.set_access(&[AccessDesc::read_write(MemLocation::Device(device.id()))])?;

    let words = granule / 4;
    let pattern: Vec<u32> = (0..words as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    low.as_mut_slice::<u32>()?.write_from_host(&pattern)?;
    high.as_mut_slice::<u32>()?.copy_from_device(&low.as_slice::<u32>()?)?;
    let back = high.as_slice::<u32>()?.to_vec()?;
    if back != pattern {
        return Err("data copied between mappings differs".into());
    }
    println!(
        "copied {} KiB between two mappings of one range: verified",
        granule >> 10
    );

    // A second reference to the physical memory, taken from the mapping.
    let retained = low.retain_physical()?;
    println!("retained a second handle to {} bytes", retained.size());

    // Tear down: mappings first (they borrow the range and the memory),
    // then the memory, then the range.
    low.unmap()?;
    high.unmap()?;
    retained.free()?;
    first.free()?;
    second.free()?;
    range.release()?;
    println!("unmapped, freed and released");
    Ok(())
}
