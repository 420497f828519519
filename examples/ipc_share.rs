//! Two processes share physical device memory through a pid whitelist.
//!
//! The program starts a copy of itself with `--child`. The child reports the
//! id the runtime knows it by (its bare tgid); the parent allocates
//! physical memory, maps it, writes a pattern, exports the allocation,
//! whitelists the child and sends it the handle over the child's stdin. The
//! child imports the allocation, maps it, checks the pattern and writes a
//! reply over it; the parent checks the reply through its own mapping. The
//! exit status is 0 only if both sides verified everything.
//!
//! ```text
//! cargo run --example ipc_share
//! ```

use ascend::Device;
use ascend::share::{ImportedAlloc, Pid, ShareKind, ShareableHandle};
use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

type Outcome<T = ()> = Result<T, Box<dyn Error>>;

/// The words the parent writes: `seed ^ index`.
const SEED: u32 = 0x5eed_0000;
/// The words the child writes back: `REPLY ^ index`.
const REPLY: u32 = 0x0ce1_1000;

fn pattern(seed: u32, words: usize) -> Vec<u32> {
    (0..words as u32).map(|index| seed ^ index).collect()
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

fn run() -> Outcome {
    if std::env::args().nth(1).as_deref() == Some("--child") {
        child()
    } else {
        parent()
    }
}

fn parent() -> Outcome {
    println!("{}", ascend::backend()?.describe());
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (Some(mut to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the child's pipes are missing".into());
    };
    let mut from_child = BufReader::new(from_child).lines();
    let mut next_line = move || -> Outcome<String> { Ok(from_child.next().ok_or("the child exited early")??) };

    // 1. The child says who it is.
    let line = next_line()?;
    let child_pid: Pid = line
        .strip_prefix("pid ")
        .ok_or(format!("unexpected {line:?}"))?
        .parse()?;
    println!("parent: child runs as pid {child_pid}");

    // 2. Allocate, map and fill one granule.
    let device = Device::new(0)?;
    let prop = PhysicalMemProp::device(&device);
    let size = prop.round_up(1)?;
    let words = size / 4;
    let physical = PhysicalAlloc::new(&prop, size)?;
    let range = VirtualRange::reserve(size)?;
    let mut region = range.map(0, &physical)?;
    region.as_mut_slice::<u32>()?.write_from_host(&pattern(SEED, words))?;

    // 3. Export, whitelist the child, send it the handle.
    let export = physical.export(ShareKind::V2Default)?;
    export.allow_pids(&[child_pid])?;
    writeln!(to_child, "handle {} {SEED}", export.token())?;
    to_child.flush()?;
    println!("parent: exported {} KiB as {}", size >> 10, export.token());

    // 4. The child's reply, checked through the parent's own mapping.
    let line = next_line()?;
    let reply: u32 = line.strip_prefix("reply ").ok_or(format!("child: {line}"))?.parse()?;
    let seen = region.as_slice::<u32>()?.to_vec()?;
    if reply != REPLY || seen != pattern(reply, words) {
        return Err("the parent's mapping does not hold the child's reply".into());
    }
    println!("parent: the child's reply {reply:#x} is in the parent's memory: verified");

    let status = child.wait()?;
    if !status.success() {
        return Err(format!("the child failed: {status}").into());
    }
    region.unmap()?;
    physical.free()?;
    range.release()?;
    println!("parent: done");
    Ok(())
}

fn child() -> Outcome {
    let result = child_steps();
    if let Err(error) = &result {
        // The parent reads stdout: tell it why before exiting non-zero.
        println!("error {error}");
    }
    result
}

fn child_steps() -> Outcome {
    println!("pid {}", Pid::current()?);
    std::io::stdout().flush()?;

    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let (Some("handle"), Some(token), Some(seed)) = (words.next(), words.next(), words.next()) else {
        return Err(format!("unexpected {line:?}").into());
    };
    let token: ShareableHandle = token.parse()?;
    let seed: u32 = seed.parse()?;

    let device = Device::new(0)?;
    let imported = ImportedAlloc::import(&token, &device)?;
    let range = VirtualRange::reserve(imported.size())?;
    let mut region = range.map(0, &imported)?;
    let words = imported.size() / 4;
    if region.as_slice::<u32>()?.to_vec()? != pattern(seed, words) {
        return Err("the imported memory does not hold the parent's pattern".into());
    }
    eprintln!("child: read the parent's {} KiB: verified", imported.size() >> 10);
    region.as_mut_slice::<u32>()?.write_from_host(&pattern(REPLY, words))?;
    println!("reply {REPLY}");
    std::io::stdout().flush()?;

    region.unmap()?;
    imported.free()?;
    range.release()?;
    Ok(())
}
