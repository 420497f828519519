//! The pool's PyTorch-visualizer pickle (`DevicePool::torch_snapshot`, the
//! feature `torch-snapshot`): its schema, its trace of the memory history,
//! and Python reading it as the visualizer does. Every test body runs as
//! well on hardware; the out-of-memory test asks for more than the pool
//! reserves, which any device refuses. (The history itself and its
//! timeline SVG: `pool_history.rs`.)

use ascend::pool::{DevicePool, HistoryAction, HistoryOptions, PoolConfig};
use ascend::{Device, Error};
use serde_pickle::{DeOptions, HashableValue, Value};
use std::collections::BTreeMap;

fn pool() -> DevicePool {
    let device = Device::new(0).expect("device 0");
    DevicePool::new(&device, PoolConfig::default()).expect("pool")
}

fn load(pickle: &[u8]) -> Value {
    serde_pickle::value_from_slice(pickle, DeOptions::new()).expect("the pickle loads")
}

fn dict(value: &Value) -> &BTreeMap<HashableValue, Value> {
    match value {
        Value::Dict(dict) => dict,
        other => panic!("not a dict: {other:?}"),
    }
}

fn list(value: &Value) -> &[Value] {
    match value {
        Value::List(list) => list,
        other => panic!("not a list: {other:?}"),
    }
}

fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    dict(value)
        .get(&HashableValue::String(key.to_owned()))
        .unwrap_or_else(|| panic!("no `{key}` in {value:?}"))
}

fn int(value: &Value) -> u64 {
    match value {
        Value::I64(n) => u64::try_from(*n).expect("not negative"),
        Value::Int(n) => u64::try_from(n).expect("fits u64"),
        other => panic!("not an int: {other:?}"),
    }
}

fn string(value: &Value) -> &str {
    match value {
        Value::String(s) => s,
        other => panic!("not a string: {other:?}"),
    }
}

/// The trace entries of device 0, with the keys `_memory_viz.py` and
/// `MemoryViz.js` read checked on each.
fn trace(snapshot: &Value) -> Vec<Value> {
    let traces = list(field(snapshot, "device_traces"));
    let entries = list(&traces[0]).to_vec();
    for entry in &entries {
        for key in ["action", "addr", "size", "stream", "time_us", "frames"] {
            field(entry, key);
        }
    }
    entries
}

#[test]
fn the_replayed_trace_equals_the_statistics_at_every_step() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let mut steps: Vec<(usize, u64, u64)> = Vec::new();
    let mut note = |pool: &DevicePool| {
        let stats = pool.stats();
        let events = pool.memory_history().events.len();
        steps.push((events, stats.allocated as u64, stats.reserved as u64));
    };
    let mut live = Vec::new();
    for round in 0..3 {
        for bytes in [1000, 4096, 4096, 3 << 20, 700 << 10] {
            live.push(pool.alloc(bytes + round).expect("alloc"));
            note(&pool);
        }
        // A small block dropped and taken again: a thread-cache hit when
        // not recording; it must still show in the history.
        drop(live.remove(1));
        note(&pool);
        live.push(pool.alloc(4096 + round).expect("alloc"));
        note(&pool);
        live.truncate(2);
        note(&pool);
        pool.empty_cache().expect("empty_cache");
        note(&pool);
    }
    drop(live);
    note(&pool);
    pool.empty_cache().expect("empty_cache");
    note(&pool);

    let snapshot = load(&pool.torch_snapshot().expect("pickle"));
    let entries = trace(&snapshot);
    let (mut allocated, mut reserved, mut at) = (0u64, 0u64, 0usize);
    for (events, want_allocated, want_reserved) in steps {
        for entry in &entries[at..events] {
            let size = int(field(entry, "size"));
            match string(field(entry, "action")) {
                "alloc" => allocated += size,
                "free_completed" => allocated -= size,
                "segment_map" => reserved += size,
                "segment_unmap" => reserved -= size,
                _ => {}
            }
        }
        at = events;
        assert_eq!(
            (allocated, reserved),
            (want_allocated, want_reserved),
            "after {events} events"
        );
    }
    assert_eq!(at, entries.len());
    let actions: Vec<&str> = entries.iter().map(|entry| string(field(entry, "action"))).collect();
    assert_eq!(
        actions.iter().filter(|&&a| a == "alloc").count(),
        18,
        "every allocation, hits included"
    );
    assert!(actions.contains(&"segment_unmap"));
}

#[test]
fn the_snapshot_has_the_schema_the_visualizer_reads() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let small = pool.alloc(4096).expect("alloc");
    let large = pool.alloc_tagged(3 << 20, "weights").expect("alloc");
    let stats = pool.stats();
    let snapshot = load(&pool.torch_snapshot().expect("pickle"));
    let segments = list(field(&snapshot, "segments"));
    assert_eq!(
        segments.len(),
        2,
        "the default tag's small and the weights' large segment"
    );
    let mut allocated = 0;
    let mut reserved = 0;
    for segment in segments {
        for key in [
            "device",
            "address",
            "total_size",
            "allocated_size",
            "active_size",
            "requested_size",
            "stream",
            "segment_type",
            "segment_pool_id",
            "is_expandable",
            "frames",
            "blocks",
            "tag",
        ] {
            field(segment, key);
        }
        assert_eq!(int(field(segment, "device")), 0);
        // The viewer places each block after the previous one.
        let (mut address, mut sum) = (int(field(segment, "address")), 0);
        for block in list(field(segment, "blocks")) {
            for key in ["address", "size", "requested_size", "state", "frames"] {
                field(block, key);
            }
            assert_eq!(int(field(block, "address")), address);
            let size = int(field(block, "size"));
            address += size;
            sum += size;
            let state = string(field(block, "state"));
            assert!(["active_allocated", "inactive"].contains(&state), "{state}");
            if state == "active_allocated" {
                allocated += size;
            }
        }
        assert_eq!(sum, int(field(segment, "total_size")));
        reserved += sum;
    }
    assert_eq!((allocated, reserved), (stats.allocated as u64, stats.reserved as u64));
    let tags: Vec<&str> = segments.iter().map(|s| string(field(s, "tag"))).collect();
    assert_eq!(tags, ["default", "weights"]);
    let types: Vec<&str> = segments.iter().map(|s| string(field(s, "segment_type"))).collect();
    assert_eq!(types, ["small", "large"]);
    drop((small, large));
}

