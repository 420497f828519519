//! The library search order.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The file name of MemFabric's API library.
pub(crate) const LIBRARY_NAME: &str = "libmf_smem.so";
/// The file name of the core library `libmf_smem.so` needs, opened first
/// with `RTLD_GLOBAL` from the same directory.
pub(crate) const CORE_LIBRARY_NAME: &str = "libmf_hybm_core.so";

/// Environment variable naming `libmf_smem.so` explicitly.
pub const ENV_LIBRARY: &str = "MEMFABRIC_SMEM_LIB";
/// Environment variable naming an install root: `$MEMFABRIC_HOME/lib`.
pub const ENV_HOME: &str = "MEMFABRIC_HOME";

/// The Python package whose `lib/` folder holds the libraries.
const PYTHON_PACKAGE: &str = "memfabric_hybrid";
/// How long the last-resort `python3` query may take.
const PYTHON_TIMEOUT: Duration = Duration::from_secs(5);

/// One place to try, and where that place came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The `libmf_smem.so` to open (a bare name: the dynamic linker's search).
    pub(crate) path: PathBuf,
    /// Where this candidate came from.
    pub(crate) source: &'static str,
}

/// The `source` of the candidate that stands for "ask `python3`": it is
/// resolved only when the loader reaches it (see [`resolve_python_query`]),
/// so that a process that finds the library earlier never starts Python.
pub(crate) const PYTHON_QUERY: &str = "memfabric_hybrid Python package (asked python3)";

impl Candidate {
    /// The directory the companion libraries are opened from, or `None`
    /// for the dynamic linker's search (bare names).
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.path.parent().filter(|dir| !dir.as_os_str().is_empty())
    }
}

/// The places to look for the library, in order:
///
/// 1. `MEMFABRIC_SMEM_LIB`, when set: that file and nothing else;
/// 2. `$MEMFABRIC_HOME/lib/libmf_smem.so`;
/// 3. the `lib/` folder of an installed `memfabric_hybrid` Python package,
///    found in the usual site-packages folders without running Python, or,
///    when none is there, by asking `python3` (with a timeout) once the
///    loader reaches this place;
/// 4. the dynamic linker's own search (`LD_LIBRARY_PATH`, the cache).
pub(crate) fn candidates(env: impl Fn(&str) -> Option<String>) -> Vec<Candidate> {
    if let Some(file) = env(ENV_LIBRARY).filter(|value| !value.is_empty()) {
        return vec![Candidate {
            path: PathBuf::from(file),
            source: ENV_LIBRARY,
        }];
    }
    let mut list = Vec::new();
    if let Some(root) = env(ENV_HOME).filter(|value| !value.is_empty()) {
        push_unique(&mut list, Path::new(&root).join("lib").join(LIBRARY_NAME), ENV_HOME);
    }
    let packages = python_packages_on_disk(&site_dirs(&env));
    if packages.is_empty() {
        list.push(Candidate {
            path: PathBuf::from("memfabric_hybrid"),
            source: PYTHON_QUERY,
        });
    }
    for package in packages {
        push_unique(
            &mut list,
            package.join("lib").join(LIBRARY_NAME),
            "memfabric_hybrid Python package",
        );
    }
    push_unique(&mut list, PathBuf::from(LIBRARY_NAME), "dynamic linker search");
    list
}

fn push_unique(list: &mut Vec<Candidate>, path: PathBuf, source: &'static str) {
    if !list.iter().any(|candidate| candidate.path == path) {
        list.push(Candidate { path, source });
    }
}

