// A buffer of a type that is not plain bytes: one error, at the call that
// needs `Pod`, not one per mention of the type.
use ascend::{Device, DeviceBuf};

fn main() -> Result<(), ascend::Error> {
    let device = Device::new(0)?;
    let names = DeviceBuf::<String>::zeroed(&device, 4)?;
    drop(names);
    Ok(())
}
