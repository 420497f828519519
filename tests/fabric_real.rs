//! `ascend::fabric` against the real MemFabric library (memfabric-hybrid
//! 1.3.0), each body in a child process killed after a timeout. Without the
//! library the bodies are skipped with a printed reason; with
//! `MEMFABRIC_REQUIRE_REAL=1` (CI) a missing library fails them. Point the
//! loader at the library with `MEMFABRIC_HOME` (`<unzipped
//! wheel>/memfabric_hybrid`) or `MEMFABRIC_SMEM_LIB`.

use ascend::fabric::{self, FabricError, sys};
use std::ffi::CString;
use std::time::Duration;

mod fabric_common;

const REQUIRE_VAR: &str = "MEMFABRIC_REQUIRE_REAL";
const SKIP_MARK: &str = "FABRIC-SKIP:";

fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|value| value == "1")
}

/// `body` in a child on the real library (`fabric_common::in_child_on`:
/// a timeout, the port checked free afterwards), unless the library is
/// missing and not required: then the child says so and the test is
/// skipped. The child's output when the body ran (`None` in the child).
fn on_real_library(test: &str, body: impl FnOnce(u16)) -> Option<String> {
    let output = fabric_common::in_child_on(test, Some("hardware"), |port| match fabric::library() {
        Ok(info) => {
            println!("{}", info.describe());
            body(port);
        }
        Err(error @ FabricError::Load(sys::LoadError::LibraryNotFound { .. })) if !required() => {
            println!("{SKIP_MARK} {error}");
        }
        Err(error) => panic!("the MemFabric library is required here: {error}"),
    });
    if let Some(at) = output.find(SKIP_MARK) {
        let reason = output[at + SKIP_MARK.len()..].lines().next().unwrap_or_default();
        println!("skipped (set {REQUIRE_VAR}=1 to require the library):{reason}");
        return None;
    }
    (!output.is_empty()).then_some(output)
}

#[test]
fn the_library_loads_with_abi_1_3_and_initialises() {
    let stdout = on_real_library("the_library_loads_with_abi_1_3_and_initialises", |_| {
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
    let _ = on_real_library("bm_create2_before_init_is_a_typed_not_initialized", |_| {
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
    let _ = on_real_library("bm_init_without_the_driver_says_the_driver_is_needed", |port| {
        fabric::init().expect("smem_init(0)");
        // SAFETY: all-zero is a valid value of this plain C struct; the
        // library then writes its defaults.
        let mut config: sys::smem_bm_config_t = unsafe { std::mem::zeroed() };
        // SAFETY: `config` is writable for the call.
        fabric::check("smem_bm_config_init", unsafe { sys::smem_bm_config_init(&mut config) }).expect("the defaults");
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
    });
}

#[test]
fn trans_init_without_the_driver_says_the_driver_is_needed() {
    let _ = on_real_library("trans_init_without_the_driver_says_the_driver_is_needed", |_| {
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
    });
}

/// The safe layer's `BigMemory::init` on a host without the driver: the
/// typed error says the driver is needed, nothing is left alive (a second
/// attempt reaches the library again instead of being refused as a second
/// world), and no listener stays on the port.
#[test]
fn big_memory_without_the_driver_is_a_typed_driver_missing_and_can_be_retried() {
    let _ = on_real_library(
        "big_memory_without_the_driver_is_a_typed_driver_missing_and_can_be_retried",
        |port| {
            let device = ascend::Device::new(0).expect("device 0");
            let store = fabric::StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a URL");
            let config = fabric::BmConfig::default().with_init_timeout(Duration::from_secs(10));
            for attempt in 0..2 {
                match fabric::BigMemory::init(&store, 1, &device, &config) {
                    Ok(bm) => {
                        assert!(fabric::ascend_driver_installed(), "a BM world without a driver");
                        println!("this host has the Ascend driver: rank {}", bm.rank());
                        return;
                    }
                    Err(error @ FabricError::DriverMissing { .. }) => {
                        println!("attempt {attempt}: {error}");
                        assert!(!fabric::ascend_driver_installed());
                        assert!(error.to_string().contains("the Ascend driver is needed"), "{error}");
                    }
                    Err(other) => panic!("attempt {attempt}: {other}"),
                }
            }
        },
    );
}
