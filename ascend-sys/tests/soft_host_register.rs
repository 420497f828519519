//! The software device's host-registration rules (`acl-behaviour.md` §5)
//! and `aclrtPointerGetAttributes`: each test breaks one rule and checks the
//! exact code. Software device only: these tests select it explicitly.

mod soft_common;

use ascend_sys::*;
use soft_common::{on_device, recent, software, without_device};
use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::null_mut;

const PAGE: usize = 4096;

/// Page-aligned host memory owned by the test.
struct Pages {
    pointer: *mut u8,
    layout: Layout,
}

impl Pages {
    fn new(pages: usize) -> Self {
        let layout = Layout::from_size_align(pages * PAGE, PAGE).unwrap();
        // SAFETY: non-zero size.
        let pointer = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!pointer.is_null());
        Self { pointer, layout }
    }

    fn at(&self, offset: usize) -> *mut c_void {
        assert!(offset <= self.layout.size());
        // SAFETY: inside (or one past) the allocation.
        unsafe { self.pointer.add(offset) }.cast()
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.pointer, self.layout) };
    }
}

fn register_v1(pointer: *mut c_void, size: u64, kind: aclrtHostRegisterType) -> (aclError, *mut c_void) {
    let mut device = null_mut();
    // SAFETY: `pointer` is test-owned host memory (or deliberately bad);
    // `device` is a valid out-pointer.
    let code = unsafe { aclrtHostRegister(pointer, size, kind, &mut device) };
    (code, device)
}

fn register_v2(pointer: *mut c_void, size: u64, flag: u32) -> aclError {
    // SAFETY: `pointer` is test-owned host memory (or deliberately bad).
    unsafe { aclrtHostRegisterV2(pointer, size, flag) }
}

fn unregister(pointer: *mut c_void) -> aclError {
    // SAFETY: no memory is accessed through `pointer`.
    unsafe { aclrtHostUnregister(pointer) }
}

fn device_pointer(pointer: *mut c_void, flag: u32) -> (aclError, *mut c_void) {
    let mut device = null_mut();
    // SAFETY: `device` is a valid out-pointer.
    let code = unsafe { aclrtHostGetDevicePointer(pointer, &mut device, flag) };
    (code, device)
}

