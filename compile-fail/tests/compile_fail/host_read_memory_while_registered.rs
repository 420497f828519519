// Not even a shared read of the registered memory: the device may be
// writing it through a mapped registration.
use ascend::Device;
use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
    let first: &u8 = &buf[0];
    drop(registration);
    println!("{first}");
    Ok(())
}
