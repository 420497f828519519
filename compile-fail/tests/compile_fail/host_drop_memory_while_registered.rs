// Host memory cannot be freed while it is registered.
use ascend::Device;
use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    drop(buf);
    registration.unregister()?;
    Ok(())
}
