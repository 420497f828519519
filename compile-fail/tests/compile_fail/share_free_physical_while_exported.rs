// A physical allocation cannot be freed while its export handle is alive.
use ascend::Device;
use ascend::share::ShareKind;
use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    let export = physical.export(ShareKind::V1)?;
    physical.free()?;
    println!("{}", export.token());
    Ok(())
}
