//! The owned VMM forms: `OwnedMapping` (a mapping that owns shares of its
//! range and physical memory) and `ExpandableSegment` (one range grown and
//! shrunk chunk by chunk). Data is checked on every backend; which runtime
//! objects are alive is checked on the software device, one test at a time
//! (the lists of live objects are process-wide).

mod common;

use ascend::Error;
use ascend::sys::soft::{self, ResourceKind};
use ascend::vmm::{ExpandableSegment, OwnedMapping, PhysicalAlloc, PhysicalMemProp, SharedSegment, VirtualRange};
use common::{device, software_only};
use std::sync::{Arc, Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn granule() -> (PhysicalMemProp, usize) {
    let prop = PhysicalMemProp::device(&device());
    let granule = prop.round_up(1).unwrap();
    (prop, granule)
}

fn is_invalid_argument<T: std::fmt::Debug>(result: ascend::Result<T>) -> bool {
    matches!(result, Err(Error::InvalidArgument { .. }))
}

/// Whether the software device still has `kind` with `id`, created after
/// `since`.
fn alive(since: u64, kind: ResourceKind, id: u64) -> bool {
    soft::live_since(since)
        .iter()
        .any(|resource| resource.kind == kind && resource.id == id)
}

fn assert_owned_and_shareable<T: Send + Sync + 'static>() {}

#[test]
fn owned_forms_are_static_send_and_sync() {
    let _serial = serial();
    assert_owned_and_shareable::<OwnedMapping>();
    assert_owned_and_shareable::<OwnedMapping<ascend::share::ImportedAlloc>>();
    assert_owned_and_shareable::<ExpandableSegment>();
    assert_owned_and_shareable::<Arc<OwnedMapping>>();
    assert_owned_and_shareable::<Arc<SharedSegment>>();
    assert_owned_and_shareable::<ascend::vmm::SegmentBlock>();
}

#[test]
fn a_mapping_keeps_its_range_and_memory_until_it_is_dropped() {
    let _serial = serial();
    let (prop, granule) = granule();
    let since = soft::sequence_now();
    let range = Arc::new(VirtualRange::reserve(granule).unwrap());
    let physical = Arc::new(PhysicalAlloc::new(&prop, granule).unwrap());
    let (base, handle) = (range.base() as u64, physical.as_raw() as u64);
    let mut mapping = OwnedMapping::new(range, 0, physical).unwrap();
    let data: Vec<u64> = (0..(granule / 8) as u64).map(|word| word * 3).collect();
    mapping.as_mut_slice::<u64>().unwrap().write_from_host(&data).unwrap();
    // The only owners of the range and the memory now are the mapping's
    // shares; it moves to another thread and is read there.
    let shared = Arc::new(mapping);
    let reader = Arc::clone(&shared);
    let read = std::thread::spawn(move || reader.as_slice::<u64>().unwrap().to_vec().unwrap())
        .join()
        .unwrap();
    assert_eq!(read, data);
    software_only(|| {
        assert!(alive(since, ResourceKind::Reservation, base));
        assert!(alive(since, ResourceKind::PhysicalAllocation, handle));
    });
    drop(shared);
    // Unmapped, then memory freed and addresses released, in that order
    // (a release or free under a live mapping would be refused and logged
    // as misuse by the software device).
    software_only(|| {
        assert!(!alive(since, ResourceKind::Reservation, base));
        assert!(!alive(since, ResourceKind::PhysicalAllocation, handle));
        assert!(!alive(since, ResourceKind::Mapping, base));
    });
}

#[test]
fn owned_mappings_follow_the_mapping_rules() {
    let _serial = serial();
    let (prop, granule) = granule();
    let range = Arc::new(VirtualRange::reserve(2 * granule).unwrap());
    let physical = Arc::new(PhysicalAlloc::new(&prop, granule).unwrap());
    assert!(is_invalid_argument(OwnedMapping::new(
        Arc::clone(&range),
        4096,
        Arc::clone(&physical)
    )));
    let first = OwnedMapping::new(Arc::clone(&range), 0, Arc::clone(&physical)).unwrap();
    // The same memory again, or the same place with other memory: refused.
    assert!(is_invalid_argument(OwnedMapping::new(
        Arc::clone(&range),
        granule,
        Arc::clone(&physical)
    )));
    let other = Arc::new(PhysicalAlloc::new(&prop, granule).unwrap());
    assert!(is_invalid_argument(OwnedMapping::new(
        Arc::clone(&range),
        0,
        Arc::clone(&other)
    )));
    // A borrowed mapping of the same memory is refused too.
    assert!(is_invalid_argument(range.map(granule, &*physical)));
    let back = first.unmap().unwrap();
    assert!(Arc::ptr_eq(&back, &physical));
    let again = OwnedMapping::new(Arc::clone(&range), granule, back).unwrap();
    assert_eq!(again.offset(), granule);
}

#[test]
fn a_segment_grows_and_shrinks_at_its_end_with_one_contiguous_view() {
    let _serial = serial();
    let (prop, chunk) = granule();
    let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk).unwrap();
    assert_eq!(
        (segment.size(), segment.capacity(), segment.chunk_size()),
        (0, 4 * chunk, chunk)
    );
    assert_eq!(segment.as_slice::<u8>().unwrap().len(), 0);
    segment.grow(3 * chunk).unwrap();
    let words = 3 * chunk / 4;
    let data: Vec<u32> = (0..words as u32).map(|word| word ^ 0xA5A5_0000).collect();
    // One copy across all three chunks.
    segment.as_mut_slice::<u32>().unwrap().write_from_host(&data).unwrap();
    assert_eq!(segment.as_slice::<u32>().unwrap().to_vec().unwrap(), data);
    // A copy that straddles the first chunk boundary.
    let middle = segment.as_slice::<u32>().unwrap();
    let straddle = middle.slice(chunk / 4 - 8..chunk / 4 + 8).unwrap().to_vec().unwrap();
    assert_eq!(straddle, data[chunk / 4 - 8..chunk / 4 + 8]);
    segment.shrink(2 * chunk).unwrap();
    assert_eq!((segment.size(), segment.spare_chunks()), (chunk, 2));
    assert_eq!(segment.as_slice::<u32>().unwrap().to_vec().unwrap(), data[..chunk / 4]);
    segment.grow(3 * chunk).unwrap();
    assert_eq!((segment.size(), segment.spare_chunks()), (4 * chunk, 0));
    assert_eq!(
        segment
            .as_slice::<u32>()
            .unwrap()
            .slice(..chunk / 4)
            .unwrap()
            .to_vec()
            .unwrap(),
        data[..chunk / 4]
    );
}

