// A segment cannot shrink (unmap chunks) while a view of it lives.
use ascend::Device;
use ascend::vmm::{ExpandableSegment, PhysicalMemProp};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let chunk = prop.round_up(1)?;
    let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    segment.grow(2 * chunk)?;
    let view = segment.as_slice::<u8>()?;
    segment.shrink(chunk)?;
    println!("{}", view.len());
    Ok(())
}
