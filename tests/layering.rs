//! The safe crate's rooms (the top-level modules of `src/`) stand in layers:
//! a file may name items of its own room and of the rooms in lower layers,
//! never of a room in its own layer or above. That keeps the rooms a DAG,
//! with no circle of imports between them.
//!
//! A file names a room when it writes a `crate::<room>` path (in a `use` or
//! in code), or a `crate::<Item>` path that `src/lib.rs` re-exports from
//! that room. A public re-export of an item from a higher room (a facade
//! such as `pub use crate::managed::ManagedBuf;` in `memory`, which keeps
//! the public path `ascend::memory::ManagedBuf`) is not an import; a path
//! through such a facade counts as naming the room the item lives in.
//! Comments, string literals and `#[cfg(test)]` modules are not scanned.
//!
//! A new room must be put in [`LAYERS`]; an import that breaks the order
//! means the item is in the wrong room: move it down to where it belongs
//! rather than reaching up or sideways.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The rooms of `src/`, bottom up. A room may name the rooms of the rows
/// before its own, and no other.
const LAYERS: &[&[&str]] = &[
    // Error codes, units and the guide (documentation only).
    &["error_code_names", "byte_units", "guide"],
    &["error_code"],
    &["error"],
    // Which backend runs the calls.
    &["backend"],
    &["device", "runtime"],
    &["device_info", "device_resources", "host_register", "info", "mbuf"],
    // Memory owners and views, with the queries and locations they report.
    &["memory"],
    &["stream", "vmm"],
    // Built on streams (managed memory, the custom allocator) and on
    // streams and virtual memory (sharing, shared segments).
    &["allocator", "managed", "share"],
    &["pool"],
    // MemFabric's global pool (feature `fabric`), which will move buffers
    // and pool blocks.
    &["fabric"],
    // Test support (feature `testing`) watches the pools.
    &["testing"],
];

/// Imports that break the order today and are being removed, as
/// `(from, to)` rooms.
const KNOWN_EXCEPTIONS: &[(&str, &str)] = &[];

/// The layer of each room.
fn layer_of() -> BTreeMap<&'static str, usize> {
    let mut layers = BTreeMap::new();
    for (layer, rooms) in LAYERS.iter().enumerate() {
        for room in *rooms {
            assert!(layers.insert(*room, layer).is_none(), "{room} is listed twice");
        }
    }
    layers
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

