//! The pool's memory history (`DevicePool::record_memory_history`), its
//! replay and its timeline SVG. Every test body runs as well on hardware.
//! (Its PyTorch-visualizer pickle: `pool_torch_snapshot.rs`.)

use ascend::pool::{DevicePool, HistoryAction, HistoryOptions, PoolConfig};
use ascend::{Device, Error};

fn pool() -> DevicePool {
    let device = Device::new(0).expect("device 0");
    DevicePool::new(&device, PoolConfig::default()).expect("pool")
}

#[test]
fn nothing_is_recorded_while_recording_is_off() {
    let pool = pool();
    drop(pool.alloc(4096).expect("alloc"));
    assert!(pool.memory_history().events.is_empty());
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    drop(pool.alloc(4096).expect("alloc"));
    pool.record_memory_history(None).expect("stop");
    let recorded = pool.memory_history().events.len();
    assert_eq!(recorded, 3);
    drop(pool.alloc(4096).expect("alloc"));
    drop(pool.alloc(3 << 20).expect("alloc"));
    pool.empty_cache().expect("empty_cache");
    let history = pool.memory_history();
    assert_eq!(history.events.len(), recorded, "kept, and nothing added");
    assert!(!history.recording);
    let refused = pool.record_memory_history(Some(HistoryOptions {
        max_entries: 0,
        ..HistoryOptions::default()
    }));
    assert!(matches!(refused, Err(Error::InvalidArgument { .. })));
}

#[test]
fn the_timeline_svg_draws_each_event_and_marks() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let block = pool.alloc_tagged(4096, "kv_cache").expect("alloc");
    pool.sleep(&[]).expect("sleep");
    pool.wake().expect("wake");
    drop(block);
    pool.empty_cache().expect("empty_cache");
    let history = pool.memory_history();
    let svg = history.to_timeline_svg();
    let document = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let polyline = |class: &str| {
        document
            .descendants()
            .find(|node| node.has_tag_name("polyline") && node.attribute("class") == Some(class))
            .and_then(|node| node.attribute("points"))
            .map(|points| points.split_whitespace().count())
    };
    // The start, then two points (across, then up or down) per event.
    let points = 1 + 2 * history.events.len();
    assert_eq!(polyline("allocated"), Some(points));
    assert_eq!(polyline("reserved"), Some(points + 2), "closed along the bottom");
    let marks = document
        .descendants()
        .filter(|node| node.attribute("class") == Some("mark"))
        .count();
    assert_eq!(marks, 3, "sleep, wake, empty_cache");
}

/// Two threads allocating and freeing while recording: every event is
/// recorded under the pool's lock, so the replay ends at the statistics.
#[test]
fn two_threads_record_a_consistent_history() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let kept = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|thread| {
                let pool = &pool;
                scope.spawn(move || {
                    let mut kept = Vec::new();
                    for i in 0..200 {
                        let block = pool.alloc(512 * (1 + (i + thread) % 7)).expect("alloc");
                        if i % 10 == 0 {
                            kept.push(block);
                        }
                    }
                    kept
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("worker"))
            .collect::<Vec<_>>()
    });
    let history = pool.memory_history();
    let stats = pool.stats();
    let allocs = history
        .events
        .iter()
        .filter(|event| event.action == HistoryAction::Alloc)
        .count();
    assert_eq!(allocs, 400);
    assert_eq!(
        history.replay().last().copied(),
        Some((stats.allocated, stats.reserved))
    );
    drop(kept);
}

/// With the knobs on (oversize blocks cached whole, garbage collection
/// under a memory limit, power-of-two rounding), the replayed history still
/// equals the statistics after every step, and the torch-shaped statistics
/// agree with both.
#[test]
fn the_replay_follows_the_knobs() {
    let device = Device::new(0).expect("device 0");
    let mut config = PoolConfig::parse(
        "max_split_size_mb:20,garbage_collection_threshold:0.5,roundup_power2_divisions:4,memory_limit_mb:200",
    )
    .expect("config");
    config.large_chunk = 20 << 20;
    let pool = DevicePool::new(&device, config).expect("pool");
    pool.record_memory_history(Some(HistoryOptions::default()))
        .expect("recording");
    let mut live = Vec::new();
    for (step, bytes) in [24 << 20, 3 << 20, 30 << 20, 5000, 26 << 20, 90 << 20, 1 << 20, 40 << 20]
        .into_iter()
        .enumerate()
    {
        match pool.alloc(bytes) {
            Ok(block) => live.push(block),
            Err(Error::PoolExhausted { .. }) => {}
            Err(other) => panic!("step {step}: {other}"),
        }
        if step % 3 == 2 {
            live.remove(0);
        }
        let stats = pool.stats();
        let replayed = pool.memory_history().replay().last().copied();
        assert_eq!(replayed, Some((stats.allocated, stats.reserved)), "step {step}");
        let torch = pool.memory_stats();
        assert_eq!(torch.all.allocated_bytes.current, stats.allocated as u64, "step {step}");
        assert_eq!(torch.all.reserved_bytes.current, stats.reserved as u64, "step {step}");
    }
    assert!(pool.stats().gc_runs > 0, "the trace passes the threshold");
}

/// A history's fields are public: replaying and drawing one whose totals
/// were edited near `usize::MAX` saturates instead of overflowing.
#[test]
fn an_edited_history_replays_without_overflow() {
    let pool = pool();
    pool.record_memory_history(Some(HistoryOptions::default())).unwrap();
    let block = pool.alloc(4096).unwrap();
    let mut history = pool.memory_history();
    assert!(
        history
            .events
            .iter()
            .any(|event| event.action == HistoryAction::SegmentMap)
    );
    history.start_allocated = usize::MAX;
    history.start_reserved = usize::MAX;
    let last = *history.replay().last().unwrap();
    assert_eq!(last, (usize::MAX, usize::MAX));
    assert!(history.to_timeline_svg().starts_with("<svg"));
    drop(block);
}
