// Host memory cannot be moved (here: into another owner) while registered.
use ascend::Device;
use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let mut buf = AlignedHostBuf::<u32>::zeroed(1024)?;
    let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
    let elsewhere = vec![buf];
    drop(registration);
    drop(elsewhere);
    Ok(())
}