/// Whether `c` may be part of an identifier.
fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `src` with comments and string and character literals replaced by
/// spaces (line breaks kept, so line numbers stay).
fn blank_comments_and_literals(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = chars.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(chars.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        match chars[i] {
            '/' if next == Some('/') => {
                let end = (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len());
                blank(&mut out, i, end);
                i = end;
            }
            '/' if next == Some('*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < chars.len() && depth > 0 {
                    if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                        depth += 1;
                        j += 1;
                    } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                        depth -= 1;
                        j += 1;
                    }
                    j += 1;
                }
                blank(&mut out, i, j);
                i = j;
            }
            'r' if (i == 0 || !is_ident(chars[i - 1])) && matches!(next, Some('"' | '#')) => {
                // A raw string: r"...", r#"..."#, ...
                let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
                if chars.get(i + 1 + hashes) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                let body = i + 2 + hashes;
                let rest: String = chars[body..].iter().collect();
                let end = rest
                    .find(&close)
                    .map_or(chars.len(), |at| body + rest[..at].chars().count() + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{..}'), or a lifetime.
                let end = if next == Some('\\') {
                    (i + 2..chars.len()).find(|&j| chars[j] == '\'')
                } else if chars.get(i + 2) == Some(&'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(end) => {
                        blank(&mut out, i, end + 1);
                        i = end + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out.into_iter().collect()
}

/// `code` (already without comments) with the bodies of `#[cfg(test)]`
/// modules blanked, and the names of the `#[cfg(test)]` modules kept in
/// files of their own (`#[cfg(test)] mod tests;`).
fn blank_test_modules(code: &str) -> (String, Vec<String>) {
    let mut out: Vec<char> = code.chars().collect();
    let mut out_of_line = Vec::new();
    let mut from = 0;
    while let Some(at) = find_from(&out, from, "#[cfg(test)]") {
        from = at + 1;
        // Skip further attributes and a visibility, then expect `mod name`.
        let mut j = at + "#[cfg(test)]".len();
        loop {
            j = skip_space(&out, j);
            if out.get(j) == Some(&'#') {
                j = (j..out.len()).find(|&k| out[k] == ']').map_or(out.len(), |k| k + 1);
            } else if starts_with(&out, j, "pub") {
                j += 3;
                if out.get(j) == Some(&'(') {
                    j = (j..out.len()).find(|&k| out[k] == ')').map_or(out.len(), |k| k + 1);
                }
            } else {
                break;
            }
        }
        if !starts_with(&out, j, "mod ") {
            continue;
        }
        j = skip_space(&out, j + 3);
        let name_end = (j..out.len()).find(|&k| !is_ident(out[k])).unwrap_or(out.len());
        let name: String = out[j..name_end].iter().collect();
        j = skip_space(&out, name_end);
        match out.get(j) {
            Some(';') => out_of_line.push(name),
            Some('{') => {
                let mut depth = 0;
                let mut k = j;
                while k < out.len() {
                    match out[k] {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                let end = (k + 1).min(out.len());
                for c in &mut out[j..end] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
            }
            _ => {}
        }
    }
    (out.into_iter().collect(), out_of_line)
}

/// Where `needle` first is in `chars[from..]`.
fn find_from(chars: &[char], from: usize, needle: &str) -> Option<usize> {
    (from..chars.len()).find(|&i| starts_with(chars, i, needle))
}

/// Whether `needle` is at `chars[at..]`.
fn starts_with(chars: &[char], at: usize, needle: &str) -> bool {
    (at..).zip(needle.chars()).all(|(k, c)| chars.get(k) == Some(&c))
}

/// The first index from `at` that is not whitespace.
fn skip_space(chars: &[char], mut at: usize) -> usize {
    while chars.get(at).is_some_and(|c| c.is_whitespace()) {
        at += 1;
    }
    at
}

/// The paths a use tree stands for: `a::{b, c::{d, self}}` gives `a::b`,
/// `a::c::d` and `a::c` (renames dropped, globs kept as `a::*`).
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        // `path` or `path as alias`
        return vec![tree.split_whitespace().next().unwrap_or_default().to_string()];
    };
    let prefix: String = tree[..open].chars().filter(|c| !c.is_whitespace()).collect();
    let prefix = prefix.trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    let mut paths = Vec::new();
    for part in parts.iter().map(|part| part.trim()).filter(|part| !part.is_empty()) {
        for sub in expand(part) {
            paths.push(if sub == "self" {
                prefix.to_string()
            } else if prefix.is_empty() {
                sub
            } else {
                format!("{prefix}::{sub}")
            });
        }
    }
    paths
}

/// One `crate::` path in a file.
#[derive(Debug, Clone, PartialEq)]
struct CratePath {
    /// Its line (1-based).
    line: usize,
    /// The segments after `crate`.
    segments: Vec<String>,
    /// Whether it is (part of) a `pub use`: a public re-export.
    facade: bool,
}

/// Every `crate::...` (or `$crate::...`) path in `code`, use trees expanded.
fn crate_paths(code: &str) -> Vec<CratePath> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let mut from = 0;
    while let Some(at) = find_from(&chars, from, "crate::") {
        from = at + 1;
        if at > 0 && (is_ident(chars[at - 1]) || chars[at - 1] == ':') {
            continue;
        }
        // The path runs over identifiers, `::`, and one balanced `{...}`.
        let (mut end, mut depth) = (at, 0);
        while end < chars.len() {
            let c = chars[end];
            if c == '{' {
                depth += 1;
            } else if c == '}' {
                if depth == 0 {
                    break;
                }
                depth -= 1;
                if depth == 0 {
                    end += 1;
                    break;
                }
            } else if !(is_ident(c) || c == ':' || c == '*' || (depth > 0 && (c == ',' || c.is_whitespace()))) {
                break;
            }
            end += 1;
        }
        let text: String = chars[at..end].iter().collect();
        let before: String = chars[..at].iter().collect();
        let before = before.trim_end();
        let facade = before
            .strip_suffix("use")
            .is_some_and(|rest| rest.trim_end().ends_with("pub"));
        let line = chars[..at].iter().filter(|&&c| c == '\n').count() + 1;
        for path in expand(&text) {
            let segments: Vec<String> = path.split("::").skip(1).map(str::to_string).collect();
            paths.push(CratePath { line, segments, facade });
        }
        from = end.max(at + 1);
    }
    paths
}

/// The re-exports a path may go through: those of `src/lib.rs`, and those
/// by which a room makes public an item of another room.
#[derive(Debug, Default)]
struct Facades {
    /// `crate::<item>` (from `src/lib.rs`) -> its room.
    root: BTreeMap<String, String>,
    /// `(room, item)` -> the room the item lives in.
    rooms: BTreeMap<(String, String), String>,
}

impl Facades {
    /// The room a `crate::` path names, if any.
    fn room_of(&self, segments: &[String], layers: &BTreeMap<&str, usize>) -> Option<String> {
        let first = segments.first()?;
        let (room, item) = if layers.contains_key(first.as_str()) {
            (first.clone(), segments.get(1))
        } else {
            (self.root.get(first)?.clone(), Some(first))
        };
        Some(
            item.and_then(|item| self.rooms.get(&(room.clone(), item.clone())))
                .cloned()
                .unwrap_or(room),
        )
    }
}

/// A file of `src/`: its room and its code with comments, literals and
/// test modules blanked.
struct Scanned {
    path: PathBuf,
    room: String,
    code: String,
}

/// Scans `src/`; also returns the rooms found on disk.
fn scan(src: &Path) -> (Vec<Scanned>, Vec<String>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut test_files = Vec::new();
    let mut scanned = Vec::new();
    let mut rooms = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let (code, test_modules) = blank_test_modules(&blank_comments_and_literals(&text));
        let dir = match file.file_stem().and_then(|s| s.to_str()) {
            Some("mod" | "lib") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for name in test_modules {
            test_files.push(dir.join(format!("{name}.rs")));
            test_files.push(dir.join(name).join("mod.rs"));
        }
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_str().unwrap();
        let room = first.trim_end_matches(".rs").to_string();
        if room != "lib" && !rooms.contains(&room) {
            rooms.push(room.clone());
        }
        scanned.push(Scanned {
            path: file.clone(),
            room,
            code,
        });
    }
    scanned.retain(|file| !test_files.contains(&file.path));
    (scanned, rooms)
}

/// The facades of the scanned files.
fn facades(files: &[Scanned], layers: &BTreeMap<&str, usize>) -> Facades {
    let mut facades = Facades::default();
    // src/lib.rs: `pub use memory::{DeviceBuf, ...};` and the like.
    for file in files.iter().filter(|file| file.room == "lib") {
        for statement in file.code.split(';') {
            let Some(at) = statement.find("use ") else { continue };
            for path in expand(&statement[at + 4..]) {
                let mut segments = path.split("::");
                let (Some(room), Some(item)) = (segments.next(), path.rsplit("::").next()) else {
                    continue;
                };
                if layers.contains_key(room) && item != room {
                    facades.root.insert(item.to_string(), room.to_string());
                }
            }
        }
    }
    for file in files.iter().filter(|file| file.room != "lib") {
        for path in crate_paths(&file.code).into_iter().filter(|path| path.facade) {
            if let (Some(target), Some(item)) = (path.segments.first(), path.segments.last())
                && target != &file.room
                && layers.contains_key(target.as_str())
            {
                facades.rooms.insert((file.room.clone(), item.clone()), target.clone());
            }
        }
    }
    facades
}

/// The imports in `code` (of room `room`) that reach a room in the same
/// layer or above, as `line: crate::path (room)`.
fn upward_imports(room: &str, code: &str, facades: &Facades, layers: &BTreeMap<&str, usize>) -> Vec<String> {
    let own = layers[room];
    let mut found = Vec::new();
    for path in crate_paths(code).into_iter().filter(|path| !path.facade) {
        let Some(target) = facades.room_of(&path.segments, layers) else {
            continue;
        };
        if target == room || KNOWN_EXCEPTIONS.contains(&(room, target.as_str())) {
            continue;
        }
        if layers[target.as_str()] >= own {
            found.push(format!("{}: crate::{} ({target})", path.line, path.segments.join("::")));
        }
    }
    found
}

#[test]
fn every_room_is_in_the_layer_table() {
    let layers = layer_of();
    let (_, rooms) = scan(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(rooms.len() > 10, "found only {} rooms", rooms.len());
    let missing: Vec<_> = rooms
        .iter()
        .filter(|room| !layers.contains_key(room.as_str()))
        .collect();
    assert!(missing.is_empty(), "rooms missing from LAYERS: {missing:?}");
    let gone: Vec<_> = layers.keys().filter(|room| !rooms.iter().any(|r| r == *room)).collect();
    assert!(gone.is_empty(), "LAYERS lists rooms that are not in src/: {gone:?}");
}

#[test]
fn no_room_imports_a_room_above_it() {
    let layers = layer_of();
    let (files, _) = scan(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let facades = facades(&files, &layers);
    let mut found = Vec::new();
    for file in files.iter().filter(|file| file.room != "lib") {
        for import in upward_imports(&file.room, &file.code, &facades, &layers) {
            found.push(format!("{} ({}): {import}", file.path.display(), file.room));
        }
    }
    assert!(
        found.is_empty(),
        "imports against the layer order (LAYERS in tests/layering.rs):\n{}",
        found.join("\n")
    );
}

#[test]
fn known_exceptions_go_against_the_order() {
    let layers = layer_of();
    for (from, to) in KNOWN_EXCEPTIONS {
        assert!(
            layers[from] <= layers[to],
            "{from} -> {to} is in order: drop the exception"
        );
    }
}

/// A planted upward import is caught, and what is not an import is not.
#[test]
fn the_check_sees_an_upward_import() {
    let layers = layer_of();
    let mut facades = Facades::default();
    facades.root.insert("Stream".into(), "stream".into());
    facades.root.insert("DeviceBuf".into(), "memory".into());
    facades
        .rooms
        .insert(("memory".into(), "ManagedBuf".into()), "managed".into());
    let check = |room: &str, src: &str| {
        let (code, _) = blank_test_modules(&blank_comments_and_literals(src));
        upward_imports(room, &code, &facades, &layers)
    };
    // Upward, in every form.
    assert_eq!(
        check("memory", "use crate::pool::DevicePool;\n"),
        ["1: crate::pool::DevicePool (pool)"]
    );
    assert_eq!(
        check("memory", "fn f() {\n    crate::stream::Stream::new();\n}"),
        ["2: crate::stream::Stream::new (stream)"]
    );
    assert_eq!(
        check("memory", "use crate::{Device, Stream};"),
        ["1: crate::Stream (stream)"]
    );
    assert_eq!(
        check(
            "memory",
            "use crate::{\n    error::Result,\n    vmm::{MemAttr, PhysicalMemProp},\n};"
        ),
        ["1: crate::vmm::MemAttr (vmm)", "1: crate::vmm::PhysicalMemProp (vmm)"]
    );
    assert_eq!(
        check("stream", "use crate::memory::ManagedBuf;"),
        ["1: crate::memory::ManagedBuf (managed)"]
    );
    assert_eq!(
        check("stream", "pub(crate) use crate::vmm::VirtualRange;"),
        ["1: crate::vmm::VirtualRange (vmm)"]
    );
    assert_eq!(
        check("vmm", "use crate::stream::Stream;"),
        ["1: crate::stream::Stream (stream)"]
    );
    // Not imports, or not upward.
    assert!(check("memory", "/// See [`crate::pool::DevicePool`].\n// crate::pool").is_empty());
    assert!(check("memory", "const S: &str = \"crate::pool::DevicePool\";").is_empty());
    assert!(check("memory", "pub use crate::managed::ManagedBuf;").is_empty());
    assert!(
        check(
            "memory",
            "#[cfg(test)]\nmod tests {\n    use crate::pool::DevicePool;\n}"
        )
        .is_empty()
    );
    assert!(
        check(
            "memory",
            "use crate::memory::DeviceBuf;\nuse crate::DeviceBuf;\nuse crate::sys;"
        )
        .is_empty()
    );
    assert!(check("pool", "use crate::vmm::SegmentBlock; use crate::ascend_sys;").is_empty());
    assert!(check("memory", "let c = '\"'; let s = \"crate::pool\";").is_empty());
}
