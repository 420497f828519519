// While registered, the host reaches the memory only through the
// registration: the device may write it, so the borrow is exclusive.
use ascend::Device;
use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};

fn main() -> ascend::Result<()> {
    let device = Device::new(0)?;
    let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    buf[0] = 1;
    drop(registration);
    Ok(())
}
