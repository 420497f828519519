// A view cast to another element type still borrows the buffer: the
// buffer cannot be dropped while the cast view is used.
use ascend::{Device, DeviceBuf};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let buf = DeviceBuf::<u8>::zeroed(&device, 8)?;
    let words = buf.as_slice().cast::<u32>()?;
    drop(buf);
    let _ = words.to_vec()?;
    Ok(())
}
