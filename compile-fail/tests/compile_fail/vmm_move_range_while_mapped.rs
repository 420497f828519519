// Moving the range (for example into a collection) while a mapping borrows it
// does not compile.
use ascend::Device;
use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let granule = prop.round_up(1)?;
    let range = VirtualRange::reserve(granule)?;
    let physical = PhysicalAlloc::new(&prop, granule)?;
    let region = range.map(0, &physical)?;
    let ranges = vec![range];
    drop(region);
    drop(ranges);
    Ok(())
}
