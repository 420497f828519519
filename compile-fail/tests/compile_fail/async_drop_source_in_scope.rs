// A pinned host buffer cannot be dropped inside the scope after a copy from
// it was queued: the copy may still be reading it.
use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let host = PinnedHostBuf::from_slice(&device, &[1u32; 64])?;
    let mut on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    stream.scope(|s| {
        s.copy_to_device(&host, &mut on_device)?;
        drop(host);
        Ok(())
    })?;
    Ok(())
}
