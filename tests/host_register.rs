//! Host registration: registering borrowed host memory, its device pointer,
//! the rules checked in Rust and by the runtime, and unregistering.
//!
//! The tests of this file serialise on one lock, so the software device's
//! registration counts they compare are theirs alone.

mod common;

use ascend::host_register::{
    AlignedHostBuf, HOST_REGISTER_ALIGN, HacType, HostRegisterFlags, HostRegisterType, HostRegistration,
    host_mem_map_capabilities,
};
use ascend::{DeviceBuf, Error, ErrorCode, sys};
use common::{device, on_software, software_only};
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises the tests of this file; returns the registrations live now.
fn serial() -> (MutexGuard<'static, ()>, usize) {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    (guard, sys::soft::live().host_registrations)
}

fn live_registrations() -> usize {
    sys::soft::live().host_registrations
}

fn is_invalid_argument<T: std::fmt::Debug>(result: ascend::Result<T>) -> bool {
    matches!(result, Err(Error::InvalidArgument { .. }))
}

fn pattern(len: usize) -> Vec<u32> {
    (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ 0x5a5a)
        .collect()
}

#[test]
fn v1_registration_maps_moves_data_and_unregisters() {
    let (_serial, start) = serial();
    let device = device();
    let data = pattern(4096); // 16 KiB
    let mut buf = AlignedHostBuf::from_slice(&data).unwrap();
    let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped).unwrap();
    software_only(|| assert_eq!(live_registrations(), start + 1));

    // V1 returns the device pointer; the runtime answers the same one.
    let returned = registration.registered_pointer().expect("V1 returns a device pointer");
    let queried = registration.device_pointer().unwrap();
    assert_eq!(returned, queried);
    assert_eq!(queried.byte_len(), 16 * 1024);
    // A distinct device address here (hardware with shared host/device
    // addresses may answer the host address itself).
    software_only(|| assert_ne!(queried.addr(), registration.as_slice().as_ptr() as usize));
    assert_eq!(registration.register_type(), Some(HostRegisterType::Mapped));
    assert_eq!(registration.flags(), None);

    // The host side is still ordinary host memory for copies.
    let on_device = DeviceBuf::from_slice(&device, registration.as_slice()).unwrap();
    assert_eq!(on_device.to_vec().unwrap(), data);

    // The device pointer is for device code only: a copy from or to it is
    // refused (the software device's documented code: 107000).
    software_only(|| {
        let mut out = vec![0u32; 16];
        // SAFETY: `out` holds 64 bytes; the source is the device pointer,
        // which the runtime refuses to copy from.
        let code = unsafe {
            sys::aclrtMemcpy(
                out.as_mut_ptr().cast(),
                64,
                queried.as_raw(),
                64,
                sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        assert_eq!(code, sys::ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(out, vec![0; 16], "nothing was copied");
        // SAFETY: as above, the other way round.
        let code = unsafe {
            sys::aclrtMemcpy(
                queried.as_raw(),
                64,
                out.as_ptr().cast(),
                64,
                sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        assert_eq!(code, sys::ACL_ERROR_RT_PARAM_INVALID);
    });

    registration.unregister().unwrap();
    software_only(|| assert_eq!(live_registrations(), start));
    assert_eq!(&buf[..], &data[..], "registration did not change the bytes");
}

#[test]
fn host_access_goes_through_the_registration() {
    let (_serial, start) = serial();
    let device = device();
    let mut buf = AlignedHostBuf::<u64>::zeroed(512).unwrap();
    {
        let mut registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED).unwrap();
        registration.as_mut_slice()[7] = 0xfeed;
        assert_eq!(registration.as_slice()[7], 0xfeed);
        assert_eq!(registration.len(), 512);
        assert_eq!(registration.byte_len(), 4096);
        assert_eq!(registration.flags(), Some(HostRegisterFlags::MAPPED));
        assert_eq!(registration.registered_pointer(), None, "V2 returns no pointer");
        assert!(registration.device_pointer().is_ok());
        software_only(|| assert_eq!(live_registrations(), start + 1));
        // Dropped here: unregistered.
    }
    software_only(|| assert_eq!(live_registrations(), start));
    assert_eq!(buf[7], 0xfeed);
}

#[test]
fn overlapping_registration_is_refused_while_the_guard_lives() {
    let (_serial, start) = serial();
    let device = device();
    let mut buf = AlignedHostBuf::<u8>::zeroed(3 * HOST_REGISTER_ALIGN).unwrap();
    let base = buf.as_mut_ptr();
    let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED).unwrap();

    // Raw calls on the middle page overlap the guarded range.
    let middle = base.wrapping_add(HOST_REGISTER_ALIGN).cast::<c_void>();
    // SAFETY: `middle` is inside live host memory; the call is refused.
    let code = unsafe { sys::aclrtHostRegisterV2(middle, HOST_REGISTER_ALIGN as u64, sys::ACL_HOST_REG_MAPPED) };
    assert_eq!(code, sys::ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    let mut device_pointer = std::ptr::null_mut();
    // SAFETY: as above, through V1.
    let code = unsafe {
        sys::aclrtHostRegister(
            middle,
            HOST_REGISTER_ALIGN as u64,
            sys::ACL_HOST_REGISTER_MAPPED,
            &mut device_pointer,
        )
    };
    assert_eq!(code, sys::ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    software_only(|| assert_eq!(live_registrations(), start + 1));

    drop(registration);
    // Unregistered: the same range registers again (raw, then safe).
    // SAFETY: `middle` is one page of live host memory, unregistered below.
    let code = unsafe { sys::aclrtHostRegisterV2(middle, HOST_REGISTER_ALIGN as u64, sys::ACL_HOST_REG_MAPPED) };
    assert_eq!(code, sys::ACL_SUCCESS);
    // SAFETY: the base registered just above.
    assert_eq!(unsafe { sys::aclrtHostUnregister(middle) }, sys::ACL_SUCCESS);
    let again = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped).unwrap();
    assert!(again.device_pointer().is_ok());
    again.unregister().unwrap();
    software_only(|| assert_eq!(live_registrations(), start));
}

#[test]
fn pinned_only_registration_has_no_device_pointer() {
    let (_serial, start) = serial();
    let device = device();
    let mut buf = AlignedHostBuf::<u32>::zeroed(1024).unwrap();
    let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED).unwrap();
    let result = registration.device_pointer();
    software_only(|| {
        assert_eq!(
            result.as_ref().err().and_then(Error::code),
            Some(ErrorCode::RT_PARAM_INVALID)
        )
    });
    // Mapped and pinned together have one.
    drop(registration);
    let both = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED | HostRegisterFlags::PINNED)
        .unwrap();
    assert!(both.device_pointer().is_ok());
    drop(both);
    software_only(|| assert_eq!(live_registrations(), start));
}

#[test]
fn rules_are_checked_in_rust_before_any_call() {
    let (_serial, start) = serial();
    let device = device();
    let mut buf = AlignedHostBuf::<u8>::zeroed(2 * HOST_REGISTER_ALIGN).unwrap();

    let misaligned = HostRegistration::register(&device, &mut buf[64..], HostRegisterType::Mapped);
    match &misaligned {
        Err(Error::InvalidArgument {
            method, api, reason, ..
        }) => {
            assert_eq!(*method, "HostRegistration::register");
            assert_eq!(*api, "aclrtHostRegister");
            assert!(reason.contains("4 KiB"), "{reason}");
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
    drop(misaligned);
    assert!(is_invalid_argument(HostRegistration::register_v2(
        &device,
        &mut buf[1..],
        HostRegisterFlags::MAPPED
    )));
    assert!(is_invalid_argument(HostRegistration::register(
        &device,
        &mut buf[..0],
        HostRegisterType::Mapped
    )));
    assert!(is_invalid_argument(HostRegistration::register_v2(
        &device,
        &mut buf[..],
        HostRegisterFlags::empty()
    )));
    let mut empty = AlignedHostBuf::<u32>::zeroed(0).unwrap();
    assert!(is_invalid_argument(HostRegistration::register(
        &device,
        &mut empty,
        HostRegisterType::Mapped
    )));
    software_only(|| assert_eq!(live_registrations(), start, "nothing reached the runtime"));

    // An aligned interior slice (the second page) is fine.
    let second =
        HostRegistration::register(&device, &mut buf[HOST_REGISTER_ALIGN..], HostRegisterType::Mapped).unwrap();
    assert_eq!(second.len(), HOST_REGISTER_ALIGN);
    drop(second);
    software_only(|| assert_eq!(live_registrations(), start));
}

#[test]
fn unregister_reports_the_runtime_error() {
    let (_serial, start) = serial();
    let device = device();
    let mut buf = AlignedHostBuf::<u8>::zeroed(HOST_REGISTER_ALIGN).unwrap();
    let base = buf.as_mut_ptr().cast::<c_void>();
    let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped).unwrap();
    // Unregistered behind the guard's back through a raw call...
    // SAFETY: the registered base; the guard's own unregister then fails.
    assert_eq!(unsafe { sys::aclrtHostUnregister(base) }, sys::ACL_SUCCESS);
    // ...so its explicit unregister reports the runtime's code.
    let error = registration.unregister().unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode(sys::ACL_ERROR_HOST_MEMORY_NOT_REGISTERED)));
    software_only(|| assert_eq!(live_registrations(), start));
}

