//! The software device (`src/soft/`) sits below the routing layer: no file
//! of it may name `crate::api` or `crate::dispatch` (see the layering in
//! `src/lib.rs`). What both need lives below both, in `function_names.rs`
//! and `failure.rs`.

use std::fs;
use std::path::{Path, PathBuf};

/// The modules above the software device.
const ABOVE: &[&str] = &["crate::api", "crate::dispatch"];

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The places in `text` naming `module` as a whole path segment
/// (`crate::api` and `crate::api::x`, not `crate::api_x`), as line numbers.
fn mentions(text: &str, module: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            line.match_indices(module).any(|(at, _)| {
                line[at + module.len()..]
                    .chars()
                    .next()
                    .is_none_or(|next| !(next.is_alphanumeric() || next == '_'))
            })
        })
        .map(|(index, _)| index + 1)
        .collect()
}

#[test]
fn software_device_names_nothing_above_it() {
    let soft = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/soft");
    let mut files = Vec::new();
    rust_files(&soft, &mut files);
    assert!(
        files.len() > 10,
        "found only {} files under {}",
        files.len(),
        soft.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        for module in ABOVE {
            for line in mentions(&text, module) {
                found.push(format!("{}:{line}: {module}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the software device reaches up into the routing layer:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_a_whole_segment() {
    assert_eq!(
        mentions("use crate::api::X;\nx\ncrate::dispatch::f()", "crate::dispatch"),
        [3]
    );
    assert_eq!(mentions("crate::api", "crate::api"), [1]);
    assert!(mentions("crate::api_names", "crate::api").is_empty());
}
