// An imported allocation cannot be freed while mapped.
use ascend::Device;
use ascend::share::{ImportedAlloc, ShareableHandle};
use ascend::vmm::VirtualRange;

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let token: ShareableHandle = std::env::var("TOKEN").unwrap_or_default().parse()?;
    let imported = ImportedAlloc::import(&token, &device)?;
    let range = VirtualRange::reserve(imported.size())?;
    let region = range.map(0, &imported)?;
    imported.free()?;
    drop(region);
    Ok(())
}
