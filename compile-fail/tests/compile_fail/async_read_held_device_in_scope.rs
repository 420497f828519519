// Device memory the scope holds cannot be read back by the host inside the
// scope: queued transfers may still be writing it.
use ascend::{Device, DeviceBuf, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let mut on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    stream.scope(|s| {
        let held = s.hold_device(&mut on_device);
        s.fill_bytes(held, 1)?;
        let _now = on_device.to_vec()?;
        s.copy_to_device(&[2u32; 64], held)
    })?;
    Ok(())
}
