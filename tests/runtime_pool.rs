//! [`RuntimePool`]: the runtime's stream-ordered pool behind `Ordered`
//! allocations. Reuse on the freeing stream, data across streams, the
//! statistics, trimming, `max_size`, the pool outliving its handle, and a
//! model of random allocations, writes, copies, reads and frees on three
//! streams with synchronisations and event waits: every read sees the last
//! value written, no address is handed out twice while live, and (software
//! device) the sanitizer reports nothing and nothing is left live.

mod common;

use ascend::pool::{RuntimePool, RuntimePoolBuf, RuntimePoolConfig};
use ascend::stream::{EventFlags, Ordered, Stream};
use ascend::testing::{SanitizerChecks, on_software_device, on_software_device_sanitized};
use ascend::{Device, Error, ErrorCode, Event};
use common::{device, on_software, shared_stream, software_only};
use proptest::prelude::*;
use std::sync::Arc;

const MIB2: usize = 2 << 20;

/// Runs `body` under the software device's leak check (and the sanitizer
/// when `sanitized`), or plainly on hardware.
fn checked<R>(sanitized: bool, body: impl FnOnce() -> R) -> R {
    if !on_software() {
        return body();
    }
    if sanitized {
        on_software_device_sanitized(SanitizerChecks::all(), body)
    } else {
        on_software_device(body)
    }
}

fn address<T: bytemuck::Pod>(buf: &Ordered<RuntimePoolBuf<T>>) -> usize {
    buf.view().device_ptr() as usize
}

#[test]
fn pool_types_are_shareable() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<RuntimePool>();
    shareable::<Ordered<RuntimePoolBuf<f32>>>();
    shareable::<Arc<Ordered<RuntimePoolBuf<u8>>>>();
}

#[test]
fn reuse_on_the_freeing_stream() {
    checked(true, || {
        let device = device();
        let stream = shared_stream(&device);
        let pool = RuntimePool::new(&device, RuntimePoolConfig::default()).unwrap();
        let first = pool.alloc::<u8>(1000, &stream).unwrap();
        first.fill_bytes(3, &stream).unwrap();
        let at = address(&first);
        drop(first);
        let again = pool.alloc::<u8>(1000, &stream).unwrap();
        software_only(|| assert_eq!(address(&again), at));
        again.fill_bytes(4, &stream).unwrap();
        assert_eq!(again.view().to_vec::<u8>().unwrap(), vec![4; 1000]);
    });
}

#[test]
fn data_flows_across_streams() {
    checked(true, || {
        let device = device();
        let (one, two) = (shared_stream(&device), shared_stream(&device));
        let pool = RuntimePool::new(&device, RuntimePoolConfig::default()).unwrap();
        for round in 0..4u32 {
            let source = Arc::new(pool.alloc::<u32>(4096, &one).unwrap());
            source.fill_u32(round, &one).unwrap();
            let copy = pool.alloc::<u32>(4096, &two).unwrap();
            copy.copy_from_device(&source, &two).unwrap();
            drop(source); // freed on `one` after `two` has read it
            assert_eq!(copy.view().to_vec::<u32>().unwrap(), vec![round; 4096]);
        }
    });
}

#[test]
fn stats_trim_and_threshold() {
    checked(false, || {
        let device = device();
        let stream = shared_stream(&device);
        let config = RuntimePoolConfig {
            max_size: 8 * MIB2,
            ..RuntimePoolConfig::default()
        };
        let pool = RuntimePool::new(&device, config).unwrap();
        pool.set_release_threshold(MIB2 as u64).unwrap();
        let blocks: Vec<_> = (0..3).map(|_| pool.alloc::<u8>(MIB2, &stream).unwrap()).collect();
        let stats = pool.stats().unwrap();
        assert_eq!(stats.used_current, 3 * MIB2 as u64);
        assert!(stats.reserved_current >= stats.used_current);
        assert!(
            matches!(pool.trim_to(0), Err(Error::Acl { .. })),
            "below the used bytes"
        );
        drop(blocks);
        stream.synchronize().unwrap();
        let stats = pool.stats().unwrap();
        assert_eq!(stats.used_current, 0);
        assert_eq!(stats.used_high, 3 * MIB2 as u64);
        pool.trim_to(0).unwrap();
        software_only(|| assert_eq!(pool.stats().unwrap().reserved_current, 0));
        assert!(pool.set_release_threshold(1 << 40).is_err());
    });
}

#[test]
fn max_size_is_the_limit() {
    checked(false, || {
        let device = device();
        let stream = shared_stream(&device);
        let config = RuntimePoolConfig {
            max_size: 2 * MIB2,
            ..RuntimePoolConfig::default()
        };
        let pool = RuntimePool::new(&device, config).unwrap();
        let a = pool.alloc::<u8>(MIB2, &stream).unwrap();
        let b = pool.alloc::<u8>(MIB2, &stream).unwrap();
        let refused = pool.alloc::<u8>(1, &stream).unwrap_err();
        software_only(|| assert_eq!(refused.code(), Some(ErrorCode::RT_INTERNAL_ERROR)));
        drop(b);
        pool.alloc::<u8>(16, &stream).unwrap();
        drop(a);
        assert!(matches!(
            pool.alloc::<u64>(usize::MAX / 4, &stream),
            Err(Error::InvalidArgument { .. })
        ));
    });
}

