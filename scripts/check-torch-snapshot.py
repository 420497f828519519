#!/usr/bin/env python3
"""Checks a pool's torch snapshot pickle (DevicePool::write_torch_snapshot)
against what PyTorch's memory visualizer reads, with the standard library
only (no torch needed).

Usage: check-torch-snapshot.py SNAPSHOT.pickle

- it loads with `pickle`, and every opcode in it is one the web viewer's
  own unpickler (torch/utils/viz/MemoryViz.js) decodes;
- the top level has `segments` and `device_traces`; each segment has the
  keys `_memory_viz.py` and the viewer read, and its blocks cover it in
  address order (the viewer places each block after the previous one);
- each trace entry has `action`, `addr`, `size`, `stream`, `time_us` and
  `frames`, and `oom` entries `device_free`.
Exits non-zero, naming the first problem, when a check fails.
"""
import pickle
import pickletools
import sys

# The opcodes MemoryViz.js's unpickler handles (by name, as pickletools
# names them).
VIEWER_OPCODES = {
    "PROTO", "APPEND", "APPENDS", "LIST", "TUPLE", "NEWFALSE", "NEWTRUE",
    "NONE", "BINGET", "BININT", "BININT1", "BININT2", "EMPTY_DICT",
    "EMPTY_LIST", "FRAME", "LONG1", "LONG_BINGET", "MARK", "MEMOIZE",
    "BINPUT", "LONG_BINPUT", "SETITEMS", "SETITEM", "DICT",
    "SHORT_BINUNICODE", "BINUNICODE", "STOP", "EMPTY_TUPLE", "TUPLE1",
    "TUPLE2", "TUPLE3", "BINFLOAT",
}
SEGMENT_KEYS = ["device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "blocks"]
BLOCK_KEYS = ["address", "size", "requested_size", "state", "frames"]
TRACE_KEYS = ["action", "addr", "size", "stream", "time_us", "frames"]
STATES = {"active_allocated", "active_pending_free", "inactive"}


def fail(message):
    print(f"check-torch-snapshot: {message}", file=sys.stderr)
    sys.exit(1)


def main(path):
    data = open(path, "rb").read()
    used = {op.name for op, _, _ in pickletools.genops(data)}
    if not used <= VIEWER_OPCODES:
        fail(f"opcodes the web viewer cannot read: {sorted(used - VIEWER_OPCODES)}")
    snapshot = pickle.loads(data)
    for key in ("segments", "device_traces"):
        if key not in snapshot:
            fail(f"no `{key}`")
    for segment in snapshot["segments"]:
        for key in SEGMENT_KEYS:
            if key not in segment:
                fail(f"segment without `{key}`: {segment}")
        address = segment["address"]
        for block in segment["blocks"]:
            for key in BLOCK_KEYS:
                if key not in block:
                    fail(f"block without `{key}`: {block}")
            if block["address"] != address:
                fail(f"block at {block['address']}, expected {address}")
            if block["state"] not in STATES:
                fail(f"block state {block['state']}")
            address += block["size"]
        if address != segment["address"] + segment["total_size"]:
            fail(f"the blocks of segment {segment['address']} do not cover it")
        if segment["device"] >= len(snapshot["device_traces"]):
            fail(f"no trace list for device {segment['device']}")
    for trace in snapshot["device_traces"]:
        for entry in trace:
            for key in TRACE_KEYS:
                if key not in entry:
                    fail(f"trace entry without `{key}`: {entry}")
            if entry["action"] == "oom" and "device_free" not in entry:
                fail("oom entry without `device_free`")
    entries = sum(len(trace) for trace in snapshot["device_traces"])
    print(f"ok: {len(snapshot['segments'])} segments, {entries} trace entries, opcodes {sorted(used)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: check-torch-snapshot.py SNAPSHOT.pickle")
    main(sys.argv[1])
