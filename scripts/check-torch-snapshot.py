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
  `frames`, and `oom` entries `device_free`;
- no integer is written in more than 8 bytes (the viewer's unpickler
  reads a longer one as a JavaScript BigInt, which its arithmetic on
  addresses then refuses);
- stepping back through each device's trace from the snapshot's state,
  as the viewer's segment view does, every live block lies inside a
  mapped segment at every step, and every unmapped range was mapped.
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
    used = set()
    for op, arg, position in pickletools.genops(data):
        used.add(op.name)
        # LONG1: the opcode, a length byte, then that many bytes.
        if op.name == "LONG1" and data[position + 1] > 8:
            fail(f"the integer {arg} is written in {data[position + 1]} bytes: the viewer reads it as a BigInt")
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
    for device, trace in enumerate(snapshot["device_traces"]):
        check_history(device, snapshot["segments"], trace)
    entries = sum(len(trace) for trace in snapshot["device_traces"])
    print(f"ok: {len(snapshot['segments'])} segments, {entries} trace entries, opcodes {sorted(used)}")


def check_history(device, segments, trace):
    """Steps back from the snapshot's state through `trace`, undoing each
    event, and checks the segment view's invariant after each step."""
    mapped = [(s["address"], s["address"] + s["total_size"]) for s in segments if s["device"] == device]
    live = {b["address"]: b["size"] for s in segments if s["device"] == device
            for b in s["blocks"] if b["state"] in ("active_allocated", "active_pending_free")}

    def inside(start, end):
        return any(low <= start and end <= high for low, high in mapped)

    for index in range(len(trace) - 1, -1, -1):
        entry = trace[index]
        action, start = entry["action"], entry["addr"]
        end = start + entry["size"]
        if action == "alloc":
            live.pop(start, None)
        elif action == "free_completed":
            live[start] = entry["size"]
        elif action in ("segment_map", "segment_alloc"):
            # Undone: the range goes back to unmapped.
            holder = next((r for r in mapped if r[0] <= start and end <= r[1]), None)
            if holder is None:
                fail(f"event {index}: {action} of {start:#x}+{entry['size']} is not inside a mapped segment")
            mapped.remove(holder)
            mapped.extend(r for r in ((holder[0], start), (end, holder[1])) if r[0] < r[1])
        elif action in ("segment_unmap", "segment_free"):
            mapped.append((start, end))
        for address, size in live.items():
            if not inside(address, address + size):
                fail(f"before event {index} ({action}): the live block {address:#x}+{size} lies in no mapped segment")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: check-torch-snapshot.py SNAPSHOT.pickle")
    main(sys.argv[1])
