//! Tests against the real `libmf_smem.so` (memfabric-hybrid 1.3.0), each in
//! a child process with a timeout. Without the library they are skipped with
//! a printed reason; with `MEMFABRIC_REQUIRE_REAL=1` (CI) a missing library
//! fails them. Point the loader at the library with `MEMFABRIC_HOME`
//! (`<unzipped wheel>/memfabric_hybrid`) or `MEMFABRIC_SMEM_LIB`.

mod common;

use memfabric_sys::*;
use std::ffi::{CStr, CString};
use std::mem::size_of;

/// The library's last error message on this thread, as text.
fn last_message() -> Option<String> {
    // SAFETY: no arguments; the returned string is the library's and is
    // copied at once, before any other MemFabric call.
    let text = unsafe { smem_get_last_err_msg() };
    // SAFETY: non-NULL results are NUL-terminated strings of the library.
    (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

/// Runs `body` in a child, or, in the child, runs it unless the library is
/// missing.
fn child_test(test: &str, name: &str, body: impl FnOnce()) -> Option<common::ChildOutput> {
    if common::is_child(name) {
        match common::missing_library() {
            Some(reason) => common::skip(&reason),
            None => {
                body();
                println!("child {name} done");
            }
        }
        return None;
    }
    // The real library, never the software fabric `auto` falls back to.
    common::run_child(test, name, &[(ENV_BACKEND, "hardware".into())])
}

#[test]
fn the_abi_version_is_1_3() {
    child_test("the_abi_version_is_1_3", "abi", || {
        let info = backend().expect("the library");
        assert_eq!(info.abi_version, 0x0001_0003);
        assert!(
            info.companions.iter().any(|path| path.ends_with("libmf_hybm_core.so")),
            "{:?}",
            info.companions
        );
        // SAFETY: no arguments.
        assert_eq!(unsafe { smem_get_abi_version() }, SMEM_ABI_VERSION_SUPPORTED);
        println!("companions: {:?}", info.companions);
    });
}

#[test]
fn smem_init_returns_ok() {
    child_test("smem_init_returns_ok", "init", || {
        // SAFETY: flags 0.
        let code = unsafe { smem_init(0) };
        println!("smem_init(0) = {code}");
        assert_eq!(code, SMEM_OK);
        // SAFETY: after a successful init.
        unsafe { smem_uninit() };
    });
}

#[test]
fn a_config_store_starts_and_is_torn_down() {
    let port = common::free_port();
    if common::is_child("store") {
        child_test("", "store", || {
            // SAFETY: flags 0.
            assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
            let port: u16 = std::env::var("MEMFABRIC_TEST_PORT")
                .ok()
                .and_then(|text| text.parse().ok())
                .expect("the port");
            let url = CString::new(format!("tcp://127.0.0.1:{port}")).expect("no NUL");
            // SAFETY: `url` is a NUL-terminated string alive for the call.
            let code = unsafe { smem_create_config_store(url.as_ptr(), 0) };
            println!("smem_create_config_store = {code}");
            assert_eq!(code, SMEM_OK, "{:?}", last_message());
            assert!(!common::port_is_free(port), "the store listens on {port}");
            // SAFETY: as above.
            let again = unsafe { smem_create_config_store(url.as_ptr(), 0) };
            println!("smem_create_config_store again = {again}");
            // SAFETY: as above; the store was created by this process.
            unsafe { smem_destroy_config_store(url.as_ptr()) };
            assert!(
                common::port_is_free(port),
                "the store still listens on {port} after destroy"
            );
            // A port somebody else listens on: -1 (measured), and the
            // listener is left alone.
            let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
            let busy_port = busy.local_addr().expect("its address").port();
            let busy_url = CString::new(format!("tcp://127.0.0.1:{busy_port}")).expect("no NUL");
            // SAFETY: `busy_url` is a NUL-terminated string alive for the call.
            let code = unsafe { smem_create_config_store(busy_url.as_ptr(), 0) };
            println!("smem_create_config_store on a busy port = {code}");
            assert_ne!(code, SMEM_OK);
            // SAFETY: a malformed URL, NUL-terminated.
            let code = unsafe { smem_create_config_store(c"http://nowhere".as_ptr(), 0) };
            println!("smem_create_config_store on a malformed URL = {code}");
            assert_eq!(code, SMEM_INVALID_PARAM);
            drop(busy);
            // SAFETY: after a successful init.
            unsafe { smem_uninit() };
        });
        return;
    }
    let ran = common::run_child(
        "a_config_store_starts_and_is_torn_down",
        "store",
        &[
            ("MEMFABRIC_TEST_PORT", port.to_string()),
            (ENV_BACKEND, "hardware".into()),
        ],
    );
    if ran.is_some() {
        assert!(common::port_is_free(port), "a listener was left behind on {port}");
    }
}

#[test]
fn bm_create2_before_init_is_not_init() {
    child_test("bm_create2_before_init_is_not_init", "create2", || {
        // SAFETY: flags 0.
        assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
        // SAFETY: all-zero is a valid value of this plain C struct.
        let mut option: smem_bm_create_option_t = unsafe { core::mem::zeroed() };
        option.localDRAMSize = 2 << 20;
        option.maxDramSize = 2 << 20;
        option.dataOpType = SMEMB_DATA_OP_HOST_SHM;
        // SAFETY: `option` is a valid create option alive for the call.
        let handle = unsafe { smem_bm_create2(0, &option) };
        assert!(handle.is_null());
        // SAFETY: no arguments.
        let code = unsafe { smem_get_last_err_code() };
        let message = last_message();
        println!("smem_bm_create2 before init: NULL, last code {code}, last message {message:?}");
        assert_eq!(code, SMEM_NOT_INIT);
        assert_eq!(message.as_deref(), Some("smem_bm_create2 failed"));
        // The last error is per thread (measured): another thread has none.
        let elsewhere = std::thread::spawn(|| {
            // SAFETY: no arguments.
            (unsafe { smem_get_last_err_code() }, last_message())
        })
        .join()
        .expect("the thread");
        assert_eq!(elsewhere, (SMEM_OK, Some(String::new())));
        // A successful call resets neither the code nor the message, and
        // clearing the message leaves the code.
        // SAFETY: flags 0.
        assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
        // SAFETY: no arguments.
        assert_eq!(unsafe { smem_get_last_err_code() }, SMEM_NOT_INIT);
        assert_eq!(last_message().as_deref(), Some("smem_bm_create2 failed"));
        // SAFETY: no arguments; the result is not used.
        let _ = unsafe { smem_get_and_clear_last_err_msg() };
        assert_eq!(last_message().as_deref(), Some(""));
        // SAFETY: no arguments.
        assert_eq!(unsafe { smem_get_last_err_code() }, SMEM_NOT_INIT);
        // SAFETY: after a successful init.
        unsafe { smem_uninit() };
    });
}

#[test]
fn bm_init_without_a_driver_fails() {
    let port = common::free_port();
    if common::is_child("bm_init") {
        child_test("", "bm_init", || {
            let port: u16 = std::env::var("MEMFABRIC_TEST_PORT")
                .ok()
                .and_then(|text| text.parse().ok())
                .expect("the port");
            // SAFETY: flags 0.
            assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
            // SAFETY: all-zero is a valid value of this plain C struct; the
            // library then writes its defaults.
            let mut config: smem_bm_config_t = unsafe { core::mem::zeroed() };
            // SAFETY: `config` is writable for the call.
            assert_eq!(unsafe { smem_bm_config_init(&mut config) }, SMEM_OK);
            println!(
                "defaults: timeouts {} {} {}, store server {}, auto ranking {}, rank {:#x}",
                config.initTimeout,
                config.createTimeout,
                config.controlOperationTimeout,
                config.startConfigStoreServer,
                config.autoRanking,
                config.rankId
            );
            config.initTimeout = 10;
            let url = CString::new(format!("tcp://127.0.0.1:{port}")).expect("no NUL");
            let started = std::time::Instant::now();
            // SAFETY: `url` and `config` are valid for the call.
            let code = unsafe { smem_bm_init(url.as_ptr(), 1, 0, &config) };
            // SAFETY: no arguments.
            let last = unsafe { smem_get_last_err_code() };
            let message = last_message();
            println!(
                "smem_bm_init = {code} after {:?}; last code {last}, last message {message:?}",
                started.elapsed()
            );
            if !common::has_ascend_driver() {
                assert_ne!(code, SMEM_OK);
            }
            if code == SMEM_OK {
                // SAFETY: after a successful init.
                unsafe { smem_bm_uninit(0) };
            }
            // SAFETY: after a successful init.
            unsafe { smem_uninit() };
        });
        return;
    }
    let ran = common::run_child(
        "bm_init_without_a_driver_fails",
        "bm_init",
        &[
            ("MEMFABRIC_TEST_PORT", port.to_string()),
            (ENV_BACKEND, "hardware".into()),
        ],
    );
    if ran.is_some() {
        assert!(common::port_is_free(port), "a listener was left behind on {port}");
    }
}

#[test]
fn trans_init_without_a_driver_fails() {
    child_test("trans_init_without_a_driver_fails", "trans", || {
        // SAFETY: flags 0.
        assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
        let mut config = core::mem::MaybeUninit::<smem_trans_config_t>::uninit();
        let bytes = config.as_mut_ptr().cast::<u8>();
        // SAFETY: `bytes` covers the struct; every byte 0xEE (to see what
        // config_init leaves unwritten) except the one bool, 0, so that the
        // struct is a valid value whatever the call writes.
        unsafe {
            bytes.write_bytes(0xEE, size_of::<smem_trans_config_t>());
            bytes
                .add(core::mem::offset_of!(smem_trans_config_t, hcomTlsConfig))
                .write(0);
        }
        // SAFETY: `config` is writable for the call.
        assert_eq!(unsafe { smem_trans_config_init(config.as_mut_ptr()) }, SMEM_OK);
        // SAFETY: every byte is initialised, the bool is 0 or what the
        // library wrote (a C bool), the rest integers and char arrays.
        let mut config = unsafe { config.assume_init() };
        println!(
            "trans defaults: role {}, timeout {}, device {:#x}, dataOpType {:#x}",
            config.role, config.initTimeout, config.deviceId, config.dataOpType
        );
        assert_eq!(
            (config.role, config.initTimeout, config.deviceId),
            (SMEM_TRANS_SENDER, 120, u32::MAX)
        );
        // Left unwritten (the reference's warning): the caller must set it.
        assert_eq!(config.dataOpType, 0xEEEE_EEEE);
        config.dataOpType = SMEMB_DATA_OP_HOST_TCP;
        config.deviceId = 0;
        // SAFETY: `config` is valid for the call.
        let code = unsafe { smem_trans_init(&config) };
        // SAFETY: no arguments.
        let last = unsafe { smem_get_last_err_code() };
        println!(
            "smem_trans_init = {code}; last code {last}, last message {:?}",
            last_message()
        );
        if common::has_ascend_driver() {
            return;
        }
        assert_eq!(code, SMEM_ERROR);
        // SAFETY: the strings are NUL-terminated and `config` valid.
        let handle = unsafe { smem_trans_create(c"tcp://127.0.0.1:1".as_ptr(), c"rank-a".as_ptr(), &config) };
        assert!(handle.is_null());
        // SAFETY: no arguments.
        let last = unsafe { smem_get_last_err_code() };
        println!(
            "smem_trans_create after a failed init: NULL, last code {last}, last message {:?}",
            last_message()
        );
        // Not SMEM_NOT_INIT: TRANS says -1 "smem trans not initialized yet".
        assert_eq!(last, SMEM_ERROR);
        // SAFETY: after a successful smem_init.
        unsafe { smem_uninit() };
    });
}

#[test]
fn every_function_is_listed_once() {
    assert_eq!(FUNCTION_NAMES.len(), 56);
    let mut names = FUNCTION_NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), FUNCTION_NAMES.len());
    assert_eq!(
        FUNCTION_NAMES
            .iter()
            .filter(|name| name.starts_with("smem_bm_"))
            .count(),
        26
    );
    assert_eq!(
        FUNCTION_NAMES
            .iter()
            .filter(|name| name.starts_with("smem_trans_"))
            .count(),
        18
    );
}

#[test]
fn the_library_is_found_in_a_python_package_folder() {
    const NAME: &str = "python";
    if common::is_child(NAME) {
        child_test("", NAME, || {
            let info = backend().expect("the library");
            let opened = info.attempts.last().expect("the attempt that opened");
            assert_eq!(opened.source, "memfabric_hybrid Python package", "{}", info.describe());
            assert!(opened.error.is_none());
        });
        return;
    }
    // The unzipped wheel's folder holding `memfabric_hybrid/` is a
    // site-packages folder as far as the search goes.
    let Some(site) = std::env::var_os(ENV_HOME)
        .map(std::path::PathBuf::from)
        .and_then(|home| home.parent().map(|parent| parent.to_path_buf()))
    else {
        println!("skipped: set MEMFABRIC_HOME=<unzipped wheel>/memfabric_hybrid to run it");
        return;
    };
    common::run_isolated_child(
        "the_library_is_found_in_a_python_package_folder",
        NAME,
        &[("PYTHONPATH", site.display().to_string())],
    );
}
