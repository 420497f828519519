//! Address, device and runtime queries of the safe crate.

mod common;

use ascend::memory::{AllocCall, address_range, pointer_attributes};
use ascend::vmm::MemLocation;
use ascend::{Device, DeviceBuf, Error, MallocPolicy, PinnedHostBuf};
use common::{device, software_only};

#[test]
fn address_range_finds_the_allocation_of_interior_pointers() {
    let device = device();
    let buf = DeviceBuf::<u32>::zeroed(&device, 1000).unwrap();
    let range = address_range(buf.as_raw().wrapping_byte_add(3999)).unwrap();
    assert_eq!(range.base, buf.as_raw() as usize);
    assert!(range.size >= 4000);
    let host = PinnedHostBuf::<u8>::zeroed(&device, 100).unwrap();
    assert_eq!(
        address_range(host.as_ptr().cast()).unwrap().base,
        host.as_ptr() as usize
    );
    assert!(matches!(
        address_range(std::ptr::null()),
        Err(Error::InvalidArgument { .. })
    ));
    let local = 0u64;
    assert!(matches!(
        address_range((&raw const local).cast()),
        Err(Error::Acl { .. })
    ));
}

#[test]
fn pointer_attributes_tell_memory_kinds_apart() {
    let device = device();
    let buf = DeviceBuf::<u8>::zeroed(&device, 64).unwrap();
    assert_eq!(
        pointer_attributes(buf.as_raw()).unwrap().location,
        Some(MemLocation::Device(0))
    );
    let host = PinnedHostBuf::<u8>::zeroed(&device, 64).unwrap();
    assert_eq!(
        pointer_attributes(host.as_ptr().cast()).unwrap().location,
        Some(MemLocation::Host)
    );
    let local = [0u8; 8];
    assert_eq!(pointer_attributes(local.as_ptr().cast()).unwrap().location, None);
}

#[test]
fn every_allocation_call_gives_a_working_buffer() {
    let device = device();
    for call in [
        AllocCall::Malloc,
        AllocCall::Align32,
        AllocCall::Cached,
        AllocCall::WithModuleId(33),
    ] {
        // SAFETY: written before it is read.
        let mut buf = unsafe { DeviceBuf::<u16>::uninit_with(&device, 50, MallocPolicy::NormalOnly, call) }.unwrap();
        let data: Vec<u16> = (0..50).collect();
        buf.write_from_host(&data).unwrap();
        assert_eq!(buf.to_vec().unwrap(), data, "{call:?}");
    }
}

#[test]
fn current_device_memory_usage_and_runtime_info() {
    std::thread::spawn(|| {
        assert_eq!(Device::current().unwrap(), None, "a fresh thread has no current device");
        let device = Device::new(1).unwrap();
        assert_eq!(Device::current().unwrap(), Some(device.clone()));
        let usage = device.memory_usage().unwrap();
        assert!(!usage.is_empty());
        assert!(usage.iter().all(|entry| entry.current <= entry.peak));
        device
            .synchronize_timeout(std::time::Duration::from_millis(100))
            .unwrap();
    })
    .join()
    .unwrap();
    let version = ascend::info::version().unwrap();
    assert!(
        version
            >= ascend::info::Version {
                major: 1,
                minor: 0,
                patch: 0
            }
    );
    assert_eq!(ascend::info::run_mode().unwrap(), ascend::info::RunMode::Host);
    assert!(ascend::info::soc_name().unwrap().is_some());
    software_only(|| {
        assert_eq!(ascend::info::package_version("runtime").unwrap(), version.to_string());
        assert!(matches!(
            ascend::info::package_version("no-such-package"),
            Err(Error::Acl { .. })
        ));
    });
}

#[test]
fn ex_events_count_as_complete_before_their_first_record() {
    let device = device();
    let flags = ascend::stream::EventFlags::SYNC;
    let ex = ascend::Event::with_flags_ex(&device, flags).unwrap();
    let classic = ascend::Event::with_flags(&device, flags).unwrap();
    software_only(|| {
        assert!(ex.query().unwrap(), "an Ex event is complete before its first record");
        assert!(!classic.query().unwrap(), "a classic one is not");
    });
    let stream = ascend::Stream::new(&device).unwrap();
    ex.record(&stream).unwrap();
    ex.synchronize().unwrap();
    assert!(ex.query().unwrap());
}
