// The device destination of a queued copy cannot be freed (or read back)
// inside the scope.
use ascend::{Device, DeviceBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let host = vec![1u32; 64];
    let mut on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    stream.scope(|s| {
        s.copy_to_device(&host, &mut on_device)?;
        on_device.free()?;
        Ok(())
    })?;
    Ok(())
}
