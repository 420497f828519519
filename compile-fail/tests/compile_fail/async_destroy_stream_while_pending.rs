// A stream cannot be destroyed while an owned transfer on it is pending.
use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let host = PinnedHostBuf::from_slice(&device, &[1u32; 64])?;
    let on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    let pending = stream.upload_owned(host, on_device)?;
    stream.destroy()?;
    let _ = pending.wait()?;
    Ok(())
}
