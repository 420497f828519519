//! Running `ascend::fabric` test bodies in child processes: a BM world is
//! one per process, and a world that hangs must not hang the test run.
//! The children use the software fabric unless `MEMFABRIC_BACKEND` says
//! otherwise.

#![allow(dead_code)]

use ascend::fabric::sys;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_VAR: &str = "ASCEND_FABRIC_TEST_CHILD";
const PORT_VAR: &str = "ASCEND_FABRIC_TEST_PORT";
const TIMEOUT: Duration = Duration::from_secs(90);

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("an ephemeral port");
    listener.local_addr().expect("its address").port()
}

pub fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// This child's name (what `in_child`/`in_children` print when it is done).
pub fn child_name() -> String {
    std::env::var(CHILD_VAR).expect("in a child")
}

/// Whether this process is the child `name`; its port if so.
fn child_port(name: &str) -> Option<u16> {
    if std::env::var(CHILD_VAR).is_ok_and(|value| value == name) {
        Some(
            std::env::var(PORT_VAR)
                .ok()
                .and_then(|text| text.parse().ok())
                .expect("the port"),
        )
    } else {
        None
    }
}

/// Starts the child `name` of `test`, on `backend` (`None`: the software
/// fabric unless `MEMFABRIC_BACKEND` says otherwise).
fn spawn(test: &str, name: &str, port: u16, backend: Option<&str>) -> Child {
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, name)
        .env(PORT_VAR, port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match backend {
        Some(backend) => {
            command.env(sys::ENV_BACKEND, backend);
        }
        None if std::env::var_os(sys::ENV_BACKEND).is_none() => {
            command.env(sys::ENV_BACKEND, "software");
        }
        None => {}
    }
    command.spawn().expect("start the child")
}

/// Waits for `child` (killed after the timeout); its status and output.
fn finish(name: &str, mut child: Child) -> (Option<std::process::ExitStatus>, String) {
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let read_out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
        text
    });
    let read_err = std::thread::spawn(move || {
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
    let stdout = read_out.join().unwrap_or_default();
    let stderr = read_err.join().unwrap_or_default();
    (status, format!("--- child {name}:\n{stdout}\n{stderr}"))
}

fn check(name: &str, status: Option<std::process::ExitStatus>, output: &str) {
    println!("{output}");
    let status = status.unwrap_or_else(|| panic!("child {name} hung and was killed after {TIMEOUT:?}"));
    assert!(status.success(), "child {name} failed ({status})");
    assert!(
        output.contains(&format!("child {name} done")),
        "child {name} did not finish"
    );
}

/// In the child: runs `body` with its port. In the parent (the test):
/// runs the child, checks that it passed and that nothing listens on the
/// port afterwards.
pub fn in_child(test: &str, body: impl FnOnce(u16)) {
    in_child_on(test, None, body);
}

/// [`in_child`] with the child's backend given (`Some("hardware")`: the
/// real library, never a fallback); the child's output in the parent,
/// empty in the child.
pub fn in_child_on(test: &str, backend: Option<&str>, body: impl FnOnce(u16)) -> String {
    if let Some(port) = child_port(test) {
        body(port);
        println!("child {test} done");
        return String::new();
    }
    let port = free_port();
    let (status, output) = finish(test, spawn(test, test, port, backend));
    check(test, status, &output);
    assert!(port_is_free(port), "a listener was left behind on port {port}");
    output
}

/// `in_child` for `count` processes of one world on one port.
pub fn in_children(test: &str, count: usize, body: impl FnOnce(u16)) {
    let names: Vec<String> = (0..count).map(|index| format!("{test}#{index}")).collect();
    if let Some((name, port)) = names.iter().find_map(|name| child_port(name).map(|port| (name, port))) {
        body(port);
        println!("child {name} done");
        return;
    }
    let port = free_port();
    let children: Vec<Child> = names.iter().map(|name| spawn(test, name, port, None)).collect();
    let results: Vec<_> = names
        .iter()
        .zip(children)
        .map(|(name, child)| finish(name, child))
        .collect();
    for (name, (status, output)) in names.iter().zip(&results) {
        check(name, *status, output);
    }
    assert!(port_is_free(port), "a listener was left behind on port {port}");
}

/// `in_child` for a body that must abort the process: the child's output
/// (stdout and stderr).
pub fn in_child_aborting(test: &str, body: impl FnOnce(u16)) -> String {
    if let Some(port) = child_port(test) {
        body(port);
        println!("child {test} done");
        return String::new();
    }
    let port = free_port();
    let (status, output) = finish(test, spawn(test, test, port, None));
    println!("{output}");
    let status = status.unwrap_or_else(|| panic!("child {test} hung and was killed after {TIMEOUT:?}"));
    assert!(!status.success(), "child {test} did not abort");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(6), "child {test} ended by {status}, not SIGABRT");
    }
    assert!(!output.contains(&format!("child {test} done")), "child {test} went on");
    output
}