#[test]
fn register_v1_checks_its_arguments() {
    on_device(|| {
        let pages = Pages::new(1);
        let mut device = null_mut();
        // SAFETY: NULL pointers are refused before any access.
        unsafe {
            assert_eq!(
                aclrtHostRegister(null_mut(), PAGE as u64, ACL_HOST_REGISTER_MAPPED, &mut device),
                ACL_ERROR_INVALID_PARAM
            );
            assert!(recent().contains("ptr is NULL"));
            assert_eq!(
                aclrtHostRegister(pages.at(0), PAGE as u64, ACL_HOST_REGISTER_MAPPED, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert!(recent().contains("devPtr is NULL"));
        }
        assert_eq!(register_v1(pages.at(0), 0, 0).0, ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("size is 0"));
        // Only the IOMEMORY (0x4) and READONLY (0x8) bits pass; the runtime
        // answers anything else with "feature not supported".
        for bad in [0x1, 0x2, 0x10, 0x8000_0000] {
            assert_eq!(
                register_v1(pages.at(0), PAGE as u64, bad).0,
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "type {bad:#x}"
            );
        }
        for good in [0, 0x4, 0x8, 0xc] {
            let (code, device) = register_v1(pages.at(0), PAGE as u64, good);
            assert_eq!(code, ACL_SUCCESS, "type {good:#x}");
            assert!(!device.is_null());
            assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
        }
    });
}

#[test]
fn registration_calls_need_a_context() {
    let pages = Pages::new(1);
    let address = pages.at(0) as usize;
    without_device(move || {
        let pointer = address as *mut c_void;
        assert_eq!(register_v1(pointer, PAGE as u64, 0).0, ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(
            register_v2(pointer, PAGE as u64, ACL_HOST_REG_MAPPED),
            ACL_ERROR_RT_CONTEXT_NULL
        );
        assert_eq!(unregister(pointer), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(device_pointer(pointer, 0).0, ACL_ERROR_RT_CONTEXT_NULL);
        let mut capability = 99;
        // SAFETY: valid out-pointer.
        let code = unsafe { aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_SDMA, &mut capability) };
        assert_eq!(code, ACL_ERROR_RT_CONTEXT_NULL);
        // The argument checks come first.
        assert_eq!(register_v1(pointer, 0, 0).0, ACL_ERROR_INVALID_PARAM);
        assert_eq!(register_v1(pointer, PAGE as u64, 1).0, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(register_v2(pointer, PAGE as u64, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(device_pointer(pointer, 1).0, ACL_ERROR_INVALID_PARAM);
    });
}

/// Software-device choice: the 4 KiB alignment the docs require is enforced
/// with ACL_ERROR_RT_PARAM_INVALID.
#[test]
fn registration_needs_a_page_aligned_pointer() {
    on_device(|| {
        let pages = Pages::new(2);
        assert_eq!(register_v1(pages.at(64), PAGE as u64, 0).0, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not aligned"));
        assert_eq!(
            register_v2(pages.at(8), 16, ACL_HOST_REG_PINNED),
            ACL_ERROR_RT_PARAM_INVALID
        );
        // Any size is fine once the pointer is aligned.
        assert_eq!(register_v2(pages.at(0), 100, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
        assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
    });
}

/// Software-device choice: device addresses are not host memory (107000).
#[test]
fn device_addresses_cannot_be_registered() {
    on_device(|| {
        let pages = Pages::new(1);
        let (code, window) = register_v1(pages.at(0), PAGE as u64, 0);
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(register_v1(window, PAGE as u64, 0).0, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("device pointer"));
        let mut device = null_mut();
        // SAFETY: valid out-pointer; freed once.
        assert_eq!(
            unsafe { aclrtMalloc(&mut device, 2 * PAGE, ACL_MEM_MALLOC_HUGE_FIRST) },
            ACL_SUCCESS
        );
        let aligned = (device as usize).next_multiple_of(PAGE) as *mut c_void;
        assert_eq!(
            register_v2(aligned, 16, ACL_HOST_REG_PINNED),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("device address"));
        // SAFETY: allocated above.
        assert_eq!(unsafe { aclrtFree(device) }, ACL_SUCCESS);
        assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
    });
}

#[test]
fn overlapping_registrations_are_refused() {
    on_device(|| {
        let pages = Pages::new(8);
        let (code, _) = register_v1(pages.at(2 * PAGE), 2 * PAGE as u64, 0);
        assert_eq!(code, ACL_SUCCESS);
        // Same base, interior, straddling from below and from above.
        assert_eq!(
            register_v1(pages.at(2 * PAGE), PAGE as u64, 0).0,
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        );
        assert!(recent().contains("already registered"));
        assert_eq!(
            register_v2(pages.at(3 * PAGE), PAGE as u64, ACL_HOST_REG_PINNED),
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        );
        assert_eq!(
            register_v2(pages.at(PAGE), 2 * PAGE as u64, ACL_HOST_REG_MAPPED),
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        );
        assert_eq!(
            register_v2(pages.at(3 * PAGE), 2 * PAGE as u64, ACL_HOST_REG_MAPPED),
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        );
        // Adjacent ranges do not overlap.
        assert_eq!(
            register_v2(pages.at(PAGE), PAGE as u64, ACL_HOST_REG_PINNED),
            ACL_SUCCESS
        );
        assert_eq!(
            register_v2(pages.at(4 * PAGE), PAGE as u64, ACL_HOST_REG_MAPPED),
            ACL_SUCCESS
        );
        for base in [PAGE, 2 * PAGE, 4 * PAGE] {
            assert_eq!(unregister(pages.at(base)), ACL_SUCCESS);
        }
        // Unregistered, the range can be registered again.
        assert_eq!(register_v1(pages.at(2 * PAGE), 2 * PAGE as u64, 0).0, ACL_SUCCESS);
        assert_eq!(unregister(pages.at(2 * PAGE)), ACL_SUCCESS);
    });
}

#[test]
fn register_v2_checks_its_flags() {
    on_device(|| {
        let pages = Pages::new(1);
        // SAFETY: NULL is refused before any access.
        assert_eq!(
            unsafe { aclrtHostRegisterV2(null_mut(), PAGE as u64, ACL_HOST_REG_MAPPED) },
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            register_v2(pages.at(0), 0, ACL_HOST_REG_MAPPED),
            ACL_ERROR_INVALID_PARAM
        );
        for bad in [0, 0x1, 0x10, 0x2 | 0x20, 0x8000_0000] {
            assert_eq!(
                register_v2(pages.at(0), PAGE as u64, bad),
                ACL_ERROR_RT_PARAM_INVALID,
                "flag {bad:#x}"
            );
        }
        for good in [
            ACL_HOST_REG_MAPPED,
            ACL_HOST_REG_PINNED,
            ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED,
            ACL_HOST_REG_IOMEMORY,
            ACL_HOST_REG_READONLY | ACL_HOST_REG_MAPPED,
        ] {
            assert_eq!(
                register_v2(pages.at(0), PAGE as u64, good),
                ACL_SUCCESS,
                "flag {good:#x}"
            );
            assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
        }
    });
}

/// Software-device choice: PINNED on memory aclrtMallocHost already
/// page-locked returns ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED.
#[test]
fn pinning_page_locked_memory_is_refused() {
    on_device(|| {
        let mut host = null_mut();
        // SAFETY: valid out-pointer; freed below.
        assert_eq!(unsafe { aclrtMallocHost(&mut host, 4 * PAGE) }, ACL_SUCCESS);
        let aligned = (host as usize).next_multiple_of(PAGE) as *mut c_void;
        assert_eq!(
            register_v2(aligned, PAGE as u64, ACL_HOST_REG_PINNED),
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        );
        assert!(recent().contains("page-locked"));
        assert_eq!(
            register_v2(aligned, PAGE as u64, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED),
            ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        );
        // Mapping page-locked memory is allowed.
        assert_eq!(register_v2(aligned, PAGE as u64, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
        assert_eq!(unregister(aligned), ACL_SUCCESS);
        // SAFETY: from aclrtMallocHost, freed once.
        assert_eq!(unsafe { aclrtFreeHost(host) }, ACL_SUCCESS);
    });
}

#[test]
fn device_pointer_is_the_exact_base_of_a_mapped_registration() {
    on_device(|| {
        let pages = Pages::new(4);
        let (code, device) = register_v1(pages.at(0), PAGE as u64, 0);
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(device_pointer(pages.at(0), 0), (ACL_SUCCESS, device));
        assert_ne!(device, pages.at(0), "a separate device address");
        // NULLs and the reserved flag are ACL-layer checks.
        // SAFETY: NULL out-pointer refused before any write.
        assert_eq!(
            unsafe { aclrtHostGetDevicePointer(pages.at(0), null_mut(), 0) },
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(device_pointer(null_mut(), 0).0, ACL_ERROR_INVALID_PARAM);
        assert_eq!(device_pointer(pages.at(0), 1).0, ACL_ERROR_INVALID_PARAM);
        // Interior pointer, PINNED-only registration, unregistered memory.
        assert_eq!(device_pointer(pages.at(64), 0).0, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("base address"));
        assert_eq!(
            register_v2(pages.at(PAGE), PAGE as u64, ACL_HOST_REG_PINNED),
            ACL_SUCCESS
        );
        assert_eq!(device_pointer(pages.at(PAGE), 0).0, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("without a device mapping"));
        assert_eq!(device_pointer(pages.at(3 * PAGE), 0).0, ACL_ERROR_RT_PARAM_INVALID);
        // V2 with MAPPED has one too, distinct from the first.
        assert_eq!(
            register_v2(
                pages.at(2 * PAGE),
                PAGE as u64,
                ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED
            ),
            ACL_SUCCESS
        );
        let (code, second) = device_pointer(pages.at(2 * PAGE), 0);
        assert_eq!(code, ACL_SUCCESS);
        assert!(!second.is_null() && second != device);
        for base in [0, PAGE, 2 * PAGE] {
            assert_eq!(unregister(pages.at(base)), ACL_SUCCESS);
        }
        // Unregistered: the device pointer is gone.
        assert_eq!(device_pointer(pages.at(0), 0).0, ACL_ERROR_RT_PARAM_INVALID);
    });
}

#[test]
fn unregister_takes_a_registered_base() {
    on_device(|| {
        let pages = Pages::new(2);
        assert_eq!(unregister(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(unregister(pages.at(0)), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
        assert_eq!(register_v1(pages.at(0), 2 * PAGE as u64, 0).0, ACL_SUCCESS);
        assert_eq!(unregister(pages.at(PAGE)), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
        assert!(recent().contains("not its base"));
        assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
        assert_eq!(unregister(pages.at(0)), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
        assert!(recent().contains("not registered"));
    });
}

/// Software-device choice: the device pointer of a registration cannot be
/// used for copies or sets (the docs forbid it) — ACL_ERROR_RT_PARAM_INVALID;
/// the registered host memory itself stays ordinary host memory.
#[test]
fn copies_refuse_the_device_pointer_of_a_registration() {
    on_device(|| {
        let pages = Pages::new(1);
        let (code, window) = register_v1(pages.at(0), PAGE as u64, 0);
        assert_eq!(code, ACL_SUCCESS);
        let mut device = null_mut();
        // SAFETY: every pointer below is a live allocation of at least PAGE
        // bytes, the registration's device pointer (refused before any
        // access), or a slice of it.
        unsafe {
            assert_eq!(aclrtMalloc(&mut device, PAGE, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
            let kinds = [ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEFAULT];
            for kind in kinds {
                assert_eq!(
                    aclrtMemcpy(window, PAGE, device, PAGE, kind),
                    ACL_ERROR_RT_PARAM_INVALID
                );
                assert!(recent().contains("device pointer"));
                assert_eq!(
                    aclrtMemcpy(device, PAGE, window, PAGE, kind),
                    ACL_ERROR_RT_PARAM_INVALID
                );
                let inside = window.cast::<u8>().add(100).cast::<c_void>();
                assert_eq!(aclrtMemcpy(device, 16, inside, 16, kind), ACL_ERROR_RT_PARAM_INVALID);
            }
            assert_eq!(aclrtMemset(window, PAGE, 7, PAGE), ACL_ERROR_RT_PARAM_INVALID);
            // The host side works as before, both ways, with the data.
            let host = pages.at(0).cast::<u8>();
            for i in 0..PAGE {
                host.add(i).write((i % 251) as u8);
            }
            assert_eq!(
                aclrtMemcpy(device, PAGE, pages.at(0), PAGE, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_SUCCESS
            );
            host.write_bytes(0, PAGE);
            assert_eq!(
                aclrtMemcpy(pages.at(0), PAGE, device, PAGE, ACL_MEMCPY_DEVICE_TO_HOST),
                ACL_SUCCESS
            );
            assert!((0..PAGE).all(|i| host.add(i).read() == (i % 251) as u8));
            assert_eq!(aclrtFree(device), ACL_SUCCESS);
        }
        assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
    });
}

#[test]
fn map_capabilities_checks_and_answers() {
    on_device(|| {
        let mut capability = 99;
        // SAFETY: NULL is refused before any write; otherwise a valid out-pointer.
        unsafe {
            assert_eq!(
                aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_SDMA, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtHostMemMapCapabilities(99, ACL_RT_HAC_TYPE_SDMA, &mut capability),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(
                aclrtHostMemMapCapabilities(u32::MAX, ACL_RT_HAC_TYPE_SDMA, &mut capability),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(
                aclrtHostMemMapCapabilities(0, 10, &mut capability),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(capability, 99);
            for (hac, expected) in [
                (ACL_RT_HAC_TYPE_SDMA, ACL_RT_HOST_MEM_MAP_SUPPORTED),
                (ACL_RT_HAC_TYPE_PCIEDMA, ACL_RT_HOST_MEM_MAP_SUPPORTED),
                (ACL_RT_HAC_TYPE_AIC, ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED),
                (ACL_RT_HAC_TYPE_CCU, ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED),
            ] {
                assert_eq!(aclrtHostMemMapCapabilities(1, hac, &mut capability), ACL_SUCCESS);
                assert_eq!(capability, expected, "hacType {hac}");
            }
        }
    });
}

/// Software-device only: registrations show up in the live counts and the
/// leak report until unregistered.
#[test]
fn registrations_are_live_resources() {
    on_device(|| {
        let pages = Pages::new(1);
        assert_eq!(register_v2(pages.at(0), PAGE as u64, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
        let line = format!("host registration {:#x}: {PAGE} bytes", pages.at(0) as usize);
        assert!(soft::live().host_registrations >= 1);
        assert!(soft::leak_report().contains(&line));
        assert_eq!(unregister(pages.at(0)), ACL_SUCCESS);
        assert!(!soft::leak_report().contains(&line));
    });
}

#[test]
fn pointer_attributes_tell_where_memory_lives() {
    on_device(|| {
        let mut attributes = aclrtPtrAttributes {
            location: aclrtMemLocation { id: 9, type_: 9 },
            pageSize: 0,
            rsv: [0; 4],
        };
        let pages = Pages::new(2);
        let (mut device, mut host) = (null_mut(), null_mut());
        // SAFETY: valid out-pointers; no memory is accessed through the
        // queried pointers; everything allocated is freed once.
        unsafe {
            assert_eq!(
                aclrtPointerGetAttributes(null_mut(), &mut attributes),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtPointerGetAttributes(pages.at(0), null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtMalloc(&mut device, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
            assert_eq!(aclrtMallocHost(&mut host, 100), ACL_SUCCESS);
            let (code, window) = register_v1(pages.at(PAGE), PAGE as u64, 0);
            assert_eq!(code, ACL_SUCCESS);
            let expect = [
                (device, ACL_MEM_LOCATION_TYPE_DEVICE),
                (device.cast::<u8>().add(50).cast(), ACL_MEM_LOCATION_TYPE_DEVICE),
                (window, ACL_MEM_LOCATION_TYPE_DEVICE),
                (host, ACL_MEM_LOCATION_TYPE_HOST),
                (pages.at(PAGE + 8), ACL_MEM_LOCATION_TYPE_HOST),
                (pages.at(0), ACL_MEM_LOCATION_TYPE_UNREGISTERED),
                (
                    std::ptr::from_mut(&mut attributes).cast(),
                    ACL_MEM_LOCATION_TYPE_UNREGISTERED,
                ),
            ];
            for (pointer, kind) in expect {
                assert_eq!(aclrtPointerGetAttributes(pointer, &mut attributes), ACL_SUCCESS);
                assert_eq!(attributes.location.type_, kind, "{pointer:?}");
                assert_eq!(attributes.location.id, 0, "{pointer:?}");
                assert_eq!(attributes.pageSize, 4096);
            }
            assert_eq!(unregister(pages.at(PAGE)), ACL_SUCCESS);
            assert_eq!(aclrtFree(device), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
        }
    });
    // Needs no context, and reports the device id. This thread keeps device
    // 1 retained meanwhile: the allocating thread's reset must not be the
    // last one, which would tear the device's memory down.
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(1) }, ACL_SUCCESS);
    let device = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let mut device = null_mut();
                // SAFETY: valid out-pointer; no arguments otherwise.
                unsafe {
                    assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
                    assert_eq!(aclrtMalloc(&mut device, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
                    assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
                }
                device as usize
            })
            .join()
            .unwrap()
    });
    without_device(move || {
        let mut attributes = aclrtPtrAttributes {
            location: aclrtMemLocation { id: 9, type_: 9 },
            pageSize: 0,
            rsv: [0; 4],
        };
        // SAFETY: valid out-pointer; the allocation is freed once (aclrtFree
        // needs no context).
        unsafe {
            assert_eq!(
                aclrtPointerGetAttributes(device as *const c_void, &mut attributes),
                ACL_SUCCESS
            );
            assert_eq!(attributes.location.type_, ACL_MEM_LOCATION_TYPE_DEVICE);
            assert_eq!(attributes.location.id, 1);
            assert_eq!(aclrtFree(device as *mut c_void), ACL_SUCCESS);
        }
    });
    // SAFETY: no pointer arguments; balances the retain above.
    assert_eq!(unsafe { aclrtResetDevice(1) }, ACL_SUCCESS);
}

/// The child half of `host_dereference_of_a_registration_device_pointer_faults`.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_dereferences_registration_device_pointer() {
    software();
    let pages = Pages::new(1);
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    let (code, window) = register_v1(pages.at(0), PAGE as u64, 0);
    assert_eq!(code, ACL_SUCCESS);
    println!("registered, device pointer {window:?}; dereferencing it on the host");
    // SAFETY: deliberately unsound: this is the fault the test expects. The
    // address is reserved PROT_NONE, so the read traps before returning.
    let value = unsafe { std::ptr::read_volatile(window.cast::<u8>()) };
    println!("read {value} without a fault");
}

#[test]
fn host_dereference_of_a_registration_device_pointer_faults() {
    let output = soft_common::child_output("child_dereferences_registration_device_pointer", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("dereferencing it on the host"),
        "child did not get that far:\n{stdout}"
    );
    assert!(!stdout.contains("without a fault"), "the read did not fault:\n{stdout}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(11),
        "expected SIGSEGV, got {:?}",
        output.status
    );
}