/// The folders a `pip install` puts packages in, most specific first:
/// `PYTHONPATH`'s entries, the active virtual or conda environment, the
/// user's site, then the system's.
pub(crate) fn site_dirs(env: &impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(path) = env("PYTHONPATH") {
        dirs.extend(std::env::split_paths(&path).filter(|dir| !dir.as_os_str().is_empty()));
    }
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for variable in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = env(variable).filter(|value| !value.is_empty()) {
            prefixes.push(PathBuf::from(prefix));
        }
    }
    if let Some(home) = env("HOME").filter(|value| !value.is_empty()) {
        prefixes.push(Path::new(&home).join(".local"));
    }
    prefixes.extend(["/usr/local", "/usr"].map(PathBuf::from));
    for prefix in prefixes {
        let lib = prefix.join("lib");
        let mut versions: Vec<PathBuf> = std::fs::read_dir(&lib)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("python3"))
            .map(|entry| entry.path())
            .collect();
        // The newest Python first (python3.12 before python3.9 is not
        // lexical order, but any order finds an installed package).
        versions.sort();
        versions.reverse();
        for version in versions {
            dirs.push(version.join("site-packages"));
            dirs.push(version.join("dist-packages"));
        }
    }
    dirs
}

/// The `memfabric_hybrid` package folders under `sites` that hold the
/// library.
pub(crate) fn python_packages_on_disk(sites: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for site in sites {
        let package = site.join(PYTHON_PACKAGE);
        if package.join("lib").join(LIBRARY_NAME).is_file() && !found.contains(&package) {
            found.push(package);
        }
    }
    found
}

/// Resolves the [`PYTHON_QUERY`] candidate: the package's
/// `lib/libmf_smem.so`, or why there is none.
pub(crate) fn resolve_python_query() -> Result<PathBuf, String> {
    python_package_by_query()
        .map(|package| package.join("lib").join(LIBRARY_NAME))
        .ok_or_else(|| {
            "no memfabric_hybrid package in the site-packages folders, and python3 is absent or knows none".to_string()
        })
}

/// Asks `python3` where the package is, without importing it (`find_spec`
/// runs none of the package's code), and gives up after a few seconds.
/// `None` when python3 is absent, slow, or knows no such package.
fn python_package_by_query() -> Option<PathBuf> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import importlib.util as u; s = u.find_spec('memfabric_hybrid'); \
             print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + PYTHON_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let package = PathBuf::from(text);
    (package.is_absolute() && package.join("lib").join(LIBRARY_NAME).is_file()).then_some(package)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn explicit_file_is_the_only_candidate() {
        let list = candidates(env_of(&[
            ("MEMFABRIC_SMEM_LIB", "/x/libmf_smem.so"),
            ("MEMFABRIC_HOME", "/h"),
        ]));
        assert_eq!(
            list,
            [Candidate {
                path: PathBuf::from("/x/libmf_smem.so"),
                source: ENV_LIBRARY
            }]
        );
        assert_eq!(list[0].dir(), Some(Path::new("/x")));
    }

    #[test]
    fn home_comes_first_and_the_linker_search_last() {
        let list = candidates(env_of(&[("MEMFABRIC_HOME", "/h"), ("MEMFABRIC_SMEM_LIB", "")]));
        assert_eq!(list[0].path, PathBuf::from("/h/lib/libmf_smem.so"));
        assert_eq!(list[0].source, ENV_HOME);
        let last = list.last().expect("the linker search");
        assert_eq!(last.path, PathBuf::from("libmf_smem.so"));
        assert_eq!(last.dir(), None);
    }

    #[test]
    fn a_python_package_is_found_in_a_site_folder() {
        let root = std::env::temp_dir().join(format!("memfabric-sys-site-{}", std::process::id()));
        let lib = root.join("site-packages").join("memfabric_hybrid").join("lib");
        std::fs::create_dir_all(&lib).expect("a temporary site folder");
        std::fs::write(lib.join(LIBRARY_NAME), b"").expect("a stand-in library");
        let sites = [root.join("missing"), root.join("site-packages")];
        assert_eq!(
            python_packages_on_disk(&sites),
            [root.join("site-packages").join("memfabric_hybrid")]
        );
        let env = |name: &str| (name == "PYTHONPATH").then(|| format!("/a:{}", root.display()));
        let dirs = site_dirs(&env);
        assert_eq!(&dirs[..2], &[PathBuf::from("/a"), root.clone()]);
        std::fs::remove_dir_all(&root).expect("cleanup");
    }
}
