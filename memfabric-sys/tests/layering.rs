//! The software fabric (`src/soft/`) sits below the routing layer: no file
//! of it may name `crate::api`, `crate::dispatch`, `crate::backend` or
//! `crate::loader` (what both need, `FailureValue`, lives below both in
//! `failure_value.rs`).
//!
//! Inside it, its rooms form layers, bottom up: `core`; `store` and
//! `memory`; `bm` (the world and its objects); `faults`; `copy`; `entry`
//! (the C entry points); `direct` (the entry points without routing). A
//! file names only rooms of its own layer or below, read from its
//! `crate::soft::…` paths; rooms of one layer never name each other.

use std::fs;
use std::path::{Path, PathBuf};

/// The modules above the software fabric.
const ABOVE: &[&str] = &["crate::api", "crate::dispatch", "crate::backend", "crate::loader"];

/// Each room of `src/soft/` and its layer (0 at the bottom).
const LAYERS: &[(&str, u32)] = &[
    ("core", 0),
    ("store", 1),
    ("memory", 1),
    ("bm", 2),
    ("faults", 3),
    ("copy", 4),
    ("entry", 5),
    ("direct", 6),
    ("live", 6),
];

fn soft_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/soft")
}

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

/// The room of a file: the first path component under `src/soft/`
/// (`core/gva.rs` → `core`, `copy.rs` → `copy`), or `None` for `mod.rs`.
fn room_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(soft_dir()).ok()?;
    let first = relative.components().next()?.as_os_str().to_string_lossy().into_owned();
    let room = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (room != "mod").then_some(room)
}

fn layer(room: &str) -> u32 {
    LAYERS
        .iter()
        .find(|(name, _)| *name == room)
        .map(|(_, layer)| *layer)
        .unwrap_or_else(|| panic!("the room `{room}` of src/soft/ has no layer in LAYERS: add it"))
}

/// The `crate::soft::ROOM` paths in `text`, with their line numbers.
fn soft_rooms_named(text: &str) -> Vec<(usize, String)> {
    let mut named = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::soft::") {
            rest = &rest[at + "crate::soft::".len()..];
            let room: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if LAYERS.iter().any(|(name, _)| *name == room) {
                named.push((index + 1, room));
            }
        }
    }
    named
}

/// Every upward or sideways arrow among `files`, as text.
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (file, text) in files {
        for module in ABOVE {
            for (index, line) in text.lines().enumerate() {
                let hit = line.match_indices(module).any(|(at, _)| {
                    line[at + module.len()..]
                        .chars()
                        .next()
                        .is_none_or(|next| !(next.is_alphanumeric() || next == '_'))
                });
                if hit {
                    found.push(format!("{}:{}: names {module}", file.display(), index + 1));
                }
            }
        }
        let Some(room) = room_of(file) else { continue };
        let own = layer(&room);
        for (line, named) in soft_rooms_named(text) {
            if named != room && layer(&named) >= own {
                found.push(format!(
                    "{}:{line}: `{room}` (layer {own}) names `{named}` (layer {})",
                    file.display(),
                    layer(&named)
                ));
            }
        }
    }
    found
}

fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&soft_dir(), &mut files);
    assert!(files.len() > 10, "found only {} files under src/soft", files.len());
    files
        .into_iter()
        .map(|file| {
            let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
            (file, text)
        })
        .collect()
}

#[test]
fn the_software_fabric_is_layered_and_names_nothing_above_it() {
    let files = sources();
    for (file, _) in &files {
        if let Some(room) = room_of(file) {
            layer(&room);
        }
    }
    let found = violations(&files);
    assert!(
        found.is_empty(),
        "arrows that do not run downward:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_planted_upward_or_sideways_import_is_found() {
    let core = soft_dir().join("core/planted.rs");
    let store = soft_dir().join("store/planted.rs");
    let planted = vec![
        (core, "use crate::soft::bm::world;\n".to_string()),
        (
            store,
            "use crate::soft::memory::dram;\nuse crate::dispatch::x;\n".to_string(),
        ),
    ];
    let found = violations(&planted);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].contains("`core` (layer 0) names `bm`"), "{found:#?}");
    assert!(
        found.iter().any(|line| line.contains("names crate::dispatch")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|line| line.contains("`store` (layer 1) names `memory`")),
        "{found:#?}"
    );
}
