//! The software device (`src/soft/`) sits below the routing layer: no file
//! of it may name `crate::api` or `crate::dispatch` (see the layering in
//! `src/lib.rs`). What both need lives below both, in `function_names.rs`
//! and `failure_value.rs`.
//!
//! Inside the software device, its rooms form layers, bottom up: `core/`,
//! `check/`, `started/`, the families (one lock each), `compose/`, and the
//! entry points on top. A file names only rooms of its own layer or below
//! (read from its `crate::soft::…` and `super::…` paths), and a family
//! names no other family ([`SIDEWAYS`] would list known exceptions; none
//! are left).

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

/// The layers of the software device, bottom up: each with the rooms it
/// holds (a room is a top-level file or folder of `src/soft/`; a layer
/// folder is a room of its own).
const LAYERS: &[(&str, &[&str])] = &[
    ("core", &["core"]),
    ("check", &["check"]),
    ("started", &["started"]),
    (
        "family",
        &[
            "allocator_desc",
            "context",
            "device_mem",
            "host_mem",
            "host_register",
            "mbuf",
            "peer",
            "res_limit",
            "share",
            "vmm",
        ],
    ),
    ("compose", &["compose"]),
    ("entry", &["entry", "direct", "introspect", "process", "mod"]),
];

/// Calls between families still allowed: none any more (issue 39 composed
/// them in `entry/`, or moved what both families hold into `core/`). Every
/// family reads this thread's current device from `started/current.rs`,
/// below them all. List an edge here only as known debt.
const SIDEWAYS: &[(&str, &str)] = &[];

/// The layer of `room` and its place from the bottom.
fn layer_of(room: &str) -> Option<(usize, &'static str)> {
    LAYERS
        .iter()
        .enumerate()
        .find(|(_, (_, rooms))| rooms.contains(&room))
        .map(|(rank, (name, _))| (rank, *name))
}

/// The first identifier of `text`.
fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The rooms a line of the file at `module` (its path under `src/soft/`,
/// e.g. `["compose", "streams", "batch"]`) names through `crate::soft::…`
/// or `super::…` paths, comments left out.
fn rooms_named(line: &str, module: &[&str]) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut rooms = Vec::new();
    for (at, _) in code.match_indices("crate::soft::") {
        let rest = &code[at + "crate::soft::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or("");
                rooms.extend(group.split(',').map(|item| ident(item.trim()).to_string()));
            }
            None => rooms.push(ident(rest).to_string()),
        }
    }
    for (at, _) in code.match_indices("super::") {
        if code[..at].ends_with("::") || code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut rest = &code[at..];
        let mut up = 0;
        while let Some(next) = rest.strip_prefix("super::") {
            up += 1;
            rest = next;
        }
        let Some(kept) = module.len().checked_sub(up) else {
            continue;
        };
        rooms.push(match module[..kept].first() {
            Some(room) => (*room).to_string(),
            None => ident(rest).to_string(),
        });
    }
    rooms.retain(|room| !room.is_empty() && room != "self");
    rooms
}

/// Where the lines of `text`, the file at `module`, name a room the layers
/// do not allow, as `(line, room named)`. `Err` when the file's own room is
/// in no layer.
fn upward(text: &str, module: &[&str]) -> Result<Vec<(usize, String)>, String> {
    let own = module.first().copied().unwrap_or("mod");
    let (own_rank, own_layer) = layer_of(own).ok_or_else(|| format!("room `{own}` is in no layer of LAYERS"))?;
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for room in rooms_named(line, module) {
            let Some((rank, layer)) = layer_of(&room) else {
                // Not a room: an item of the facade (`crate::soft::live`).
                continue;
            };
            let sideways =
                layer == "family" && own_layer == "family" && room != own && !SIDEWAYS.contains(&(own, room.as_str()));
            if rank > own_rank || sideways {
                found.push((index + 1, room));
            }
        }
    }
    Ok(found)
}

/// The module path of `file` under `soft` (`mod.rs` stands for its folder).
fn module_of(soft: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(soft).expect("a file under src/soft");
    let mut parts: Vec<String> = relative
        .with_extension("")
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if parts.len() > 1 && parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

#[test]
fn software_device_layers_name_only_layers_below() {
    let soft = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/soft");
    let mut files = Vec::new();
    rust_files(&soft, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let module = module_of(&soft, file);
        let module: Vec<&str> = module.iter().map(String::as_str).collect();
        match upward(&text, &module) {
            Ok(lines) => found.extend(
                lines
                    .into_iter()
                    .map(|(line, room)| format!("{}:{line}: names {room}", file.display())),
            ),
            Err(why) => found.push(format!("{}: {why}", file.display())),
        }
    }
    assert!(
        found.is_empty(),
        "the software device's layers are crossed upward (or sideways between families):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_layer_check_sees_a_planted_upward_import() {
    // A family naming the data path above it, by either kind of path, and
    // (no longer a listed edge) another family.
    let planted = "use crate::soft::device_mem;\nuse crate::soft::compose::translate::Translator;\n";
    assert_eq!(
        upward(planted, &["vmm", "physical"]),
        Ok(vec![(1, "device_mem".to_string()), (2, "compose".to_string())])
    );
    assert_eq!(
        upward("use crate::soft::host_mem;\n", &["host_register"]),
        Ok(vec![(1, "host_mem".to_string())])
    );
    assert_eq!(
        upward("let vmm = crate::soft::vmm::read()?;\n", &["share", "ipc"]),
        Ok(vec![(1, "vmm".to_string())])
    );
    assert_eq!(
        upward("use super::super::entry::x;\n", &["share", "ipc"]),
        Ok(vec![(1, "entry".to_string())])
    );
    assert_eq!(
        upward("use crate::soft::{check::misuse_log, mbuf};\n", &["core", "config"]),
        Ok(vec![(1, "check".to_string()), (1, "mbuf".to_string())])
    );
    // A family calling another family sideways.
    assert_eq!(
        upward("crate::soft::share::withdraw(h);\n", &["device_mem"]),
        Ok(vec![(1, "share".to_string())])
    );
    // The contexts family is a family like the others; the current device
    // is read from the runtime below.
    assert_eq!(
        upward("use crate::soft::context;\n", &["host_mem"]),
        Ok(vec![(1, "context".to_string())])
    );
    assert_eq!(
        upward("use crate::soft::started::current;\n", &["host_mem"]),
        Ok(vec![])
    );
    // Downward, inside the own room, in comments, and the facade are fine.
    let fine =
        "use super::Physical;\nuse crate::soft::core::soft_result;\n// crate::soft::entry\ncrate::soft::live();\n";
    assert_eq!(upward(fine, &["vmm", "physical"]), Ok(vec![]));
    assert_eq!(upward("use super::lock_order;\n", &["core", "byte_locks"]), Ok(vec![]));
    // A room in no layer is reported.
    assert!(upward("", &["newroom"]).is_err());
}
