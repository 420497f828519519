//! The safe items carry the C names of the AscendCL functions they call as
//! `#[doc(alias = "...")]`, so that rustdoc's search finds `VirtualRange::map`
//! when one types `aclrtMapMem`. This test reads the attributes from the
//! sources (`src/**/*.rs`) and checks them against the bound functions
//! (`ascend::sys::FUNCTION_NAMES`) and the map `docs/acl-to-rust.md`:
//!
//! - every alias is the C name of a function `ascend-sys` binds;
//! - every function whose row in the map names a safe item (a row with a
//!   `` `code` `` span that does not say "raw only") has an alias somewhere;
//! - an alias sits on an item its row names (the item's own name appears in
//!   the row), and never on a "raw only" function's;
//! - there are at least [`MIN_ALIASES`] aliases.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The least number of aliases (one per item and C name).
const MIN_ALIASES: usize = 150;

/// One C name on one item.
#[derive(Debug)]
struct Alias {
    /// The C function name.
    name: String,
    /// `file:line` of the attribute.
    at: String,
    /// The name of the item the attribute is on (a function, type or variant).
    item: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals of `doc(alias = "a")` or `doc(alias("a", "b"))` in
/// `attr` (one attribute line), or `None` when it is written another way.
fn alias_strings(attr: &str) -> Option<Vec<String>> {
    let rest = &attr[attr.find("doc(alias")? + "doc(alias".len()..];
    let rest = rest.trim_start();
    let list = if let Some(r) = rest.strip_prefix('=') {
        r.trim_start().split(')').next()?
    } else {
        rest.strip_prefix('(')?.split(')').next()?
    };
    let names: Vec<String> = list
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .map(str::to_owned)
        })
        .collect::<Option<_>>()?;
    (!names.is_empty()).then_some(names)
}

/// The name an item line declares: `pub fn map(` → `map`, `pub struct
/// Mbuf {` → `Mbuf`, a variant `Acl {` → `Acl`.
fn item_name(line: &str) -> String {
    const KEYWORDS: &[&str] = &["fn", "struct", "enum", "trait", "type", "union", "const", "static"];
    let words: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    match words.iter().position(|w| KEYWORDS.contains(w)) {
        Some(i) if i + 1 < words.len() => words[i + 1].to_owned(),
        _ => words.first().map_or_else(String::new, |w| (*w).to_owned()),
    }
}

/// Every alias in `src/`, with the lines that mention `doc(alias` but could
/// not be read (so that none is skipped silently).
fn aliases() -> (Vec<Alias>, Vec<String>) {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    let (mut found, mut unreadable) = (Vec::new(), Vec::new());
    for path in files {
        let text = fs::read_to_string(&path).expect("read source");
        let rel = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if !trimmed.contains("doc(alias") || trimmed.starts_with("//") {
                continue;
            }
            let at = format!("{rel}:{}", i + 1);
            // The attribute, joined when rustfmt has split it over lines.
            let end = (i..lines.len()).find(|&j| lines[j].contains(")]")).unwrap_or(i);
            let attr: String = lines[i..=end].iter().map(|l| l.trim()).collect();
            let names = trimmed.starts_with("#[").then(|| alias_strings(&attr)).flatten();
            let Some(names) = names else {
                unreadable.push(at);
                continue;
            };
            // The item: the first line after the attributes and doc comments.
            let item = lines[end + 1..]
                .iter()
                .map(|l| l.trim_start())
                .find(|l| !(l.starts_with("#[") || l.starts_with("//")))
                .map_or_else(String::new, item_name);
            for name in names {
                found.push(Alias {
                    name,
                    at: at.clone(),
                    item: item.clone(),
                });
            }
        }
    }
    (found, unreadable)
}

/// The map's rows: C name → the `ascend` column.
fn map_rows() -> BTreeMap<String, String> {
    let text = fs::read_to_string(root().join("docs/acl-to-rust.md")).expect("read docs/acl-to-rust.md");
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("| `") else { continue };
        let Some((name, rest)) = rest.split_once("` | ") else {
            continue;
        };
        let column = rest.trim_end().trim_end_matches('|').trim_end();
        assert!(
            rows.insert(name.to_owned(), column.to_owned()).is_none(),
            "docs/acl-to-rust.md: two rows for `{name}`"
        );
    }
    rows
}

/// Whether a row's `ascend` column names a safe item.
fn names_safe_item(column: &str) -> bool {
    !column.starts_with("raw only") && column.contains('`')
}

/// Whether `word` appears in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

