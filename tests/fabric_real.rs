//! `ascend::fabric` against the real MemFabric library (memfabric-hybrid
//! 1.3.0), each body in a child process killed after a timeout. Without the
//! library the bodies are skipped with a printed reason; with
//! `MEMFABRIC_REQUIRE_REAL=1` (CI) a missing library fails them. Point the
//! loader at the library with `MEMFABRIC_HOME` (`<unzipped
//! wheel>/memfabric_hybrid`) or `MEMFABRIC_SMEM_LIB`.

use ascend::fabric::{self, FabricError, sys};
use std::ffi::CString;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_VAR: &str = "ASCEND_FABRIC_TEST_CHILD";
const REQUIRE_VAR: &str = "MEMFABRIC_REQUIRE_REAL";
const PORT_VAR: &str = "ASCEND_FABRIC_TEST_PORT";
const TIMEOUT: Duration = Duration::from_secs(90);
const SKIP_MARK: &str = "FABRIC-SKIP:";

fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|value| value == "1")
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("an ephemeral port");
    listener.local_addr().expect("its address").port()
}

fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// In the child named `name`: runs `body` (given a free port) unless the
/// library is missing and not required. In the parent: runs the child with
/// a timeout, checks that it passed and that nothing listens on the port
/// afterwards; returns the child's stdout when the body ran.
fn in_child(test: &str, name: &str, body: impl FnOnce(u16)) -> Option<String> {
    if std::env::var(CHILD_VAR).is_ok_and(|value| value == name) {
        let port = std::env::var(PORT_VAR)
            .ok()
            .and_then(|text| text.parse().ok())
            .expect("the port");
        match fabric::library() {
            Ok(info) => {
                println!("{}", info.describe());
                body(port);
                println!("child {name} done");
            }
            Err(error @ FabricError::Load(sys::LoadError::LibraryNotFound { .. })) if !required() => {
                println!("{SKIP_MARK} {error}");
            }
            Err(error) => panic!("the MemFabric library is required here: {error}"),
        }
        return None;
    }
    let port = free_port();
    let mut child = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, name)
        .env(PORT_VAR, port.to_string())
        // The real library, never the software fabric `auto` falls back to.
        .env("MEMFABRIC_BACKEND", "hardware")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
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
    println!("--- child {name}:\n{stdout}\n{stderr}");
    let status = status.unwrap_or_else(|| panic!("child {name} hung and was killed after {TIMEOUT:?}"));
    assert!(status.success(), "child {name} failed ({status})");
    if let Some(at) = stdout.find(SKIP_MARK) {
        let reason = stdout[at + SKIP_MARK.len()..].lines().next().unwrap_or_default();
        println!("skipped (set {REQUIRE_VAR}=1 to require the library):{reason}");
        return None;
    }
    assert!(
        stdout.contains(&format!("child {name} done")),
        "child {name} did not finish"
    );
    assert!(port_is_free(port), "a listener was left behind on port {port}");
    Some(stdout)
}

#[test]
fn the_library_loads_with_abi_1_3_and_initialises() {
    let stdout = in_child("the_library_loads_with_abi_1_3_and_initialises", "load", |_| {
        let info = fabric::library().expect("the library");
        assert_eq!(info.abi_version, 0x0001_0003);
        fabric::init().expect("smem_init(0)");
        fabric::init().expect("smem_init(0) again");
    });
    // fabric::init sends the library's log to the `log` crate: none of its
    // lines (which it writes to stdout by default) reach stdout.
    if let Some(stdout) = stdout {
        assert!(!stdout.contains("smem init successfully"), "{stdout}");
    }
}

