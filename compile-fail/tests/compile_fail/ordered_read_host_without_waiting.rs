// An `Ordered` pinned buffer has no host view: queued work may still write
// it, so the host reads it only through `get_mut`, which waits first.
use ascend::stream::{Ordered, Stream};
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use std::sync::Arc;

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Arc::new(Stream::new(&device)?);
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &[1u32; 64])?);
    let out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 64)?);
    out.copy_from_device(&tensor, &stream)?;
    println!("{}", out[0]);
    Ok(())
}
