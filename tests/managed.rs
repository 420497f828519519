//! [`ManagedBuf`]: managed memory that the host reads and writes as a slice
//! and the device uses as device storage (views, scopes, `Ordered`), its
//! advice, prefetches and attributes, and a model test of its views.

mod common;

use ascend::memory::{DeviceStorage, ManagedAdvice, ManagedBuf, ManagedLocation};
use ascend::stream::{Ordered, Stream};
use ascend::{DeviceBuf, DeviceSlice, DeviceSliceMut, ErrorCode, PinnedHostBuf};
use common::{device, shared_stream, software_only};
use proptest::prelude::*;

#[test]
fn the_host_and_the_device_see_the_same_elements() {
    let device = device();
    let mut buf = ManagedBuf::<u32>::zeroed(&device, 1000).unwrap();
    assert_eq!(buf.len(), 1000);
    assert_eq!(DeviceStorage::byte_len(&buf), 4000);
    assert!(buf.as_slice().iter().all(|&x| x == 0));
    for (index, value) in buf.as_mut_slice().iter_mut().enumerate() {
        *value = index as u32 * 3;
    }
    // The device reads what the host wrote.
    let read = buf.device_slice().to_vec().unwrap();
    assert_eq!(read, buf.as_slice());
    // The device writes, the host reads.
    buf.device_slice_mut()
        .slice_mut(10..20)
        .unwrap()
        .fill_bytes(0xAB)
        .unwrap();
    assert_eq!(&buf.as_slice()[10..20], [0xABAB_ABAB; 10]);
    // aclrtMemsetD32 takes aclrtMalloc or aclrtMallocHost memory only.
    let error = buf.device_slice_mut().fill_u32(1).unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::INVALID_PARAM), "{error}");
    assert_eq!(buf.as_slice()[0], 0);
    assert_eq!(buf.as_slice()[20], 60);
    // A view from the storage trait, as for any device storage.
    let pairs = DeviceSlice::<u64>::from_storage(&buf).unwrap();
    assert_eq!(pairs.len(), 500);
    let from = ManagedBuf::from_slice(&device, &[5u8, 6, 7]).unwrap();
    assert_eq!(from.as_slice(), [5, 6, 7]);
    from.free().unwrap();
    // Device-to-device with plain device memory.
    let mut plain = DeviceBuf::<u32>::zeroed(&device, 1000).unwrap();
    plain.as_mut_slice().copy_from_device(&buf.device_slice()).unwrap();
    assert_eq!(plain.to_vec().unwrap(), buf.as_slice());
}

#[test]
fn an_empty_buffer_allocates_nothing() {
    let device = device();
    let buf = ManagedBuf::<u16>::new(&device, 0).unwrap();
    assert!(buf.is_empty());
    assert!(buf.as_raw().is_null());
    assert_eq!(buf.as_slice(), [] as [u16; 0]);
    assert!(!buf.read_mostly().unwrap());
    assert_eq!(buf.preferred_location().unwrap(), None);
    buf.advise(ManagedAdvice::SetReadMostly, ManagedLocation::Host).unwrap();
    let stream = Stream::new(&device).unwrap();
    buf.prefetch_to(ManagedLocation::Device(0), &stream).unwrap();
    assert!(buf.attributes().unwrap().accessed_by.is_empty());
}

#[test]
fn an_oversized_buffer_is_refused_in_rust() {
    let device = device();
    let error = ManagedBuf::<u64>::zeroed(&device, usize::MAX / 4).unwrap_err();
    assert!(matches!(error, ascend::Error::InvalidArgument { .. }), "{error}");
}

#[test]
fn a_scope_borrows_the_buffer_until_its_stream_is_synchronised() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut buf = ManagedBuf::<u32>::zeroed(&device, 4096).unwrap();
    let input: Vec<u32> = (0..4096).collect();
    let mut output = vec![0u32; 4096];
    stream
        .scope(|s| {
            let held = s.hold_device(buf.device_slice_mut());
            s.copy_to_device(&input, held)?;
            s.fill_bytes(held, 0)?; // overwritten again below, in order
            s.copy_to_device(&input, held)?;
            s.copy_to_host(held, &mut output)
        })
        .unwrap();
    // The scope synchronised: the host may look.
    assert_eq!(buf.as_slice(), input);
    assert_eq!(output, input);
}

