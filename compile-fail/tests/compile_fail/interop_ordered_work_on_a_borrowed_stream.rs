// Stream-ordered work cannot be queued through a borrowed stream handle:
// an `Ordered` buffer takes an `Arc<Stream>` and keeps it until its work is
// proven finished, which could be after the borrow ends, so a
// `BorrowedStream` (which derefs only to `&Stream`) is refused.
use ascend::stream::{Ordered, Stream};
use ascend::{Device, DeviceBuf};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let owner = Stream::new(&device)?;
    let buf = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64)?);
    // SAFETY: a live stream of `device`; `owner` outlives `borrowed`.
    let borrowed = unsafe { Stream::borrow_raw(owner.as_raw(), &device) }?;
    buf.fill_bytes(1, &borrowed)?;
    Ok(())
}
