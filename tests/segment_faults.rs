//! `ExpandableSegment` is transactional: each runtime call of a grow or a
//! shrink is failed in turn (fault injection), and the segment must be
//! exactly as before — size, spare chunks, the data of the mapped part,
//! and the runtime objects alive — with the error returned, and it must
//! keep working. A second failure while undoing leaves it consistent, and
//! an `OwnedMapping` whose unmap fails never lets its range or memory go.
//! Software device only (fault injection); one test at a time, because
//! faults are process-wide.

mod common;

use ascend::sys::soft::{self, LiveResource};
use ascend::sys::{self};
use ascend::vmm::{ExpandableSegment, OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Error, ErrorCode};
use common::on_software;
use std::sync::{Arc, Mutex, MutexGuard};

const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

/// The calls a grow or a shrink can make.
const CALLS: [&str; 4] = [
    "aclrtMemGetAllocationGranularity",
    "aclrtMallocPhysical",
    "aclrtMapMem",
    "aclrtUnmapMem",
];

static SERIAL: Mutex<()> = Mutex::new(());

fn start() -> Option<(MutexGuard<'static, ()>, PhysicalMemProp, usize)> {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !on_software() {
        eprintln!("fault injection needs the software device; skipped");
        return None;
    }
    soft::clear_faults();
    let prop = PhysicalMemProp::device(&common::device());
    let chunk = prop.round_up(1).expect("granularity");
    Some((guard, prop, chunk))
}

/// What must not change when an operation fails.
#[derive(Debug, PartialEq)]
struct Snapshot {
    size: usize,
    spare: usize,
    data: Vec<u32>,
    live: Vec<(u64, u64)>,
}

fn snapshot(segment: &ExpandableSegment, since: u64) -> Snapshot {
    let mut live: Vec<(u64, u64)> = soft::live_since(since)
        .iter()
        .map(|resource: &LiveResource| (resource.id, resource.bytes))
        .collect();
    live.sort_unstable();
    Snapshot {
        size: segment.size(),
        spare: segment.spare_chunks(),
        data: segment.as_slice::<u32>().expect("view").to_vec().expect("read"),
        live,
    }
}

/// A segment of six chunks with `mapped` chunks of known data and `spare`
/// spare chunks.
fn fixture(prop: &PhysicalMemProp, chunk: usize, mapped: usize, spare: usize) -> ExpandableSegment {
    let mut segment = ExpandableSegment::new(prop, 6 * chunk, chunk).expect("reserve");
    segment.grow((mapped + spare) * chunk).expect("grow");
    let words = segment.size() / 4;
    let data: Vec<u32> = (0..words as u32).map(|word| word.wrapping_mul(2_654_435_761)).collect();
    segment
        .as_mut_slice::<u32>()
        .expect("view")
        .write_from_host(&data)
        .expect("write");
    segment.shrink(spare * chunk).expect("shrink");
    segment
}

/// Runs `operation` on a fresh fixture with the `nth` call of `api`
/// failing, for every `nth` until the operation no longer reaches it, and
/// checks the outcome each time. Returns how many calls failed.
fn sweep(
    prop: &PhysicalMemProp,
    chunk: usize,
    (mapped, spare): (usize, usize),
    operation: impl Fn(&mut ExpandableSegment) -> ascend::Result<()>,
) -> usize {
    let mut failed = 0;
    for api in CALLS {
        for nth in 1.. {
            let since = soft::sequence_now();
            let misuse = soft::MisuseWatch::start();
            let mut segment = fixture(prop, chunk, mapped, spare);
            let before = snapshot(&segment, since);
            soft::inject_fault(api, nth, CODE).expect("arm");
            let outcome = operation(&mut segment);
            let fired = soft::armed_faults().is_empty();
            soft::clear_faults();
            if !fired {
                outcome.unwrap_or_else(|error| panic!("{api} #{nth} did not fire, yet: {error}"));
                break;
            }
            failed += 1;
            let code = outcome.expect_err("a failed call must fail the operation").code();
            assert_eq!(code, Some(ErrorCode(CODE)), "{api} #{nth}");
            assert_eq!(snapshot(&segment, since), before, "{api} #{nth}: the segment changed");
            // It still works.
            operation(&mut segment).unwrap_or_else(|error| panic!("{api} #{nth}, then again: {error}"));
            drop(segment);
            assert_eq!(soft::live_since(since), [], "{api} #{nth}: leaked");
            assert_eq!(misuse.seen(), [], "{api} #{nth}: misuse");
        }
    }
    failed
}

#[test]
fn a_failed_grow_leaves_the_segment_as_it_was() {
    let Some((_serial, prop, chunk)) = start() else { return };
    // One spare chunk and two new ones: a granularity query, an allocation
    // and a map per new chunk, a map for the spare one.
    let failed = sweep(&prop, chunk, (2, 1), |segment| segment.grow(3 * chunk));
    assert_eq!(failed, 2 + 2 + 3, "each call of the grow was failed once");
}