#[test]
fn ordered_gives_host_access_only_after_its_work() {
    let device = device();
    let (one, two) = (shared_stream(&device), shared_stream(&device));
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[9u16; 1 << 20]).unwrap());
    let mut managed = Ordered::new(ManagedBuf::<u16>::zeroed(&device, 1 << 20).unwrap());
    managed.copy_from_host(&staging, &one).unwrap();
    managed.elements::<u16>(..16).unwrap().fill_bytes(0, &two).unwrap(); // waits for the copy
    let buf = managed.get_mut().unwrap(); // waits for both
    assert_eq!(&buf.as_slice()[..16], [0; 16]);
    assert!(buf.as_slice()[16..].iter().all(|&x| x == 9));
    buf.as_mut_slice()[0] = 1;
    let buf = managed.into_inner().unwrap();
    assert_eq!(buf.device_slice().slice(..2).unwrap().to_vec().unwrap(), [1, 0]);
}

#[test]
fn advice_and_prefetches_are_reported_back() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let buf = ManagedBuf::<f32>::zeroed(&device, 1 << 16).unwrap();
    let fresh = buf.attributes().unwrap();
    assert!(!fresh.read_mostly);
    assert_eq!(fresh.preferred_location, None);
    assert_eq!(fresh.last_prefetch_location, None);
    assert!(fresh.accessed_by.is_empty());

    buf.advise(ManagedAdvice::SetReadMostly, ManagedLocation::Host).unwrap();
    buf.advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Device(0))
        .unwrap();
    buf.advise(ManagedAdvice::SetAccessedBy, ManagedLocation::Host).unwrap();
    buf.advise(ManagedAdvice::SetAccessedBy, ManagedLocation::Device(0))
        .unwrap();
    buf.prefetch_to(ManagedLocation::Host, &stream).unwrap();
    stream.synchronize().unwrap();
    let advised = buf.attributes().unwrap();
    assert!(advised.read_mostly);
    assert_eq!(advised.preferred_location, Some(ManagedLocation::Device(0)));
    assert_eq!(advised.last_prefetch_location, Some(ManagedLocation::Host));
    assert_eq!(advised.accessed_by.len(), 2);
    assert!(advised.accessed_by.contains(&ManagedLocation::Host));
    assert!(advised.accessed_by.contains(&ManagedLocation::Device(0)));
    assert!(buf.read_mostly().unwrap());
    assert_eq!(buf.last_prefetch_location().unwrap(), Some(ManagedLocation::Host));

    buf.advise(ManagedAdvice::UnsetReadMostly, ManagedLocation::Host)
        .unwrap();
    buf.advise(ManagedAdvice::UnsetPreferredLocation, ManagedLocation::Host)
        .unwrap();
    buf.advise(ManagedAdvice::UnsetAccessedBy, ManagedLocation::Host)
        .unwrap();
    let undone = buf.attributes().unwrap();
    assert!(!undone.read_mostly);
    assert_eq!(undone.preferred_location, None);
    assert_eq!(undone.accessed_by, [ManagedLocation::Device(0)]);
    // A prefetch moves nothing.
    assert!(buf.as_slice().iter().all(|&x| x == 0.0));
}

#[test]
fn a_device_location_must_name_a_device() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let buf = ManagedBuf::<u8>::zeroed(&device, 64).unwrap();
    let count = ascend::Device::count().unwrap() as i32;
    let error = buf
        .advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Device(count))
        .unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::RT_PARAM_INVALID), "{error}");
    let error = buf.prefetch_to(ManagedLocation::Device(-1), &stream).unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::RT_PARAM_INVALID), "{error}");
    // Nothing was recorded.
    assert_eq!(buf.preferred_location().unwrap(), None);
    software_only(|| assert_eq!(buf.last_prefetch_location().unwrap(), None));
    // The buffer is still fine, and its free waits for the failed call's
    // device (nothing queued).
    buf.free().unwrap();
}

#[test]
fn a_prefetched_buffer_is_freed_after_its_device_is_synchronised() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut buf = ManagedBuf::<u8>::zeroed(&device, 8 << 20).unwrap();
    buf.device_slice_mut().fill_bytes(3).unwrap();
    for _ in 0..8 {
        buf.prefetch_to(ManagedLocation::Device(0), &stream).unwrap();
        buf.prefetch_to(ManagedLocation::Host, &stream).unwrap();
    }
    assert!(buf.as_slice().iter().all(|&x| x == 3));
    buf.free().unwrap(); // synchronises device 0, then frees
}

