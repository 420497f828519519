// The scope handle cannot leave its closure: work queued through it after
// the scope synchronised would outlive the borrows.
use ascend::{Device, Stream};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let stream = Stream::new(&device)?;
    let mut escaped = None;
    stream.scope(|s| {
        escaped = Some(s);
        Ok(())
    })?;
    drop(escaped);
    Ok(())
}
