#!/usr/bin/env python3
"""How many of the safe crate's public items carry a code example.

Builds the crate's rustdoc JSON (stable rustdoc, the JSON output unlocked with
RUSTC_BOOTSTRAP for this one command), walks the public API from the crate
root (through `pub use` re-exports), and counts:

- types: every public struct and enum;
- traits: every public trait (a sealed supertrait in a private module is not
  reachable, and not counted);
- functions: every public free function, every public method of an inherent
  impl of a public type, and every method a public trait declares.

Trait impls (`Drop`, `From`, ...) are the traits' own documentation and are
not counted. Items a macro generated (bitflags' methods and constants) are
left out: they share one source span, the macro call's.

An item "carries an example" when its docs have a fenced Rust code block (no
info string, or `rust`, `no_run`, `compile_fail`, `should_panic`); `text`,
`sh`, `ignore` and the like do not count.

Usage: scripts/example-coverage.py [--missing] [--min-functions PCT]
  --missing            list the items without an example
  --min-functions PCT  exit 1 when a type or a trait lacks an example or fewer
                       than PCT percent of the functions carry one
"""

import argparse
import collections
import json
import os
import subprocess
import sys

RUST_INFO = {"", "rust", "no_run", "compile_fail", "should_panic"}


def build_json(root, target_dir):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1", CARGO_TARGET_DIR=target_dir)
    subprocess.run(
        ["cargo", "rustdoc", "-p", "ascend-rs", "--all-features", "--lib", "-q", "--",
         "-Z", "unstable-options", "--output-format", "json"],
        cwd=root, env=env, check=True)
    with open(os.path.join(target_dir, "doc", "ascend.json")) as f:
        return json.load(f)


def has_example(docs):
    if not docs:
        return False
    inside = False
    for line in docs.splitlines():
        stripped = line.strip()
        if not stripped.startswith("```"):
            continue
        if inside:  # the fence that closes a block
            inside = False
            continue
        inside = True
        info = stripped[3:].strip()
        words = {w.strip() for w in info.split(",")} if info else {""}
        if {w for w in words if not w.startswith("edition")} <= RUST_INFO:
            return True
    return False


def kind(item):
    return next(iter(item["inner"]))


def span_key(item):
    span = item.get("span")
    if not span:
        return None
    return (span["filename"], tuple(span["begin"]), tuple(span["end"]))


def walk(doc):
    index = doc["index"]
    get = lambda i: index.get(str(i))
    seen = set()
    types, functions = {}, {}

    def visit(item_id, path):
        item = get(item_id)
        if item is None or item.get("crate_id") != 0 or item_id in seen:
            return
        if item["visibility"] != "public" and item_id != doc["root"]:
            return
        seen.add(item_id)
        k = kind(item)
        name = item["name"]
        if k == "module":
            for child in item["inner"]["module"]["items"]:
                visit(child, path + [name] if item_id != doc["root"] else [name])
        elif k == "use":
            use = item["inner"]["use"]
            target = use.get("id")
            if target is None:
                return
            if use["is_glob"]:
                target_item = get(target)
                if target_item and kind(target_item) == "module":
                    for child in target_item["inner"]["module"]["items"]:
                        visit(child, path)
            else:
                visit(target, path)
        elif k in ("struct", "enum", "trait"):
            full = "::".join(path + [name])
            types[full] = item
            if k == "trait":
                for member in item["inner"]["trait"]["items"]:
                    m = get(member)
                    if m and kind(m) == "function":
                        functions[full + "::" + m["name"]] = m
            else:
                for impl_id in item["inner"][k]["impls"]:
                    impl = get(impl_id)
                    if impl is None or impl.get("crate_id") != 0:
                        continue
                    inner = impl["inner"]["impl"]
                    if inner["trait"] is not None or inner["is_synthetic"] or inner["blanket_impl"]:
                        continue
                    for member in inner["items"]:
                        m = get(member)
                        if m and kind(m) == "function" and m["visibility"] == "public":
                            functions[full + "::" + m["name"]] = m
        elif k == "function":
            functions["::".join(path + [name])] = item

    visit(doc["root"], [])
    # Macro-generated items: three or more items sharing one span.
    spans = collections.Counter(span_key(i) for i in index.values() if i.get("crate_id") == 0)
    generated = lambda item: spans[span_key(item)] >= 3
    types = {n: i for n, i in types.items() if not generated(i)}
    functions = {n: i for n, i in functions.items() if not generated(i)}
    return types, functions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true")
    parser.add_argument("--min-functions", type=float)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # A build directory of its own for the JSON build, inside the ignored
    # target directory.
    target_dir = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target")), "rustdoc-json")
    types, functions = walk(build_json(root, target_dir))
    traits = {n: i for n, i in types.items() if kind(i) == "trait"}
    types = {n: i for n, i in types.items() if kind(i) != "trait"}
    type_missing = sorted(n for n, i in types.items() if not has_example(i.get("docs")))
    trait_missing = sorted(n for n, i in traits.items() if not has_example(i.get("docs")))
    fn_missing = sorted(n for n, i in functions.items() if not has_example(i.get("docs")))
    type_with = len(types) - len(type_missing)
    trait_with = len(traits) - len(trait_missing)
    fn_with = len(functions) - len(fn_missing)
    fn_pct = 100.0 * fn_with / max(len(functions), 1)
    print(f"types (struct, enum) with an example: {type_with} of {len(types)}")
    print(f"traits with an example: {trait_with} of {len(traits)}")
    print(f"functions and methods with an example: {fn_with} of {len(functions)} ({fn_pct:.1f}%)")
    if args.missing:
        for n in type_missing:
            print(f"  type without an example: {n}")
        for n in trait_missing:
            print(f"  trait without an example: {n}")
        for n in fn_missing:
            print(f"  function without an example: {n}")
    if args.min_functions is not None and (type_missing or trait_missing or fn_pct < args.min_functions):
        print(f"below the bar: every type, every trait and {args.min_functions}% of functions", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