/// The pool lives while an allocation does; the last one destroys it (the
/// leak check of the software device sees nothing left).
#[test]
fn allocations_keep_the_pool() {
    checked(true, || {
        let device = device();
        let stream = shared_stream(&device);
        let pool = RuntimePool::new(&device, RuntimePoolConfig::default()).unwrap();
        let buf = Arc::new(pool.alloc::<u16>(512, &stream).unwrap());
        drop(pool);
        buf.fill_bytes(9, &stream).unwrap();
        assert_eq!(buf.view().to_vec::<u8>().unwrap(), vec![9; 1024]);
        let inner = Arc::into_inner(buf).unwrap().into_inner().unwrap();
        assert_eq!(inner.len(), 512);
    });
}

#[derive(Debug, Clone)]
enum Step {
    /// Allocate this many bytes on a stream and write a byte there.
    Alloc(usize, usize, u8),
    /// Write a byte over a live allocation on a stream.
    Write(usize, usize, u8),
    /// Copy the first of two live allocations into the second on a stream.
    Copy(usize, usize, usize),
    /// Read a live allocation on the host.
    Read(usize),
    /// Drop a live allocation.
    Free(usize),
    /// Synchronise a stream.
    Sync(usize),
    /// Make a stream wait for an event recorded on another.
    EventWait(usize, usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (1usize..3 * MIB2, 0usize..3, any::<u8>()).prop_map(|(bytes, stream, byte)| Step::Alloc(bytes, stream, byte)),
        3 => (any::<usize>(), 0usize..3, any::<u8>()).prop_map(|(index, stream, byte)| Step::Write(index, stream, byte)),
        2 => (any::<usize>(), any::<usize>(), 0usize..3).prop_map(|(from, to, stream)| Step::Copy(from, to, stream)),
        2 => any::<usize>().prop_map(Step::Read),
        4 => any::<usize>().prop_map(Step::Free),
        1 => (0usize..3).prop_map(Step::Sync),
        1 => (0usize..3, 0usize..3).prop_map(|(from, to)| Step::EventWait(from, to)),
    ];
    proptest::collection::vec(step, 1..40)
}

struct Live {
    buf: Arc<Ordered<RuntimePoolBuf<u8>>>,
    byte: u8,
}

fn run_model(device: &Device, steps: &[Step]) {
    let streams: Vec<Arc<Stream>> = (0..3).map(|_| shared_stream(device)).collect();
    let config = RuntimePoolConfig {
        follow_event_dependencies: true,
        ..RuntimePoolConfig::default()
    };
    let pool = RuntimePool::new(device, config).unwrap();
    let mut live: Vec<Live> = Vec::new();
    for step in steps {
        match *step {
            Step::Alloc(bytes, stream, byte) => {
                let buf = Arc::new(pool.alloc::<u8>(bytes, &streams[stream]).unwrap());
                buf.fill_bytes(byte, &streams[stream]).unwrap();
                let start = address(&buf);
                for other in &live {
                    let (other_start, other_len) = (address(&other.buf), other.buf.byte_len());
                    assert!(
                        start + bytes <= other_start || other_start + other_len <= start,
                        "{start:#x}+{bytes} overlaps a live allocation at {other_start:#x}+{other_len}"
                    );
                }
                live.push(Live { buf, byte });
            }
            Step::Write(index, stream, byte) if !live.is_empty() => {
                let count = live.len();
                let entry = &mut live[index % count];
                entry.buf.fill_bytes(byte, &streams[stream]).unwrap();
                entry.byte = byte;
            }
            Step::Copy(from, to, stream) if !live.is_empty() => {
                let (from, to) = (from % live.len(), to % live.len());
                if from == to || live[from].buf.byte_len() != live[to].buf.byte_len() {
                    // Whole copies only: a part would leave two values in `to`.
                    continue;
                }
                let source = Arc::clone(&live[from].buf);
                live[to].buf.copy_from_device(&source, &streams[stream]).unwrap();
                live[to].byte = live[from].byte;
            }
            Step::Read(index) if !live.is_empty() => {
                let entry = &live[index % live.len()];
                let bytes = entry.buf.view().to_vec::<u8>().unwrap();
                assert!(bytes.iter().all(|&b| b == entry.byte), "a read saw another value");
            }
            Step::Free(index) if !live.is_empty() => {
                live.swap_remove(index % live.len());
            }
            Step::Sync(stream) => streams[stream].synchronize().unwrap(),
            Step::EventWait(from, to) => {
                let event = Event::with_flags(device, EventFlags::SYNC).unwrap();
                event.record(&streams[from]).unwrap();
                streams[to].wait_event(&event).unwrap();
            }
            _ => {}
        }
    }
    for entry in &live {
        let bytes = entry.buf.view().to_vec::<u8>().unwrap();
        assert!(bytes.iter().all(|&b| b == entry.byte), "the end: another value");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn reuse_follows_stream_order(steps in steps()) {
        checked(true, || run_model(&device(), &steps));
    }
}
