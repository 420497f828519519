//! Cache maintenance and memory checks (AscendCL group 3.12) through the
//! safe crate: operations queued in scopes and on `Ordered` buffers in the
//! order of the other uses of their range, the synchronous cache calls,
//! memory-type checks, peer mapping and the UCE list. Written to run on
//! hardware too (`ASCEND_BACKEND=hardware`); software-only assertions are
//! marked.

mod common;

use ascend::memory::{CacheOp, MemTypes, check_mem_type};
use ascend::stream::{DeviceFlag, Ordered, ValueCondition};
use ascend::{Device, DeviceBuf, ErrorCode};
use common::{device, on_software, shared_stream, software_only};
use std::time::Duration;

#[test]
fn every_operation_runs_in_a_scope_and_keeps_the_data() {
    let device = device();
    let stream = ascend::stream::Stream::new(&device).unwrap();
    let buf = DeviceBuf::from_slice(&device, &[5u32; 1024]).unwrap();
    let mut other = DeviceBuf::from_slice(&device, &[6u32; 16]).unwrap();
    stream
        .scope(|s| {
            for op in [CacheOp::Prefetch, CacheOp::Writeback, CacheOp::Flush] {
                s.cache(&buf, op)?;
            }
            s.cache(buf.slice(..0)?, CacheOp::Flush)?; // empty: nothing queued
            let refused = s.cache(&buf, CacheOp::Invalidate);
            assert!(
                matches!(refused, Err(ascend::Error::InvalidArgument { .. })),
                "{refused:?}"
            );
            let (low, high) = other.split_at_mut(8)?;
            s.fill_bytes(low, 0)?;
            s.invalidate(high)
        })
        .unwrap();
    assert_eq!(buf.to_vec().unwrap(), vec![5u32; 1024]);
    let mut expected = vec![0u32; 8];
    expected.extend([6u32; 8]);
    assert_eq!(other.to_vec().unwrap(), expected);
}

/// A cache operation on another stream than a queued write of its range
/// waits for that write: held behind a gate, the write keeps the second
/// stream from completing until the gate opens.
#[test]
fn an_ordered_cache_operation_waits_for_a_queued_write_on_another_stream() {
    let device = device();
    let (a, b) = (shared_stream(&device), shared_stream(&device));
    let gate = DeviceFlag::new(&device, 0).unwrap();
    let buf = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4096).unwrap());
    a.wait_value(&gate, 1, ValueCondition::Equal).unwrap();
    buf.fill_u32(0xABCD_0123, &a).unwrap();
    buf.cache(CacheOp::Writeback, &b).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    assert!(!b.query().unwrap(), "the writeback ran before the write it follows");
    gate.set(1).unwrap();
    // (Whether `a` reports complete now is a race with its worker marking
    // the record done: the wait above is the assertion.)
    b.synchronize().unwrap();
    // Reads of disjoint views and the invalidation of a part.
    buf.elements::<u32>(..1024)
        .unwrap()
        .cache(CacheOp::Prefetch, &a)
        .unwrap();
    buf.elements::<u32>(1024..)
        .unwrap()
        .cache(CacheOp::Invalidate, &b)
        .unwrap();
    assert_eq!(buf.into_inner().unwrap().to_vec().unwrap(), vec![0xABCD_0123; 4096]);
}

#[test]
fn synchronous_cache_calls_and_l2() {
    let device = device();
    let mut buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3]).unwrap();
    buf.flush_cache().unwrap();
    buf.invalidate_cache().unwrap();
    DeviceBuf::<u8>::zeroed(&device, 0).unwrap().flush_cache().unwrap();
    device.flush_l2_cache().unwrap();
    assert_eq!(buf.to_vec().unwrap(), [1, 2, 3]);
}

#[test]
fn memory_types() {
    let device = device();
    let buf = DeviceBuf::<u64>::zeroed(&device, 8).unwrap();
    let host = [0u64; 8];
    let on_device = buf.as_raw().cast_const();
    assert!(check_mem_type(&device, &[on_device], MemTypes::DEVICE).unwrap());
    assert!(check_mem_type(&device, &[on_device], MemTypes::DEVICE | MemTypes::DVPP).unwrap());
    assert!(!check_mem_type(&device, &[on_device, host.as_ptr().cast()], MemTypes::DEVICE).unwrap());
    let empty = check_mem_type(&device, &[], MemTypes::DEVICE);
    assert!(matches!(empty, Err(ascend::Error::InvalidArgument { .. })), "{empty:?}");
    software_only(|| assert!(!check_mem_type(&device, &[on_device], MemTypes::DVPP).unwrap()));
}

#[test]
fn peer_mapping_follows_peer_access() {
    if Device::count().unwrap() < 2 {
        return;
    }
    let (zero, one) = (Device::new(0).unwrap(), Device::new(1).unwrap());
    let buf = DeviceBuf::<u32>::zeroed(&one, 64).unwrap();
    buf.map_to_peer(&one).unwrap();
    software_only(|| {
        let refused = buf.map_to_peer(&zero).unwrap_err();
        assert_eq!(refused.code(), Some(ErrorCode::RT_PARAM_INVALID), "{refused}");
    });
    zero.enable_peer_access(&one).unwrap();
    buf.map_to_peer(&zero).unwrap();
    zero.disable_peer_access(&one).unwrap();
}

#[test]
fn uce_info_and_repair() {
    let device = device();
    let damaged = device.uce_info().unwrap();
    if on_software() {
        assert!(damaged.is_empty(), "{damaged:?}");
    }
    device.repair_uce(&damaged).unwrap();
    let too_many = vec![ascend::info::UceRange { address: 0, len: 0 }; 129];
    assert!(matches!(
        device.repair_uce(&too_many),
        Err(ascend::Error::InvalidArgument { .. })
    ));
}