#[test]
fn bm_create2_before_init_is_a_typed_not_initialized() {
    let _ = in_child("bm_create2_before_init_is_a_typed_not_initialized", "create2", |_| {
        fabric::init().expect("smem_init(0)");
        // SAFETY: all-zero is a valid value of this plain C struct.
        let mut option: sys::smem_bm_create_option_t = unsafe { std::mem::zeroed() };
        option.localDRAMSize = 2 << 20;
        option.maxDramSize = 2 << 20;
        option.dataOpType = sys::SMEMB_DATA_OP_HOST_SHM;
        fabric::clear_last_error();
        // SAFETY: `option` is valid for the call.
        let handle = unsafe { sys::smem_bm_create2(0, &option) };
        assert!(handle.is_null());
        let error = FabricError::last("smem_bm_create2");
        println!("{error}");
        let FabricError::NotInitialized { api, message, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(*api, "smem_bm_create2");
        assert_eq!(message.as_deref(), Some("smem_bm_create2 failed"));
        assert_eq!(error.code(), Some(-2008));
        assert!(error.to_string().contains("SMEM_NOT_INIT (-2008)"), "{error}");
    });
}

#[test]
fn bm_init_without_the_driver_says_the_driver_is_needed() {
    let _ = in_child(
        "bm_init_without_the_driver_says_the_driver_is_needed",
        "bm_init",
        |port| {
            fabric::init().expect("smem_init(0)");
            // SAFETY: all-zero is a valid value of this plain C struct; the
            // library then writes its defaults.
            let mut config: sys::smem_bm_config_t = unsafe { std::mem::zeroed() };
            // SAFETY: `config` is writable for the call.
            fabric::check("smem_bm_config_init", unsafe { sys::smem_bm_config_init(&mut config) })
                .expect("the defaults");
            config.initTimeout = 10;
            let url = CString::new(format!("tcp://127.0.0.1:{port}")).expect("no NUL");
            // SAFETY: `url` and `config` are valid for the call.
            let code = unsafe { sys::smem_bm_init(url.as_ptr(), 1, 0, &config) };
            if fabric::ascend_driver_installed() {
                println!("this host has the Ascend driver: smem_bm_init = {code}");
                if code == sys::SMEM_OK {
                    // SAFETY: after a successful smem_bm_init.
                    unsafe { sys::smem_bm_uninit(0) };
                }
                return;
            }
            let error = fabric::check("smem_bm_init", code).expect_err("no driver, no data plane");
            println!("{error}");
            let FabricError::DriverMissing {
                api,
                code,
                message,
                logged,
                ..
            } = &error
            else {
                panic!("{error:?}");
            };
            assert_eq!((*api, *code), ("smem_bm_init", -1));
            // What the library logged about it (fabric::init forwards its log).
            let logged = logged.as_deref().expect("the driver line of the library's log");
            assert!(logged.contains("ascend driver"), "{logged}");
            assert!(error.to_string().contains(logged), "{error}");
            let message = message.as_deref().expect("the library's last message");
            assert!(message.starts_with("init hybm failed"), "{message}");
            let text = error.to_string();
            assert!(text.contains("the Ascend driver is needed"), "{text}");
            assert!(text.contains(message), "{text}");
        },
    );
}

#[test]
fn trans_init_without_the_driver_says_the_driver_is_needed() {
    let _ = in_child(
        "trans_init_without_the_driver_says_the_driver_is_needed",
        "trans_init",
        |_| {
            fabric::init().expect("smem_init(0)");
            // SAFETY: all-zero is a valid value of this plain C struct; the
            // library then writes its defaults (all but `dataOpType`).
            let mut config: sys::smem_trans_config_t = unsafe { std::mem::zeroed() };
            // SAFETY: `config` is writable for the call.
            fabric::check("smem_trans_config_init", unsafe {
                sys::smem_trans_config_init(&mut config)
            })
            .expect("the defaults");
            config.dataOpType = sys::SMEMB_DATA_OP_HOST_TCP;
            config.deviceId = 0;
            fabric::clear_last_error();
            // SAFETY: `config` is valid for the call.
            let code = unsafe { sys::smem_trans_init(&config) };
            if fabric::ascend_driver_installed() {
                println!("this host has the Ascend driver: smem_trans_init = {code}");
                return;
            }
            let error = fabric::check("smem_trans_init", code).expect_err("no driver, no data plane");
            println!("{error}");
            // smem_trans_init sets no last message (measured); the log has
            // the reason.
            let FabricError::DriverMissing { message, logged, .. } = &error else {
                panic!("{error:?}");
            };
            assert_eq!(message, &None);
            assert!(
                logged.as_deref().is_some_and(|line| line.contains("ascend driver")),
                "{error}"
            );
        },
    );
}
