// The halves of a consuming split keep the buffer borrowed: the buffer
// cannot be freed while either half is still used.
use ascend::{Device, DeviceBuf};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let mut buf = DeviceBuf::<u8>::zeroed(&device, 8)?;
    let (_head, mut tail) = buf.as_mut_slice().split_at_mut(4)?;
    buf.free()?;
    tail.fill_bytes(0)?;
    Ok(())
}
