//! Host registration: register page-aligned host memory with the device,
//! print its device pointer, show that the host side still moves data like
//! ordinary host memory, and unregister.
//!
//! ```text
//! cargo run --example host_register
//! ```

use ascend::host_register::{
    AlignedHostBuf, HacType, HostRegisterFlags, HostRegisterType, HostRegistration, host_mem_map_capabilities,
};
use ascend::{Device, DeviceBuf};

/// Logs go to standard error through `env_logger`: `RUST_LOG=ascend=trace`
/// shows every allocation, free, map and unmap; `RUST_LOG=info` the backend
/// choice.
fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    println!("{}", ascend::backend()?.describe());
    let device = Device::new(0)?;

    // Which engines of the device can reach mapped host memory.
    for hac in HacType::ALL {
        match host_mem_map_capabilities(&device, hac) {
            Ok(supported) => println!(
                "{hac:?}: host memory mapping {}",
                if supported { "supported" } else { "not supported" }
            ),
            Err(error) => println!("{hac:?}: {error}"),
        }
    }

    // 64 KiB of ordinary host memory, 4 KiB-aligned as registration requires.
    let words = 16 * 1024;
    let pattern: Vec<u32> = (0..words as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut host = AlignedHostBuf::from_slice(&pattern)?;

    // V1: register and map; the runtime returns the device pointer.
    let mut registration = HostRegistration::register(&device, &mut host, HostRegisterType::Mapped)?;
    let device_pointer = registration.device_pointer()?;
    println!(
        "registered {} KiB at {:p}; device pointer {device_pointer:?}",
        registration.byte_len() >> 10,
        registration.as_slice().as_ptr()
    );
    if registration.registered_pointer() != Some(device_pointer) {
        return Err("aclrtHostGetDevicePointer disagrees with aclrtHostRegister".into());
    }

    // The host side is still host memory: write through the registration,
    // copy it to the device and back.
    registration.as_mut_slice()[0] = 0xdead_beef;
    let on_device = DeviceBuf::from_slice(&device, registration.as_slice())?;
    let back = on_device.to_vec()?;
    if back[..] != registration.as_slice()[..] {
        return Err("the copy of registered memory differs".into());
    }
    println!(
        "copied {} KiB of registered memory to the device and back: verified",
        (back.len() * 4) >> 10
    );
    registration.unregister()?;

    // Unregistered: the memory is ours again, and can be registered anew
    // (V2, mapped and pinned).
    if host[0] != 0xdead_beef || host[1..] != pattern[1..] {
        return Err("the host memory does not hold what was written".into());
    }
    let again = HostRegistration::register_v2(
        &device,
        &mut host,
        HostRegisterFlags::MAPPED | HostRegisterFlags::PINNED,
    )?;
    println!(
        "registered again (V2, MAPPED | PINNED): device pointer {:?}",
        again.device_pointer()?
    );
    drop(again);
    println!("unregistered");
    Ok(())
}
