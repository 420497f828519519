//! A Rust program that finds this drop-in library where it looks for
//! MemFabric (here through `MEMFABRIC_HOME`, with a core library beside it)
//! does not load it as the real library: the `memfabric-sys` loader sees
//! the marker and says why in its report (so `auto` goes on to the
//! in-process software fabric). Its own test binary, because the backend is
//! chosen once per process.

use memfabric_sys::{BackendRequest, LoadError, select_backend};
use std::path::PathBuf;

fn built_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the path of this test binary");
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("libmemfabric_soft_smem.so"))
        .find(|path| path.is_file())
        .expect("the built drop-in library")
}

#[test]
fn the_loader_refuses_the_drop_in_and_says_why() {
    let home = std::env::temp_dir().join(format!("memfabric-drop-in-{}", std::process::id()));
    let lib = home.join("lib");
    std::fs::create_dir_all(&lib).expect("a temporary tree");
    // The drop-in under MemFabric's names: the loader opens the core first,
    // then libmf_smem.so, and must refuse the latter by its marker.
    std::fs::copy(built_library(), lib.join("libmf_smem.so")).expect("copy");
    std::fs::copy(built_library(), lib.join("libmf_hybm_core.so")).expect("copy");
    // SAFETY: set before any thread of this test binary reads the
    // environment (the only test of this binary, on its main path).
    unsafe {
        std::env::set_var("MEMFABRIC_HOME", &home);
        std::env::remove_var("MEMFABRIC_SMEM_LIB");
    }
    let hardware = select_backend(BackendRequest::Hardware);
    match hardware {
        Err(LoadError::LibraryNotFound { attempts, .. }) => {
            let refused = attempts
                .iter()
                .find(|attempt| attempt.path == lib.join("libmf_smem.so"))
                .expect("the drop-in was tried");
            let why = refused.error.as_deref().unwrap_or_default();
            assert!(why.contains("software-fabric library"), "{why}");
        }
        other => panic!("expected the drop-in refused, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&home);
}