#[test]
fn doc_aliases_match_the_bound_functions_and_the_map() {
    let bound: BTreeSet<&str> = ascend::sys::FUNCTION_NAMES.iter().copied().collect();
    let rows = map_rows();
    let (aliases, unreadable) = aliases();
    let mut problems = Vec::new();

    for at in &unreadable {
        problems.push(format!(
            "{at}: a `doc(alias` this test cannot read (write `#[doc(alias = \"c_name\")]` or `#[doc(alias(\"a\", \"b\"))]` on one line)"
        ));
    }

    // MemFabric's functions (`smem_*`, the feature `fabric`) are checked
    // against their own map by `fabric_doc_aliases_match_the_map` below.
    let aliases: Vec<Alias> = aliases.into_iter().filter(|a| !a.name.starts_with("smem_")).collect();

    // (a) Every alias is a bound function, (d) on an item its row names.
    for alias in &aliases {
        let Alias { name, at, item } = alias;
        if !bound.contains(name.as_str()) {
            problems.push(format!("{at}: alias `{name}` is not a function ascend-sys binds"));
            continue;
        }
        match rows.get(name) {
            None => problems.push(format!("{at}: alias `{name}` has no row in docs/acl-to-rust.md")),
            Some(column) if !names_safe_item(column) => problems.push(format!(
                "{at}: alias `{name}` on `{item}`, but docs/acl-to-rust.md says `{name}` is {column:?}"
            )),
            Some(column) if !has_word(column, item) => problems.push(format!(
                "{at}: alias `{name}` on `{item}`, which its row in docs/acl-to-rust.md does not name ({column:?})"
            )),
            Some(_) => {}
        }
    }

    // (b) Every function the map gives a safe item has an alias.
    let aliased: BTreeSet<&str> = aliases.iter().map(|a| a.name.as_str()).collect();
    let missing: Vec<String> = rows
        .iter()
        .filter(|(name, column)| names_safe_item(column) && !aliased.contains(name.as_str()))
        .map(|(name, column)| format!("`{name}` ({column})"))
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "{} functions docs/acl-to-rust.md maps to a safe item have no #[doc(alias)]:\n    {}",
            missing.len(),
            missing.join("\n    ")
        ));
    }

    // The map covers exactly the bound functions.
    let mapped: BTreeSet<&str> = rows.keys().map(String::as_str).collect();
    for name in bound.difference(&mapped) {
        problems.push(format!("`{name}` is bound but has no row in docs/acl-to-rust.md"));
    }
    for name in mapped.difference(&bound) {
        problems.push(format!(
            "docs/acl-to-rust.md has a row for `{name}`, which ascend-sys does not bind"
        ));
    }

    // (c) Enough of them.
    if aliases.len() < MIN_ALIASES {
        problems.push(format!("{} aliases, fewer than {MIN_ALIASES}", aliases.len()));
    }

    assert!(
        problems.is_empty(),
        "{} doc-alias problems:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn alias_attributes_are_read() {
    assert_eq!(
        alias_strings(r#"#[doc(alias = "aclrtMapMem")]"#),
        Some(vec!["aclrtMapMem".to_owned()])
    );
    assert_eq!(
        alias_strings(r#"#[doc(alias("aclrtMalloc", "aclrtMemset"))]"#),
        Some(vec!["aclrtMalloc".to_owned(), "aclrtMemset".to_owned()])
    );
    assert_eq!(
        alias_strings(r#"#[doc(alias("aclrtMalloc","aclrtMemset",))]"#),
        Some(vec!["aclrtMalloc".to_owned(), "aclrtMemset".to_owned()])
    );
    assert_eq!(alias_strings("#[doc(alias)]"), None);
    assert_eq!(
        item_name("    pub unsafe fn uninit_with(device: &Device) -> Result<Self> {"),
        "uninit_with"
    );
    assert_eq!(item_name("pub struct Mbuf {"), "Mbuf");
    assert_eq!(item_name("    Acl {"), "Acl");
    assert_eq!(item_name("    fn free(&self, block: Block);"), "free");
}

/// The table of `docs/fabric.md` ("Every bound function"): each C name of
/// a row → the row's Rust column.
#[cfg(feature = "fabric")]
fn fabric_map_rows() -> BTreeMap<String, String> {
    let text = fs::read_to_string(root().join("docs/fabric.md")).expect("read docs/fabric.md");
    let table = text
        .split("## Every bound function")
        .nth(1)
        .expect("docs/fabric.md has the section \"Every bound function\"");
    let mut rows = BTreeMap::new();
    for line in table.lines() {
        let Some(rest) = line.strip_prefix("| `") else { continue };
        let Some((names, column)) = rest.split_once(" | ") else {
            continue;
        };
        for name in names.split(", ") {
            let name = name.trim_matches('`');
            rows.insert(
                name.to_owned(),
                column.trim_end().trim_end_matches('|').trim_end().to_owned(),
            );
        }
    }
    rows
}

/// The `smem_*` aliases in `src/fabric/`: each names a function
/// `memfabric-sys` binds, sits on an item the row of `docs/fabric.md`'s
/// table names, and every C function of that table that names a Rust
/// method has an alias.
#[cfg(feature = "fabric")]
#[test]
fn fabric_doc_aliases_match_the_map() {
    let bound: BTreeSet<&str> = ascend::fabric::sys::FUNCTION_NAMES.iter().copied().collect();
    let rows = fabric_map_rows();
    let (aliases, _) = aliases();
    let aliases: Vec<Alias> = aliases.into_iter().filter(|a| a.name.starts_with("smem_")).collect();
    let mut problems = Vec::new();
    for Alias { name, at, item } in &aliases {
        if !bound.contains(name.as_str()) {
            problems.push(format!("{at}: alias `{name}` is not a function memfabric-sys binds"));
        }
        match rows.get(name) {
            None => problems.push(format!("{at}: alias `{name}` has no row in docs/fabric.md")),
            Some(column) if !has_word(column, item) => problems.push(format!(
                "{at}: alias `{name}` on `{item}`, which its row in docs/fabric.md does not name ({column:?})"
            )),
            Some(_) => {}
        }
    }
    for name in rows.keys() {
        if !bound.contains(name.as_str()) {
            problems.push(format!(
                "docs/fabric.md maps `{name}`, which memfabric-sys does not bind"
            ));
        }
    }
    assert!(aliases.len() >= 10, "only {} smem_* aliases", aliases.len());
    assert!(
        problems.is_empty(),
        "{} problems:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}
