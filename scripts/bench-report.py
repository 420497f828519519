#!/usr/bin/env python3
"""Prints the benchmark ratios of the last `cargo bench` run as Markdown.

Each ratio divides the cost of a software-device or safe-layer operation by
the cost of its reference (a plain host copy or fill, a raw `mmap`/`munmap`
pair, the raw `ascend-sys` call, or the 10-mapping case), all measured in the
same run. Reads criterion's estimates from where criterion writes them:
$CRITERION_HOME, else $CARGO_TARGET_DIR/criterion, else target/criterion in
the workspace (the benchmarks are the workspace member `ascend-benches`).

    cargo bench -p ascend-benches && python3 scripts/bench-report.py
"""
import json
import os
import pathlib
import sys


def criterion_dir():
    if os.environ.get("CRITERION_HOME"):
        return pathlib.Path(os.environ["CRITERION_HOME"])
    if os.environ.get("CARGO_TARGET_DIR"):
        return pathlib.Path(os.environ["CARGO_TARGET_DIR"]) / "criterion"
    return pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"


ROOT = criterion_dir()


def mean_ns(*parts):
    path = ROOT.joinpath(*parts, "new", "estimates.json")
    try:
        return json.loads(path.read_text())["mean"]["point_estimate"]
    except (OSError, KeyError, ValueError):
        return None


def fmt_time(ns):
    if ns is None:
        return "n/a"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.1f} ns"


def ratio(value, reference):
    if value is None or reference is None or reference == 0:
        return None
    return value / reference


def verdict(r, goal, higher_is_better):
    if r is None:
        return "n/a"
    ok = r >= goal if higher_is_better else r <= goal
    return f"{r:.2f}× {'✓' if ok else '✗'}"


def table(title, header, rows):
    print(f"### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def main():
    if not ROOT.exists():
        sys.exit(f"no {ROOT}: run `cargo bench -p ascend-benches` first")
    sizes = ["4KiB", "64KiB", "1MiB", "16MiB", "64MiB", "256MiB"]

    rows = []
    for size in sizes:
        reference = mean_ns("copy", "host_memcpy", size)
        row = [size, fmt_time(reference)]
        for kind in ("h2d", "d2h", "d2d", "h2h"):
            # Throughput ratio = reference time / our time (≥ 0.9 is the goal).
            r = ratio(reference, mean_ns("copy", kind, size))
            goal_applies = size not in ("4KiB", "64KiB")
            row.append(verdict(r, 0.9, True) if goal_applies else (f"{r:.2f}×" if r else "n/a"))
        fill_ref = mean_ns("memset", "host_write_bytes", size)
        r = ratio(fill_ref, mean_ns("memset", "device", size))
        row.append(verdict(r, 0.9, True) if size not in ("4KiB", "64KiB") else (f"{r:.2f}×" if r else "n/a"))
        rows.append(row)
    table(
        "Copy and memset bandwidth (software device ÷ plain host copy; goal ≥ 0.9× from 1 MiB)",
        ["size", "host memcpy", "H2D", "D2H", "D2D", "H2H", "memset vs write_bytes"],
        rows,
    )

    rows = []
    for group in ("copy_64B", "memory_info", "map_unmap_2MiB"):
        raw, safe = mean_ns(group, "raw"), mean_ns(group, "safe")
        rows.append([group, fmt_time(raw), fmt_time(safe), verdict(ratio(safe, raw), 1.2, False)])
    table("Safe layer ÷ raw call (goal ≤ 1.2×)", ["operation", "raw", "safe", "ratio"], rows)

    rows = []
    for size in ("2MiB", "64MiB", "1GiB"):
        mmap = mean_ns("vmm", "host_mmap_munmap", size)
        row = [size, fmt_time(mmap)]
        for op in ("reserve_release", "physical_alloc_free"):
            t = mean_ns("vmm", op, size)
            r = ratio(t, mmap)
            row.append(f"{fmt_time(t)} ({r:.2f}×)" if r else "n/a")
        t = mean_ns("vmm", "map_unmap", size)
        row.append(f"{fmt_time(t)} ({verdict(ratio(t, mmap), 2.0, False)})")
        rows.append(row)
    table(
        "VMM latency ÷ raw mmap+munmap of the same size (goal: map+unmap ≤ 2×)",
        ["size", "mmap+munmap", "reserve+release", "physical alloc+free", "map+unmap"],
        rows,
    )

    rows = []
    for bench in ("copy_4KiB", "address_range"):
        base = mean_ns("translation", bench, "10")
        row = [bench, fmt_time(base)]
        for count in ("1000", "100000"):
            t = mean_ns("translation", bench, count)
            row.append(f"{fmt_time(t)} ({verdict(ratio(t, base), 1.5, False)})")
        rows.append(row)
    table(
        "Scaling with live mappings ÷ 10 mappings (goal ≤ 1.5× at 100,000)",
        ["operation", "10 mappings", "1,000", "100,000"],
        rows,
    )

    rows = []
    for size in ("4KiB", "1MiB", "64MiB", "256MiB"):
        mmap = mean_ns("pinned_host", "host_mmap_munmap", size)
        ours = mean_ns("pinned_host", "malloc_free_host", size)
        r = ratio(ours, mmap)
        rows.append([size, fmt_time(mmap), fmt_time(ours), f"{r:.2f}×" if r else "n/a"])
    table("Pinned host allocation + free ÷ mmap+munmap", ["size", "mmap+munmap", "MallocHost+FreeHost", "ratio"], rows)

    memcpy = mean_ns("sleep_wake", "host_memcpy_out_and_back_1GiB")
    ours = mean_ns("sleep_wake", "pool_sleep_wake_1GiB")
    table(
        "Pool sleep + wake of 1 GiB ÷ host memcpy of 1 GiB out and back (goal ≤ 1.25×)",
        ["host memcpy (2 GiB moved)", "sleep + wake", "ratio"],
        [[fmt_time(memcpy), fmt_time(ours), verdict(ratio(ours, memcpy), 1.25, False)]],
    )


if __name__ == "__main__":
    main()
