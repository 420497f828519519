// A view of an owned mapping cannot outlive the mapping's unmap.
use ascend::Device;
use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use std::sync::Arc;

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let granule = prop.round_up(1)?;
    let range = Arc::new(VirtualRange::reserve(granule)?);
    let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    let mapping = OwnedMapping::new(range, 0, physical)?;
    let view = mapping.as_slice::<u8>()?;
    drop(mapping.unmap());
    println!("{}", view.len());
    Ok(())
}