#[test]
fn a_failing_unregister_in_drop_does_not_panic() {
    if !on_software() {
        return;
    }
    let (_serial, start) = serial();
    let device = device();
    let mut buf = AlignedHostBuf::<u8>::zeroed(HOST_REGISTER_ALIGN).unwrap();
    let base = buf.as_mut_ptr().cast::<c_void>();
    let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped).unwrap();
    sys::soft::inject_fault("aclrtHostUnregister", 1, sys::ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    drop(registration); // logged, not panicked
    assert_eq!(
        live_registrations(),
        start + 1,
        "the injected failure left it registered"
    );
    // SAFETY: the base registered above, still registered.
    assert_eq!(unsafe { sys::aclrtHostUnregister(base) }, sys::ACL_SUCCESS);
    assert_eq!(live_registrations(), start);
}

#[test]
fn aligned_buffers_span_whole_pages() {
    let one = AlignedHostBuf::<u8>::zeroed(1).unwrap();
    assert_eq!(one.allocated_bytes(), HOST_REGISTER_ALIGN);
    assert_eq!(one.as_ptr() as usize % HOST_REGISTER_ALIGN, 0);
    let more = AlignedHostBuf::<u32>::zeroed(HOST_REGISTER_ALIGN / 4 + 1).unwrap();
    assert_eq!(more.allocated_bytes(), 2 * HOST_REGISTER_ALIGN);
    assert!(more.iter().all(|&x| x == 0));
    let empty = AlignedHostBuf::<u64>::zeroed(0).unwrap();
    assert_eq!((empty.len(), empty.allocated_bytes()), (0, 0));
    assert!(is_invalid_argument(AlignedHostBuf::<u64>::zeroed(usize::MAX / 4)));
    let copy = AlignedHostBuf::from_slice(&[1u16, 2, 3]).unwrap();
    assert_eq!(&copy[..], &[1, 2, 3]);
}

