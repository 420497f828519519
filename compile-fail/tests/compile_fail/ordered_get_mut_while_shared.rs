// Host access to an `Ordered` buffer needs it unshared: through an `Arc`,
// another owner could queue work on it meanwhile.
use ascend::stream::Ordered;
use ascend::{Device, PinnedHostBuf};
use std::sync::Arc;

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let out = Arc::new(Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 64)?));
    let other = Arc::clone(&out);
    let host = out.get_mut()?;
    host[0] = 1;
    drop(other);
    Ok(())
}