#[test]
fn a_failed_shrink_leaves_the_segment_as_it_was() {
    let Some((_serial, prop, chunk)) = start() else { return };
    let failed = sweep(&prop, chunk, (4, 0), |segment| segment.shrink(3 * chunk));
    assert_eq!(failed, 3, "each unmap of the shrink was failed once");
}

#[test]
fn a_failure_while_undoing_leaves_a_consistent_segment() {
    let Some((_serial, prop, chunk)) = start() else { return };
    let since = soft::sequence_now();
    let misuse = soft::MisuseWatch::start();
    // Grow: the second new chunk cannot be allocated, and the first cannot
    // be unmapped again: the segment keeps it.
    let mut segment = fixture(&prop, chunk, 1, 0);
    soft::inject_fault("aclrtMallocPhysical", 2, CODE).unwrap();
    soft::inject_fault("aclrtUnmapMem", 1, CODE).unwrap();
    assert!(segment.grow(2 * chunk).is_err());
    soft::clear_faults();
    assert_eq!((segment.size(), segment.spare_chunks()), (2 * chunk, 0));
    segment.as_mut_slice::<u8>().unwrap().fill_bytes(1).unwrap();
    // Shrink: the second unmap fails, and the first chunk cannot be mapped
    // again: it becomes spare.
    segment.grow(chunk).unwrap();
    assert_eq!(segment.size(), 3 * chunk);
    soft::inject_fault("aclrtUnmapMem", 2, CODE).unwrap();
    soft::inject_fault("aclrtMapMem", 1, CODE).unwrap();
    assert!(segment.shrink(2 * chunk).is_err());
    soft::clear_faults();
    assert_eq!((segment.size(), segment.spare_chunks()), (2 * chunk, 1));
    segment.grow(chunk).unwrap();
    segment.as_mut_slice::<u8>().unwrap().fill_bytes(2).unwrap();
    drop(segment);
    assert_eq!(soft::live_since(since), []);
    assert_eq!(misuse.seen(), []);
}

#[test]
fn chunks_a_failed_undo_leaves_spare_are_mapped_back_where_they_were() {
    let Some((_serial, prop, chunk)) = start() else { return };
    let mut segment = fixture(&prop, chunk, 4, 0);
    let data = segment.as_slice::<u32>().unwrap().to_vec().unwrap();
    // The shrink unmaps the last two chunks, fails on the second; mapping
    // the third back fails too: the last two become spare.
    soft::inject_fault("aclrtUnmapMem", 3, CODE).unwrap();
    soft::inject_fault("aclrtMapMem", 1, CODE).unwrap();
    assert!(segment.shrink(3 * chunk).is_err());
    soft::clear_faults();
    assert_eq!((segment.size(), segment.spare_chunks()), (2 * chunk, 2));
    // Growing maps them back in address order, with their contents.
    segment.grow(2 * chunk).unwrap();
    assert_eq!(segment.spare_chunks(), 0);
    assert!(
        segment.as_slice::<u32>().unwrap().to_vec().unwrap() == data,
        "a chunk came back at another address"
    );
}

#[test]
fn a_mapping_whose_unmap_fails_keeps_its_range_and_memory() {
    let Some((_serial, prop, chunk)) = start() else { return };
    let since = soft::sequence_now();
    let misuse = soft::MisuseWatch::start();
    let range = Arc::new(VirtualRange::reserve(chunk).unwrap());
    let physical = Arc::new(PhysicalAlloc::new(&prop, chunk).unwrap());
    let mapping = OwnedMapping::new(range, 0, physical).unwrap();
    soft::inject_fault("aclrtUnmapMem", 1, CODE).unwrap();
    let refused = mapping.unmap().expect_err("the unmap fails");
    assert!(matches!(
        refused.error,
        Error::Acl {
            api: "aclrtUnmapMem",
            ..
        }
    ));
    // Given back; dropping it retries the unmap.
    let address = refused.mapping.address();
    soft::inject_fault("aclrtUnmapMem", 1, CODE).unwrap();
    drop(refused);
    // Still mapped: the reservation and the memory stay, nothing is
    // released or freed under the mapping.
    let kinds: Vec<_> = soft::live_since(since).iter().map(|resource| resource.kind).collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(misuse.seen(), []);
    // Clean up through the raw calls the safe layer gave up.
    // SAFETY: the mapping the failed unmaps left; the leaked handle and
    // range are released after it.
    unsafe {
        assert_eq!(sys::aclrtUnmapMem(address), sys::ACL_SUCCESS);
        for resource in soft::live_since(since) {
            match resource.kind {
                soft::ResourceKind::PhysicalAllocation => {
                    assert_eq!(sys::aclrtFreePhysical(resource.id as usize as *mut _), sys::ACL_SUCCESS);
                }
                soft::ResourceKind::Reservation => {
                    assert_eq!(
                        sys::aclrtReleaseMemAddress(resource.id as usize as *mut _),
                        sys::ACL_SUCCESS
                    );
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(soft::live_since(since), []);
}
