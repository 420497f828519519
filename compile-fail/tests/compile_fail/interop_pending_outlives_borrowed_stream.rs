// Work queued through a borrowed stream handle cannot outlive the borrowed
// stream: the `Pending` borrows it, so the handle's owner cannot be told
// the borrow is over while the transfer may still run.
use ascend::stream::Stream;
use ascend::{Device, DeviceBuf, PinnedHostBuf};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let owner = Stream::new(&device)?;
    let host = PinnedHostBuf::from_slice(&device, &[1u8; 64])?;
    let on_device = DeviceBuf::<u8>::zeroed(&device, 64)?;
    let pending = {
        // SAFETY: a live stream of `device`; `owner` outlives this block.
        let borrowed = unsafe { Stream::borrow_raw(owner.as_raw(), &device) }?;
        borrowed.upload_owned(host, on_device)?
    };
    let _ = pending.wait()?;
    Ok(())
}
