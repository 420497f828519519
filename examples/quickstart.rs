//! Host → device → host round trip, verified.
//!
//! Runs on the software device when no `libascendcl.so` is present:
//!
//! ```text
//! cargo run --example quickstart
//! ```

use ascend::{Device, DeviceBuf, PinnedHostBuf};

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
    let info = ascend::backend()?;
    println!("{}", info.describe());

    let device = Device::new(0)?;
    let (free, total) = device.memory_info()?;
    println!(
        "device 0: {} of {} MiB free ({} device(s))",
        free >> 20,
        total >> 20,
        Device::count()?
    );

    // 1 MiB of f32 in page-locked host memory.
    let len = 256 * 1024;
    let mut host = PinnedHostBuf::<f32>::zeroed(&device, len)?;
    for (i, value) in host.iter_mut().enumerate() {
        *value = i as f32 * 0.5;
    }

    // Host → device, device → device, device → host.
    let first = DeviceBuf::from_slice(&device, &host)?;
    let mut second = DeviceBuf::<f32>::zeroed(&device, len)?;
    second.copy_from_device(&first)?;
    let back = second.to_vec()?;

    let mismatches = back.iter().zip(host.iter()).filter(|(a, b)| a != b).count();
    if mismatches != 0 {
        return Err(format!("round trip corrupted {mismatches} of {len} values").into());
    }
    println!(
        "round trip of {} bytes verified: host -> device -> device -> host, {} values equal",
        first.byte_len(),
        len
    );

    // Explicit frees report errors instead of logging them on drop.
    first.free()?;
    second.free()?;
    host.free()?;
    Ok(())
}
