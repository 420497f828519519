//! The loader without the real library: a stand-in `libmf_smem.so` (and its
//! `libmf_hybm_core.so`), built at test time with the system C compiler
//! from `tests/fake_mf/`, shows the load order, a missing symbol and an ABI
//! mismatch; a missing library, the software backend and `auto`'s fallback
//! to it need no library at all. The backend is chosen once per process, so every
//! scenario runs in a child process.

mod common;

use memfabric_sys::*;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The library's (or this crate's) last error message, copied at once.
fn last_message() -> Option<String> {
    // SAFETY: no arguments; the string is copied before any other call.
    let text = unsafe { smem_get_last_err_msg() };
    // SAFETY: non-NULL results are NUL-terminated strings.
    (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

/// Builds the stand-in libraries for ABI `abi` into the `lib/` folder of an
/// install root of their own, and returns the root. Panics without a C compiler: these tests must not pass
/// silently where they cannot run.
fn fake_dir(abi: u32) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fake_mf_{abi:08x}_{}", std::process::id()));
    let dir = home.join("lib");
    std::fs::create_dir_all(&dir).expect("a folder for the stand-in libraries");
    let compiler = std::env::var("CC")
        .ok()
        .filter(|cc| !cc.trim().is_empty())
        .unwrap_or_else(|| "cc".into());
    let run = |args: &[&str]| {
        let output = Command::new(&compiler)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("the C compiler `{compiler}` did not run: {error}"));
        assert!(
            output.status.success(),
            "{compiler} {args:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let core = dir.join("libmf_hybm_core.so");
    let smem = dir.join("libmf_smem.so");
    let core_source = manifest.join("tests/fake_mf/fake_core.c");
    let smem_source = manifest.join("tests/fake_mf/fake_smem.c");
    run(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,libmf_hybm_core.so",
        "-o",
        &core.to_string_lossy(),
        &core_source.to_string_lossy(),
    ]);
    let define = format!("-DFAKE_ABI={abi:#x}u");
    let search = format!("-L{}", dir.display());
    run(&[
        "-shared",
        "-fPIC",
        &define,
        "-Wl,-soname,libmf_smem.so",
        "-o",
        &smem.to_string_lossy(),
        &smem_source.to_string_lossy(),
        &search,
        "-lmf_hybm_core",
    ]);
    home
}

/// Runs `body` in a child with `env` (and no other MemFabric variable), or,
/// in the child, runs it.
fn scenario(test: &str, name: &str, env: &[(&str, String)], body: impl FnOnce()) {
    if common::is_child(name) {
        body();
        println!("child {name} done");
        return;
    }
    common::run_isolated_child(test, name, env);
}

#[test]
fn a_missing_library_lists_the_places_searched_and_every_call_fails() {
    let missing = "/nonexistent/memfabric/lib/libmf_smem.so".to_string();
    scenario(
        "a_missing_library_lists_the_places_searched_and_every_call_fails",
        "missing",
        &[(ENV_LIBRARY, missing), (ENV_BACKEND, "hardware".into())],
        || {
            let error = backend().expect_err("no library");
            let LoadError::LibraryNotFound { attempts } = &error else {
                panic!("{error:?}");
            };
            assert_eq!(attempts.len(), 1);
            assert_eq!(attempts[0].source, "MEMFABRIC_SMEM_LIB");
            let text = error.to_string();
            assert!(
                text.contains("tried /nonexistent/memfabric/lib/libmf_smem.so (MEMFABRIC_SMEM_LIB): no such file"),
                "{text}"
            );
            // SAFETY: flags 0; no library, so nothing runs.
            assert_eq!(unsafe { smem_init(0) }, MEMFABRIC_SYS_NO_BACKEND);
            // SAFETY: no arguments.
            assert_eq!(unsafe { smem_get_last_err_code() }, MEMFABRIC_SYS_NO_BACKEND);
            let message = last_message().expect("a message");
            assert!(
                message.starts_with("smem_init: no MemFabric library is available"),
                "{message}"
            );
            // SAFETY: a NULL option is never read: nothing runs.
            assert!(unsafe { smem_bm_create2(0, core::ptr::null()) }.is_null());
            // SAFETY: no arguments.
            assert_eq!(unsafe { smem_bm_get_rank_id() }, u32::MAX);
            assert_eq!(missing_symbol(), None);
        },
    );
}

#[test]
fn the_core_is_opened_first_and_a_missing_symbol_is_not_supported() {
    let dir = if common::is_child("symbol") {
        PathBuf::new()
    } else {
        fake_dir(SMEM_ABI_VERSION_SUPPORTED)
    };
    scenario(
        "the_core_is_opened_first_and_a_missing_symbol_is_not_supported",
        "symbol",
        &[(ENV_HOME, dir.display().to_string())],
        || {
            let info = backend().expect("the stand-in library loads after its core");
            assert_eq!(info.abi_version, SMEM_ABI_VERSION_SUPPORTED);
            assert!(
                info.companions[0].ends_with("libmf_hybm_core.so"),
                "{:?}",
                info.companions
            );
            // SAFETY: flags 0.
            assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
            // SAFETY: the stand-in lacks smem_bm_init, so nothing is read.
            let code = unsafe { smem_bm_init(c"tcp://127.0.0.1:1".as_ptr(), 1, 0, core::ptr::null()) };
            assert_eq!(code, MEMFABRIC_SYS_NOT_SUPPORTED);
            assert_eq!(missing_symbol(), Some("smem_bm_init"));
            // SAFETY: no arguments.
            assert_eq!(unsafe { smem_get_last_err_code() }, MEMFABRIC_SYS_NOT_SUPPORTED);
            let message = last_message().expect("a message");
            assert!(
                message.contains("does not export the symbol `smem_bm_init`"),
                "{message}"
            );
            // The message stays until a call reaches the library.
            assert!(last_message().expect("again").contains("smem_bm_init"));
            // SAFETY: flags 1 is refused by the stand-in.
            assert_eq!(unsafe { smem_init(1) }, SMEM_INVALID_PARAM);
            assert_eq!(missing_symbol(), None);
            assert_eq!(last_message().as_deref(), Some("fake: smem_init flags must be 0"));
            // SAFETY: no arguments.
            assert_eq!(unsafe { smem_get_last_err_code() }, SMEM_INVALID_PARAM);
            // Functions returning nothing or a pointer fail quietly.
            // SAFETY: the stand-in lacks both; nothing runs.
            unsafe { smem_uninit() };
            assert_eq!(missing_symbol(), Some("smem_uninit"));
            // SAFETY: as above.
            assert!(unsafe { smem_bm_ptr_by_mem_type(core::ptr::null_mut(), SMEM_MEM_TYPE_HOST, 0) }.is_null());
        },
    );
}

#[test]
fn another_abi_is_refused_naming_both_versions() {
    let dir = if common::is_child("abi") {
        PathBuf::new()
    } else {
        fake_dir(0x0001_0000)
    };
    scenario(
        "another_abi_is_refused_naming_both_versions",
        "abi",
        &[(ENV_LIBRARY, dir.join("lib/libmf_smem.so").display().to_string())],
        || {
            let error = backend().expect_err("ABI 1.0 is refused");
            assert!(
                matches!(
                    error,
                    LoadError::AbiMismatch {
                        found: 0x0001_0000,
                        supported: 0x0001_0003,
                        ..
                    }
                ),
                "{error:?}"
            );
            let text = error.to_string();
            assert!(text.contains("ABI version 1.0 (0x00010000) found"), "{text}");
            assert!(text.contains("supports only ABI 1.3 (0x00010003)"), "{text}");
            // SAFETY: flags 0; the refused library is never called.
            assert_eq!(unsafe { smem_init(0) }, MEMFABRIC_SYS_NO_BACKEND);
            assert!(last_message().expect("a message").contains("0x00010000"));
        },
    );
}

#[test]
fn a_library_without_its_core_beside_it_says_so() {
    let dir = if common::is_child("core") {
        PathBuf::new()
    } else {
        let dir = fake_dir(SMEM_ABI_VERSION_SUPPORTED);
        let lonely = dir.join("without-core");
        std::fs::create_dir_all(&lonely).expect("a folder");
        std::fs::copy(dir.join("lib/libmf_smem.so"), lonely.join("libmf_smem.so")).expect("a copy");
        lonely
    };
    scenario(
        "a_library_without_its_core_beside_it_says_so",
        "core",
        &[
            (ENV_LIBRARY, dir.join("libmf_smem.so").display().to_string()),
            (ENV_BACKEND, "hardware".into()),
        ],
        || {
            let error = backend().expect_err("no core");
            let text = error.to_string();
            assert!(
                text.contains("its core library libmf_hybm_core.so did not open"),
                "{text}"
            );
        },
    );
}

#[test]
fn the_software_backend_needs_no_library() {
    scenario(
        "the_software_backend_needs_no_library",
        "software",
        &[(ENV_BACKEND, "software".into())],
        || {
            assert_eq!(backend().expect("the software fabric").backend, Backend::Software);
            // SAFETY: flags 0.
            assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
        },
    );
}

#[test]
fn auto_falls_back_to_the_software_fabric_without_a_library() {
    let missing = "/nonexistent/memfabric/lib/libmf_smem.so".to_string();
    scenario(
        "auto_falls_back_to_the_software_fabric_without_a_library",
        "fallback",
        &[(ENV_LIBRARY, missing), (ENV_BACKEND, "auto".into())],
        || {
            let info = backend().expect("the software fabric");
            assert_eq!(info.backend, Backend::Software);
            assert_eq!(info.attempts.len(), 1, "{}", info.describe());
            assert!(info.describe().contains("software"), "{}", info.describe());
        },
    );
}

#[test]
fn a_bad_backend_request_is_an_error() {
    scenario(
        "a_bad_backend_request_is_an_error",
        "request",
        &[(ENV_BACKEND, "gpu".into())],
        || {
            assert_eq!(
                backend().expect_err("refused"),
                LoadError::InvalidRequest { value: "gpu".into() }
            );
        },
    );
}

#[test]
fn the_default_search_lists_every_place_it_tried() {
    scenario(
        "the_default_search_lists_every_place_it_tried",
        "search",
        &[
            (ENV_HOME, "/nonexistent/memfabric".into()),
            (ENV_BACKEND, "hardware".into()),
        ],
        || {
            let error = match backend() {
                // A machine with memfabric_hybrid installed finds it.
                Ok(info) => {
                    println!("found an installed library: {}", info.describe());
                    return;
                }
                Err(error) => error,
            };
            let LoadError::LibraryNotFound { attempts } = &error else {
                panic!("{error:?}");
            };
            let sources: Vec<&str> = attempts.iter().map(|attempt| attempt.source).collect();
            assert_eq!(sources.first(), Some(&"MEMFABRIC_HOME"), "{error}");
            assert_eq!(sources.last(), Some(&"dynamic linker search"), "{error}");
            assert!(
                sources
                    .iter()
                    .any(|source| source.starts_with("memfabric_hybrid Python package")),
                "{error}"
            );
            let text = error.to_string();
            assert!(
                text.contains("tried /nonexistent/memfabric/lib/libmf_smem.so (MEMFABRIC_HOME): no such file"),
                "{text}"
            );
            println!("{text}");
        },
    );
}
