// The host destination of a queued copy cannot be read inside the scope:
// the copy may still be writing it.
use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let on_device = DeviceBuf::from_slice(&device, &[1u32; 64])?;
    let mut host = PinnedHostBuf::<u32>::zeroed(&device, 64)?;
    stream.scope(|s| {
        s.copy_to_host(&on_device, &mut host)?;
        println!("{}", host[0]);
        Ok(())
    })?;
    Ok(())
}
