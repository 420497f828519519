// A typed view of an IPC import cannot outlive the import.
use ascend::Device;
use ascend::share::{IpcImport, IpcKey};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let key: IpcKey = std::env::var("KEY").unwrap_or_default().parse()?;
    let view = {
        let import = IpcImport::open(&key, &device)?;
        import.as_slice::<u32>()?
    };
    println!("{}", view.len());
    Ok(())
}