#[test]
fn a_segment_refuses_bad_sizes_before_any_call() {
    let _serial = serial();
    let (prop, chunk) = granule();
    assert!(is_invalid_argument(ExpandableSegment::new(&prop, 4 * chunk, 0)));
    assert!(is_invalid_argument(ExpandableSegment::new(
        &prop,
        4 * chunk,
        chunk + 4096
    )));
    assert!(is_invalid_argument(ExpandableSegment::new(&prop, 0, chunk)));
    assert!(is_invalid_argument(ExpandableSegment::new(
        &prop,
        3 * chunk + chunk / 2,
        chunk
    )));
    let mut segment = ExpandableSegment::new(&prop, 2 * chunk, chunk).unwrap();
    assert!(is_invalid_argument(segment.grow(chunk / 2)));
    assert!(is_invalid_argument(segment.grow(3 * chunk)));
    assert!(is_invalid_argument(segment.shrink(chunk)));
    segment.grow(0).unwrap();
    segment.grow(2 * chunk).unwrap();
    assert!(is_invalid_argument(segment.grow(chunk)), "full");
    assert!(is_invalid_argument(segment.shrink(3 * chunk)));
    assert_eq!(segment.size(), 2 * chunk);
}

#[test]
fn a_regrow_reuses_spare_chunks_and_release_frees_them() {
    let _serial = serial();
    let (prop, chunk) = granule();
    let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk).unwrap();
    let since = soft::sequence_now();
    let physicals = || {
        soft::live_since(since)
            .iter()
            .filter(|resource| resource.kind == ResourceKind::PhysicalAllocation)
            .map(|resource| resource.id)
            .collect::<Vec<_>>()
    };
    segment.grow(2 * chunk).unwrap();
    let first = physicals();
    segment.shrink(2 * chunk).unwrap();
    segment.grow(chunk).unwrap();
    assert_eq!((segment.spare_chunks(), segment.size()), (1, chunk));
    software_only(|| assert_eq!(physicals(), first, "a regrow maps the spare chunks, allocating nothing"));
    segment.release_spare().unwrap();
    assert_eq!(segment.spare_chunks(), 0);
    software_only(|| assert_eq!(physicals().len(), 1, "the spare chunk is freed"));
    drop(segment);
    software_only(|| assert!(soft::live_since(since).is_empty(), "{:?}", soft::live_since(since)));
}

#[test]
fn blocks_never_overlap_and_keep_their_memory_mapped() {
    let _serial = serial();
    let (prop, chunk) = granule();
    let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk).unwrap());
    assert!(is_invalid_argument(segment.block(0, 16)), "nothing mapped yet");
    segment.grow(2 * chunk).unwrap();
    assert!(is_invalid_argument(segment.block(0, 0)), "empty");
    assert!(
        is_invalid_argument(segment.block(chunk, chunk + 1)),
        "past the mapped part"
    );
    assert!(is_invalid_argument(segment.block(usize::MAX, 2)), "overflow");
    // A block across the chunk boundary, and its neighbours.
    let mut middle = segment.block(chunk - 4096, 8192).unwrap();
    for (offset, len) in [(chunk - 8192, 4097), (chunk, 1), (chunk + 4095, 10), (0, 2 * chunk)] {
        assert!(
            is_invalid_argument(segment.block(offset, len)),
            "{offset:#x}+{len:#x} overlaps"
        );
    }
    let mut before = segment.block(chunk - 8192, 4096).unwrap();
    let after = segment.block(chunk + 4096, 4096).unwrap();
    assert_eq!((segment.live_blocks(), segment.high_water()), (3, chunk + 8192));
    assert_eq!(
        segment.live_ranges(),
        [(chunk - 8192, 4096), (chunk - 4096, 8192), (chunk + 4096, 4096)]
    );
    middle.as_mut_slice::<u8>().unwrap().fill_bytes(7).unwrap();
    before.as_mut_slice::<u8>().unwrap().fill_bytes(1).unwrap();
    assert_eq!(middle.as_slice::<u8>().unwrap().to_vec().unwrap(), vec![7; 8192]);
    // Used from another thread, then dropped there: the range comes back.
    let moved = std::thread::spawn(move || {
        let bytes = after.as_slice::<u8>().unwrap().len();
        drop(after);
        bytes
    });
    assert_eq!(moved.join().unwrap(), 4096);
    assert!(
        is_invalid_argument(segment.shrink(chunk)),
        "a live block reaches the last chunk"
    );
    drop(middle);
    segment.shrink(chunk).unwrap();
    assert_eq!(before.as_slice::<u8>().unwrap().to_vec().unwrap(), vec![1; 4096]);
    // The segment outlives its last `Arc` while a block holds it.
    drop(segment);
    assert_eq!(before.segment().size(), chunk);
    assert_eq!(before.as_slice::<u8>().unwrap().to_vec().unwrap(), vec![1; 4096]);
}
