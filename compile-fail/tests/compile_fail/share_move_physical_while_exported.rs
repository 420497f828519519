// Nor moved: the export handle borrows it where it is.
use ascend::Device;
use ascend::share::{Pid, ShareKind};
use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    let export = physical.export(ShareKind::V2Fabric)?;
    let moved = Box::new(physical);
    export.allow_pids(&[Pid::current()?])?;
    drop(moved);
    Ok(())
}
