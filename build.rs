//! Build-time discovery of an installed CANN toolkit.
//!
//! If the machine that builds this crate has CANN installed (found through
//! `ASCEND_HOME_PATH`, `ASCEND_TOOLKIT_HOME` or the default install
//! locations), the directory holding its `libascendcl.so` is recorded in the
//! crate (`ASCEND_BUILD_TOOLKIT_LIB`). At run time the loader tries it as a
//! last resort, after the documented search, so a program built on a CANN
//! machine still finds the library when run without `set_env.sh`. Nothing is
//! linked: the crate builds the same with or without a toolkit.

use std::path::{Path, PathBuf};

const LIBRARY: &str = "libascendcl.so";

fn main() {
    for variable in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        println!("cargo::rerun-if-env-changed={variable}");
    }
    let mut roots: Vec<PathBuf> = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/usr/local/Ascend/cann"));
    roots.push(PathBuf::from("/usr/local/Ascend/ascend-toolkit/latest"));

    match roots
        .iter()
        .map(|root| root.join("lib64"))
        .find(|dir| dir.join(LIBRARY).is_file())
    {
        Some(dir) => {
            println!("cargo::rerun-if-changed={}", dir.join(LIBRARY).display());
            println!("cargo::rustc-env=ASCEND_BUILD_TOOLKIT_LIB={}", dir.display());
            if let Some(version) = toolkit_version(&dir) {
                println!("cargo::warning=found CANN toolkit {version} at {}", dir.display());
            }
        }
        None => {
            for root in &roots {
                println!("cargo::rerun-if-changed={}", root.join("lib64").display());
            }
        }
    }
}

/// The toolkit's version string from `<root>/version.cfg` or
/// `<root>/*/version.info`, when present (informational only).
fn toolkit_version(lib_dir: &Path) -> Option<String> {
    let root = lib_dir.parent()?;
    let text = std::fs::read_to_string(root.join("version.cfg"))
        .or_else(|_| std::fs::read_to_string(root.join("runtime/version.info")))
        .ok()?;
    text.lines()
        .find_map(|line| {
            line.split_once('=')
                .filter(|(key, _)| key.trim().eq_ignore_ascii_case("version"))
        })
        .map(|(_, value)| value.trim().to_string())
}
