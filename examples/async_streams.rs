//! Two streams, an event between them, scoped asynchronous copies and a 2-D
//! copy of a pitched image, all verified.
//!
//! Runs on the software device when no `libascendcl.so` is present:
//!
//! ```text
//! cargo run --example async_streams
//! ```

use ascend::stream::{Copy2d, Event, Stream};
use ascend::{Device, DeviceBuf, PinnedHostBuf};

/// Fails the example (exit code 1) with `what` unless `ok`.
fn verify(ok: bool, what: &str) -> Result<(), Box<dyn std::error::Error>> {
    if ok {
        println!("  ok: {what}");
        Ok(())
    } else {
        Err(format!("verification failed: {what}").into())
    }
}

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
    let (upload, download) = (Stream::new(&device)?, Stream::new(&device)?);
    let (start, uploaded) = (Event::new(&device)?, Event::new(&device)?);

    // A 512 x 600 image of u32 whose rows are padded to a pitch of 640.
    let (width, height, pitch) = (600usize, 512usize, 640usize);
    let mut image = PinnedHostBuf::<u32>::zeroed(&device, pitch * height)?;
    for (index, pixel) in image.iter_mut().enumerate() {
        let (row, col) = (index / pitch, index % pitch);
        *pixel = if col < width {
            (row * 10_000 + col) as u32
        } else {
            u32::MAX
        };
    }
    let mut packed = DeviceBuf::<u32>::zeroed(&device, width * height)?;
    let mut doubled = DeviceBuf::<u32>::zeroed(&device, width * height)?;

    // Stream 1: drop the padding on the way to the device (a 2-D copy), and
    // keep a second copy; the event marks the end of the upload.
    upload.scope(|s| {
        s.record(&start)?;
        let packed = s.hold_device(&mut packed);
        s.copy_to_device_2d(&image, packed, Copy2d::new(width, height).with_src_pitch(pitch))?;
        s.copy_on_device(packed, &mut doubled)?;
        s.record(&uploaded)
    })?;
    println!(
        "upload: {} rows of {width} pixels in {:.3} ms",
        height,
        uploaded.elapsed_ms_since(&start)?
    );

    // Stream 2 waits for the upload's event (already reached here, since the
    // upload's scope synchronised; the wait orders the streams whenever the
    // record is still pending), then brings both copies back: the packed
    // one as is, the other one re-padded to a pitch of 608.
    let out_pitch = 608;
    let mut back = PinnedHostBuf::<u32>::zeroed(&device, width * height)?;
    let mut repadded = vec![0u32; out_pitch * (height - 1) + width];
    download.scope(|s| {
        s.wait_event(&uploaded)?;
        s.copy_to_host(&packed, &mut back)?;
        s.copy_to_host_2d(
            &doubled,
            &mut repadded,
            Copy2d::new(width, height).with_dst_pitch(out_pitch),
        )
    })?;
    // The scopes have synchronised: the host may read everything now.

    let expected = |row: usize, col: usize| (row * 10_000 + col) as u32;
    verify(
        back.iter()
            .enumerate()
            .all(|(i, &pixel)| pixel == expected(i / width, i % width)),
        "the 2-D upload dropped the padding and kept every pixel",
    )?;
    verify(
        repadded.iter().enumerate().all(|(i, &pixel)| {
            let (row, col) = (i / out_pitch, i % out_pitch);
            if col < width {
                pixel == expected(row, col)
            } else {
                pixel == 0
            }
        }),
        "the 2-D download re-padded the rows and left the padding alone",
    )?;
    verify(uploaded.query()?, "the upload event is complete")?;

    upload.destroy()?;
    download.destroy()?;
    println!("async_streams: all checks passed");
    Ok(())
}
