// A handle to memory the scope holds cannot leave the scope: it would name
// the memory after the scope released it.
use ascend::{Device, DeviceBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let mut on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    let mut escaped = None;
    stream.scope(|s| {
        escaped = Some(s.hold_device(&mut on_device));
        Ok(())
    })?;
    drop(on_device);
    println!("{escaped:?}");
    Ok(())
}
