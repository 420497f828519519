// A device buffer cannot be freed while exported by key.
use ascend::{Device, DeviceBuf};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let buf = DeviceBuf::from_slice(&device, &[1u32; 1024])?;
    let export = buf.ipc_export()?;
    buf.free()?;
    export.close()?;
    Ok(())
}