#[test]
fn the_ring_keeps_the_newest_max_entries_and_replays_from_the_dropped() {
    let pool = pool();
    let options = HistoryOptions {
        max_entries: 5,
        ..HistoryOptions::default()
    };
    pool.record_memory_history(Some(options)).expect("recording");
    let keep = pool.alloc(4096).expect("alloc");
    for _ in 0..10 {
        drop(pool.alloc(8192).expect("alloc"));
    }
    let history = pool.memory_history();
    assert_eq!(history.events.len(), 5);
    assert_eq!(
        history.dropped,
        2 + 10 * 3 - 5,
        "a map, the kept alloc, 10 x (alloc, 2 frees)"
    );
    let stats = pool.stats();
    assert_eq!(
        history.replay().last().copied(),
        Some((stats.allocated, stats.reserved))
    );
    assert_eq!(
        history.start_allocated,
        4096 + 8192,
        "the dropped events are in the start"
    );
    let trace_len = trace(&load(&pool.torch_snapshot().expect("pickle"))).len();
    assert_eq!(trace_len, 5);
    drop(keep);
}

#[test]
fn sleep_wake_empty_cache_and_out_of_memory_are_recorded() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let weights = pool.alloc_tagged(4096, "weights").expect("alloc");
    pool.sleep(&["weights"]).expect("sleep");
    pool.wake().expect("wake");
    pool.empty_cache().expect("empty_cache");
    let too_big = pool.alloc(64 << 30);
    assert!(matches!(too_big, Err(Error::PoolExhausted { .. })));
    let history = pool.memory_history();
    let actions: Vec<HistoryAction> = history.events.iter().map(|event| event.action).collect();
    let position = |action| actions.iter().position(|&a| a == action).expect("recorded");
    let (sleep, wake) = (position(HistoryAction::Sleep), position(HistoryAction::Wake));
    assert!(sleep < wake);
    assert_eq!(
        actions[sleep - 1],
        HistoryAction::SegmentUnmap,
        "the sleep's unmap first"
    );
    assert_eq!(actions[wake - 1], HistoryAction::SegmentMap, "the wake's map first");
    let oom = &history.events[position(HistoryAction::Oom)];
    assert_eq!(oom.size, 64 << 30);
    assert!(actions.contains(&HistoryAction::EmptyCache));

    let entries = trace(&load(&pool.torch_snapshot().expect("pickle")));
    let metadata: Vec<&str> = entries
        .iter()
        .filter(|entry| string(field(entry, "action")) == "user_defined")
        .map(|entry| string(field(entry, "user_metadata")))
        .collect();
    assert_eq!(metadata, ["sleep", "wake", "empty_cache"]);
    let oom = entries
        .iter()
        .find(|entry| string(field(entry, "action")) == "oom")
        .expect("oom");
    field(oom, "device_free");
    drop(weights);
}

#[test]
fn backtraces_become_frames_when_asked_for() {
    let pool = pool();
    let options = HistoryOptions {
        backtraces: true,
        ..HistoryOptions::default()
    };
    pool.record_memory_history(Some(options)).expect("recording");
    let block = pool.alloc(4096).expect("alloc");
    let history = pool.memory_history();
    assert!(history.events.iter().all(|event| event.backtrace.is_some()));
    let snapshot = load(&pool.torch_snapshot().expect("pickle"));
    let alloc = trace(&snapshot)
        .into_iter()
        .find(|entry| string(field(entry, "action")) == "alloc")
        .expect("alloc");
    let frames = list(field(&alloc, "frames"));
    assert!(
        frames
            .iter()
            .any(|frame| string(field(frame, "name")).contains("backtraces_become_frames")),
        "this test is among the frames"
    );
    // The live block's frames are those of its allocation.
    let segment = &list(field(&snapshot, "segments"))[0];
    let live = &list(field(segment, "blocks"))[0];
    assert!(!list(field(live, "frames")).is_empty());
    drop(block);
}

/// Runs `scripts/check-torch-snapshot.py` (the viewer's keys, block layout
/// and the opcodes its own unpickler reads) when `python3` is installed.
#[test]
fn python_reads_the_snapshot_as_the_visualizer_does() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let weights = pool.alloc_tagged(3 << 20, "weights").expect("alloc");
    let small: Vec<_> = (0..4).map(|i| pool.alloc(1000 * (i + 1)).expect("alloc")).collect();
    pool.sleep(&["weights"]).expect("sleep");
    pool.wake().expect("wake");
    drop(pool.alloc(64 << 30));
    let path = std::env::temp_dir().join(format!("pool-history-{}.pickle", std::process::id()));
    pool.write_torch_snapshot(&path).expect("written");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check-torch-snapshot.py");
    let run = std::process::Command::new("python3").arg(script).arg(&path).output();
    let _ = std::fs::remove_file(&path);
    let Ok(output) = run else {
        eprintln!("python3 is not installed: skipped");
        return;
    };
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    drop((weights, small));
}