#[test]
fn map_capabilities_answer_for_every_accelerator() {
    let device = device();
    for hac in HacType::ALL {
        let supported = host_mem_map_capabilities(&device, hac);
        // Runtimes before CANN 9.0 lack the call.
        if let Err(error) = &supported {
            assert_eq!(error.code(), Some(ErrorCode::RT_FEATURE_NOT_SUPPORT), "{error}");
            continue;
        }
        software_only(|| {
            let dma = matches!(hac, HacType::PcieDma | HacType::Sdma);
            assert_eq!(supported, Ok(dma), "{hac:?}");
        });
    }
    assert_eq!(
        HacType::ALL.map(HacType::raw),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        "the C enum's values"
    );
}

#[test]
fn pinned_memory_with_a_configuration() {
    use ascend::PinnedHostBuf;
    use ascend::host_register::HostMallocConfig;
    let device = device();
    let config = HostMallocConfig::new().with_module_id(33);
    let mut host = PinnedHostBuf::<u32>::zeroed_with_config(&device, 1000, &config).unwrap();
    assert!(host.iter().all(|&x| x == 0));
    host.copy_from_slice(&pattern(1000));
    let on_device = DeviceBuf::from_slice(&device, &host).unwrap();
    assert_eq!(on_device.to_vec().unwrap(), pattern(1000));
    host.free().unwrap();

    let plain = PinnedHostBuf::<u8>::zeroed_with_config(&device, 64, &HostMallocConfig::new()).unwrap();
    assert_eq!(plain.len(), 64);
    let empty = PinnedHostBuf::<u8>::zeroed_with_config(&device, 0, &config).unwrap();
    assert!(empty.is_empty());

    // The same-address flag needs host UVA, which the software device lacks.
    let same = PinnedHostBuf::<u8>::zeroed_with_config(&device, 64, &config.with_same_address(true));
    software_only(|| {
        assert_eq!(
            same.as_ref().err().and_then(Error::code),
            Some(ErrorCode::RT_FEATURE_NOT_SUPPORT)
        )
    });
}