/// One step of the model test.
#[derive(Debug, Clone)]
enum Step {
    /// The host writes `byte` at `start..start + len`.
    HostWrite { start: usize, len: usize, byte: u8 },
    /// A synchronous copy from host data into the managed range.
    CopyIn { start: usize, data: Vec<u8> },
    /// A synchronous memset of the managed range.
    Fill { start: usize, len: usize, byte: u8 },
    /// The managed range is copied to the other buffer's range, on the
    /// device, then back to another managed range.
    Through { from: usize, to: usize, len: usize },
    /// A scope's copy into the managed range and copy out of it.
    Scoped { start: usize, data: Vec<u8> },
}

const LEN: usize = 4096;

fn step() -> impl Strategy<Value = Step> {
    let range = (0..LEN).prop_flat_map(|start| (Just(start), 0..=(LEN - start).min(700)));
    prop_oneof![
        (range.clone(), any::<u8>()).prop_map(|((start, len), byte)| Step::HostWrite { start, len, byte }),
        range
            .clone()
            .prop_flat_map(|(start, len)| (Just(start), proptest::collection::vec(any::<u8>(), len)))
            .prop_map(|(start, data)| Step::CopyIn { start, data }),
        (range.clone(), any::<u8>()).prop_map(|((start, len), byte)| Step::Fill { start, len, byte }),
        (0..LEN, 0..LEN, 0..700usize).prop_map(|(from, to, len)| {
            let len = len.min(LEN - from).min(LEN - to);
            Step::Through { from, to, len }
        }),
        range
            .prop_flat_map(|(start, len)| (Just(start), proptest::collection::vec(any::<u8>(), len)))
            .prop_map(|(start, data)| Step::Scoped { start, data }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random host writes, device copies into and out of sub-ranges and
    /// fills: the contents, seen by the host and by the device, always
    /// equal a `Vec` model.
    #[test]
    fn views_match_a_vec_model(steps in proptest::collection::vec(step(), 1..24)) {
        let device = device();
        let stream = Stream::new(&device).unwrap();
        let mut buf = ManagedBuf::<u8>::zeroed(&device, LEN).unwrap();
        let mut other = DeviceBuf::<u8>::zeroed(&device, LEN).unwrap();
        let mut model = vec![0u8; LEN];
        for step in steps {
            match step {
                Step::HostWrite { start, len, byte } => {
                    buf.as_mut_slice()[start..start + len].fill(byte);
                    model[start..start + len].fill(byte);
                }
                Step::CopyIn { start, data } => {
                    let end = start + data.len();
                    buf.device_slice_mut().slice_mut(start..end).unwrap().write_from_host(&data).unwrap();
                    model[start..end].copy_from_slice(&data);
                }
                Step::Fill { start, len, byte } => {
                    buf.device_slice_mut().slice_mut(start..start + len).unwrap().fill_bytes(byte).unwrap();
                    model[start..start + len].fill(byte);
                }
                Step::Through { from, to, len } => {
                    let source = buf.device_slice().slice(from..from + len).unwrap();
                    other.as_mut_slice().slice_mut(to..to + len).unwrap().copy_from_device(&source).unwrap();
                    let back = other.slice(to..to + len).unwrap();
                    DeviceSliceMut::from_storage(&mut buf)
                        .unwrap()
                        .slice_mut(to..to + len)
                        .unwrap()
                        .copy_from_device(&back)
                        .unwrap();
                    model.copy_within(from..from + len, to);
                }
                Step::Scoped { start, data } => {
                    let end = start + data.len();
                    let mut out = vec![0u8; data.len()];
                    let mut view = buf.device_slice_mut();
                    let part = view.slice_mut(start..end).unwrap();
                    stream.scope(|s| {
                        let held = s.hold_device(part);
                        s.copy_to_device(&data, held)?;
                        s.copy_to_host(held, &mut out)
                    }).unwrap();
                    prop_assert_eq!(&out, &data);
                    model[start..end].copy_from_slice(&data);
                }
            }
            prop_assert_eq!(buf.as_slice(), &model[..]);
        }
        prop_assert_eq!(buf.device_slice().to_vec().unwrap(), model);
    }
}
