// A buffer created inside the scope does not live long enough for a queued
// copy: it would be freed before the scope synchronises.
use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let mut on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    stream.scope(|s| {
        let host = PinnedHostBuf::from_slice(&device, &[1u32; 64])?;
        s.copy_to_device(&host, &mut on_device)?;
        Ok(())
    })?;
    Ok(())
}
