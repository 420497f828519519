//! Running a real-library test body in a child process.
//!
//! Each body runs in a fresh process (this test binary, re-executed with
//! [`CHILD_VAR`] naming the body), so that the library's process-wide state
//! (init singletons, its listener threads) never meets another test's, and
//! so that a hang is killed after [`TIMEOUT`] instead of hanging `cargo
//! test`. Without a MemFabric library the bodies are skipped with a printed
//! reason, unless `MEMFABRIC_REQUIRE_REAL=1` (CI), where that is a failure.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Names the body a child process runs.
pub const CHILD_VAR: &str = "MEMFABRIC_TEST_CHILD";
/// Set to 1 where the real library must be found (CI).
pub const REQUIRE_VAR: &str = "MEMFABRIC_REQUIRE_REAL";
/// How long a body may run before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(90);
/// Printed by a child that found no library.
const SKIP_MARK: &str = "MEMFABRIC-SKIP:";

/// Whether this process is a child running `body`.
pub fn is_child(body: &str) -> bool {
    std::env::var(CHILD_VAR).is_ok_and(|value| value == body)
}

/// Whether the real library must be present.
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|value| value == "1")
}

/// In a child: `Some(reason)` when the library is missing and not
/// required (the body should print it with [`skip`] and return).
pub fn missing_library() -> Option<String> {
    match memfabric_sys::backend() {
        Ok(info) if info.backend != memfabric_sys::Backend::Hardware && !required() => {
            Some(format!("the {} backend is active, not the real library", info.backend))
        }
        Ok(info) if info.backend != memfabric_sys::Backend::Hardware => {
            panic!(
                "{REQUIRE_VAR}=1 but the {} backend is active, not the real library",
                info.backend
            )
        }
        Ok(info) => {
            println!("{}", info.describe());
            None
        }
        Err(error @ memfabric_sys::LoadError::LibraryNotFound { .. }) if !required() => Some(error.to_string()),
        Err(error) => panic!("the MemFabric library is required here ({REQUIRE_VAR}=1 or found but unusable): {error}"),
    }
}

/// In a child: says that the body was skipped, and why.
pub fn skip(reason: &str) {
    println!("{SKIP_MARK} {reason}");
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("its address").port()
}

/// Whether nothing listens on `port` any more (a bind succeeds).
pub fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// What a child printed.
pub struct ChildOutput {
    pub stdout: String,
    pub stderr: String,
}

/// Runs the test `test` of this binary in a child with [`CHILD_VAR`] =
/// `body` and `env`, kills it after [`TIMEOUT`], and checks that it passed.
/// Returns `None` (after printing why) when the child skipped.
pub fn run_child(test: &str, body: &str, env: &[(&str, String)]) -> Option<ChildOutput> {
    let exe = std::env::current_exe().expect("this test binary");
    let mut command = Command::new(exe);
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, body)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("start the child test");
    // Read the pipes on threads, so that a chatty child never blocks on a
    // full pipe while this thread waits for it.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
        text
    });
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
        text
    });
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait().expect("poll the child") {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    let Some(status) = status else {
        panic!("child {body} hung and was killed after {TIMEOUT:?}:\n{stdout}\n{stderr}");
    };
    assert!(status.success(), "child {body} failed ({status}):\n{stdout}\n{stderr}");
    // What the child measured, shown with `--nocapture`.
    println!("--- child {body} stdout:\n{stdout}\n--- child {body} stderr:\n{stderr}");
    // The harness prints "test NAME ... " before the body's output, on the
    // same line.
    if let Some(at) = stdout.find(SKIP_MARK) {
        let reason = stdout[at + SKIP_MARK.len()..].lines().next().unwrap_or_default();
        println!("skipped (set {REQUIRE_VAR}=1 to require the library):{reason}");
        return None;
    }
    assert!(
        stdout.contains(&format!("child {body} done")),
        "child {body} did not finish:\n{stdout}\n{stderr}"
    );
    Some(ChildOutput { stdout, stderr })
}

/// Whether this host has an Ascend NPU driver (a `/dev/davinci*` node).
pub fn has_ascend_driver() -> bool {
    std::fs::read_dir("/dev")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .any(|entry| entry.file_name().to_string_lossy().starts_with("davinci"))
}

/// Every variable that steers the library search; cleared in an isolated
/// child so that the developer's environment cannot leak into a scenario.
const STEERING_VARS: [&str; 6] = [
    "MEMFABRIC_BACKEND",
    "MEMFABRIC_SMEM_LIB",
    "MEMFABRIC_HOME",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
];

/// [`run_child`] with every steering variable cleared but those in `env`.
pub fn run_isolated_child(test: &str, body: &str, env: &[(&str, String)]) -> Option<ChildOutput> {
    let mut all: Vec<(&str, String)> = STEERING_VARS
        .iter()
        .filter(|name| !env.iter().any(|(key, _)| key == *name))
        .map(|name| (*name, String::new()))
        .collect();
    all.extend(env.iter().cloned());
    run_child(test, body, &all)
}
