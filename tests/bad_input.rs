//! Hostile input to the safe API: zero sizes, sizes near `usize::MAX`,
//! misaligned offsets and pointers, mismatched lengths, wrong devices,
//! views out of bounds, 2-D shapes that do not fit, and (through the raw
//! `ascend::sys` calls) unknown handles and handles used after they were
//! freed.
//!
//! Every case runs under `catch_unwind` and must not panic; each bad input
//! must give the documented typed result — `Error::InvalidArgument` when
//! the crate catches it in Rust, `Error::Acl` with the runtime's code (and
//! the failing call's name) otherwise, or the documented success for the
//! inputs that are legal edge cases (an empty buffer). After every case a
//! normal round trip (device buffer and VMM: allocate, copy, read back,
//! free) must still work, and on the software device `soft::live()` must be
//! back where it was and `soft::misuse()` must not have grown (except by the
//! one record a case expects).
//!
//! Codes that are the software device's own choices
//! (`docs/runtime-choices.md`) are compared exactly on the software device
//! only; on hardware the case checks the variant and the call's name. Raw
//! calls with stale handles run on the software device only (on hardware
//! they are undefined behaviour in the driver).
//!
//! The cases are fixed (no randomness), so `ASCEND_TEST_SCALE` does not
//! change them; the file runs in about a second. Its tests share a lock
//! because the live counts are process-wide.

mod common;

use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
use ascend::pool::PoolConfig;
use ascend::share::PidValidation;
use ascend::stream::{Copy2d, Event, Ordered, Stream, StreamPriority};
use ascend::sys::{self, soft};
use ascend::vmm::{AccessDesc, MemAttr, MemLocation, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Device, DeviceBuf, Error, PinnedHostBuf};
use common::on_software;
use std::ffi::c_void;
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// What a case found wrong.
type Check = Result<(), String>;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `result` must be `Error::InvalidArgument` (caught in Rust, no call).
fn invalid<T: Debug>(what: &str, result: ascend::Result<T>) -> Check {
    match result {
        Err(Error::InvalidArgument { .. }) => Ok(()),
        other => Err(format!("{what}: expected Error::InvalidArgument, got {other:?}")),
    }
}

/// `result` must be `Error::InvalidArgument` naming `method`, the public
/// method called, and `api`, the C function it was for (`method` again
/// when none is involved), displayed as "`method` (`api`): " (or
/// "`method`: ").
fn invalid_from<T: Debug>(what: &str, result: ascend::Result<T>, method: &str, api: &str) -> Check {
    let error = match result {
        Err(error @ Error::InvalidArgument { .. }) => error,
        other => return Err(format!("{what}: expected Error::InvalidArgument, got {other:?}")),
    };
    let Error::InvalidArgument {
        method: named,
        api: called,
        ..
    } = &error
    else {
        unreachable!("matched above");
    };
    let prefix = if method == api {
        format!("{method}: ")
    } else {
        format!("{method} ({api}): ")
    };
    let text = error.to_string();
    if *named != method || *called != api || !text.starts_with(&prefix) {
        return Err(format!(
            "{what}: expected method {method} and api {api}, displayed from {prefix:?}, got {error:?}: {text}"
        ));
    }
    Ok(())
}

/// `result` must be `Error::Acl` from `api`, with `code` (compared on the
/// software device; on hardware any code of that call).
fn acl<T: Debug>(what: &str, result: ascend::Result<T>, api: &str, code: sys::aclError) -> Check {
    match result {
        Err(Error::Acl {
            api: failed, code: got, ..
        }) if failed == api && (got.0 == code || !on_software()) => Ok(()),
        other => Err(format!(
            "{what}: expected Error::Acl from {api} with {code}, got {other:?}"
        )),
    }
}

/// `result` must be `Ok`.
fn ok<T: Debug>(what: &str, result: ascend::Result<T>) -> Result<T, String> {
    result.map_err(|error| format!("{what}: expected success, got {error}"))
}

/// A raw call must have returned `expected`.
fn code(what: &str, actual: sys::aclError, expected: sys::aclError) -> Check {
    if actual == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}: returned {actual}, expected {expected} ({:?})",
            soft::recent_error()
        ))
    }
}

/// Allocate, copy, read back and free, for device buffers and the VMM: the
/// device still works.
fn round_trip(device: &Device) -> Check {
    let data: Vec<u64> = (0..513).map(|i| i * 3 + 1).collect();
    let buf = ok("DeviceBuf::from_slice", DeviceBuf::from_slice(device, &data))?;
    if ok("DeviceBuf::to_vec", buf.to_vec())? != data {
        return Err("the device buffer round trip returned other data".into());
    }
    ok("DeviceBuf::free", buf.free())?;
    let prop = PhysicalMemProp::device(device);
    let size = ok("round_up", prop.round_up(1))?;
    let range = ok("VirtualRange::reserve", VirtualRange::reserve(size))?;
    let physical = ok("PhysicalAlloc::new", PhysicalAlloc::new(&prop, size))?;
    let mut region = ok("VirtualRange::map", range.map(0, &physical))?;
    ok(
        "write_from_host",
        ok("as_mut_slice", region.as_mut_slice::<u64>())?
            .slice_mut(..data.len())
            .and_then(|mut view| view.write_from_host(&data)),
    )?;
    let back = ok(
        "to_vec",
        ok("as_slice", region.as_slice::<u64>())?
            .slice(..data.len())
            .and_then(|view| view.to_vec()),
    )?;
    if back != data {
        return Err("the VMM round trip returned other data".into());
    }
    ok("unmap", region.unmap())?;
    ok("PhysicalAlloc::free", physical.free())?;
    ok("VirtualRange::release", range.release())
}

/// Runs one case: no panic, its checks pass, the device still works, and
/// (software device) nothing leaked and `expected_misuse` misuse records
/// were added.
fn case_with_misuse(name: &str, expected_misuse: usize, body: impl FnOnce(&Device) -> Check) {
    let device = common::device();
    let before = soft::live();
    let misuse = soft::misuse().len();
    match catch_unwind(AssertUnwindSafe(|| body(&device))) {
        Err(_) => panic!("{name}: panicked"),
        Ok(Err(why)) => panic!("{name}: {why}"),
        Ok(Ok(())) => {}
    }
    if let Err(why) = round_trip(&device) {
        panic!("after {name}, the device no longer works: {why}");
    }
    if on_software() {
        assert_eq!(soft::live(), before, "{name} leaked:\n{}", soft::leak_report());
        assert_eq!(
            soft::misuse().len(),
            misuse + expected_misuse,
            "{name}: unexpected misuse records {:?}",
            soft::misuse()
        );
    }
}

fn case(name: &str, body: impl FnOnce(&Device) -> Check) {
    case_with_misuse(name, 0, body);
}

/// The VMM granularity of device memory.
fn granule(device: &Device) -> (PhysicalMemProp, usize) {
    let prop = PhysicalMemProp::device(device);
    (prop, prop.round_up(1).expect("granularity"))
}

#[test]
fn zero_sizes_are_empty_values_or_argument_errors() {
    let _serial = serial();
    case("DeviceBuf::zeroed(0)", |d| {
        let buf = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 0))?;
        if !buf.is_empty() || !buf.as_raw().is_null() || !ok("to_vec", buf.to_vec())?.is_empty() {
            return Err(format!("an empty buffer is not empty: {buf:?}"));
        }
        ok("free", buf.free())
    });
    case("DeviceBuf::from_slice(&[])", |d| {
        let mut buf = ok("from_slice", DeviceBuf::<u16>::from_slice(d, &[]))?;
        ok("write_from_host(&[])", buf.write_from_host(&[]))?;
        ok("fill_bytes", buf.fill_bytes(7))?;
        invalid("ipc_export of an empty buffer", buf.ipc_export())?;
        ok("free", buf.free())
    });
    case("PinnedHostBuf::zeroed(0)", |d| {
        let buf = ok("zeroed", PinnedHostBuf::<u64>::zeroed(d, 0))?;
        if !buf.is_empty() {
            return Err("an empty pinned buffer is not empty".into());
        }
        ok("free", buf.free())
    });
    case("VirtualRange::reserve(0)", |_| {
        invalid("reserve(0)", VirtualRange::reserve(0))
    });
    case("PhysicalAlloc::new(0)", |d| {
        invalid(
            "PhysicalAlloc::new(0)",
            PhysicalAlloc::new(&PhysicalMemProp::device(d), 0),
        )
    });
    case("register an empty host buffer", |d| {
        let mut empty = ok("AlignedHostBuf::zeroed(0)", AlignedHostBuf::<u8>::zeroed(0))?;
        invalid(
            "register_v2(empty)",
            HostRegistration::register_v2(d, &mut empty, HostRegisterFlags::MAPPED),
        )
    });
    case("register with no flag", |d| {
        let mut buf = ok("AlignedHostBuf::zeroed", AlignedHostBuf::<u8>::zeroed(4096))?;
        invalid(
            "register_v2(no flag)",
            HostRegistration::register_v2(d, &mut buf, HostRegisterFlags::empty()),
        )
    });
    case("set_access with no grant", |d| {
        let (prop, size) = granule(d);
        let range = ok("reserve", VirtualRange::reserve(size))?;
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        let mut region = ok("map_no_access", range.map_no_access(0, &physical))?;
        invalid("set_access(&[])", region.set_access(&[]))
    });
    case("allow_pids with no pid", |d| {
        let (prop, size) = granule(d);
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        let export = ok("export", physical.export(ascend::share::ShareKind::V2Default))?;
        invalid("allow_pids(&[])", export.allow_pids(&[]))?;
        let disabled = ok("PhysicalAlloc::new", PhysicalAlloc::new(&prop, size))?;
        let no_whitelist = ok(
            "export_with(Disabled)",
            disabled.export_with(ascend::share::ShareKind::V2Default, PidValidation::Disabled),
        )?;
        invalid(
            "allow_pids on an export without a whitelist",
            no_whitelist.allow_pids(&["4242".parse().map_err(|e| format!("{e}"))?]),
        )
    });
    case("empty 2-D copies and scoped copies", |d| {
        let mut buf = ok("zeroed", DeviceBuf::<u8>::zeroed(d, 16))?;
        ok(
            "write_from_host_2d of no rows",
            buf.as_mut_slice().write_from_host_2d(&[], Copy2d::new(4, 0)),
        )?;
        ok(
            "write_from_host_2d of no columns",
            buf.as_mut_slice().write_from_host_2d(&[], Copy2d::new(0, 9)),
        )?;
        let stream = ok("Stream::new", Stream::new(d))?;
        let empty_host = ok("PinnedHostBuf::zeroed(0)", PinnedHostBuf::<u8>::zeroed(d, 0))?;
        let mut empty_device = ok("DeviceBuf::zeroed(0)", DeviceBuf::<u8>::zeroed(d, 0))?;
        ok(
            "scoped copy of nothing",
            stream.scope(|s| s.copy_to_device(&empty_host, &mut empty_device)),
        )?;
        ok("Stream::destroy", stream.destroy())
    });
}

#[test]
fn sizes_near_usize_max_are_refused_without_panicking() {
    let _serial = serial();
    case("DeviceBuf::<u64>::zeroed(usize::MAX / 4)", |d| {
        invalid("byte size overflow", DeviceBuf::<u64>::zeroed(d, usize::MAX / 4))
    });
    case("DeviceBuf::<u8>::zeroed(usize::MAX - 7)", |d| {
        // Rounding up to 32 plus the padding overflows: the ACL layer's check.
        acl(
            "size overflow in the runtime",
            DeviceBuf::<u8>::zeroed(d, usize::MAX - 7),
            "aclrtMalloc",
            sys::ACL_ERROR_INVALID_PARAM,
        )
    });
    case("DeviceBuf::<u8>::zeroed(1 << 60)", |d| {
        acl(
            "more than the device holds",
            DeviceBuf::<u8>::zeroed(d, 1 << 60),
            "aclrtMalloc",
            sys::ACL_ERROR_RT_MEMORY_ALLOCATION,
        )
    });
    case("PinnedHostBuf::<u64>::zeroed(usize::MAX / 4)", |d| {
        invalid(
            "PinnedHostBuf::<u64>::zeroed(usize::MAX / 4)",
            PinnedHostBuf::<u64>::zeroed(d, usize::MAX / 4),
        )
    });
    case("PinnedHostBuf::<u8>::zeroed(1 << 60)", |d| {
        acl(
            "more host memory than exists",
            PinnedHostBuf::<u8>::zeroed(d, 1 << 60),
            "aclrtMallocHost",
            sys::ACL_ERROR_RT_MEMORY_ALLOCATION,
        )
    });
    case("AlignedHostBuf near usize::MAX", |_| {
        invalid("overflow", AlignedHostBuf::<u64>::zeroed(usize::MAX / 4))?;
        invalid(
            "rounding to pages overflows",
            AlignedHostBuf::<u8>::zeroed(usize::MAX - 100),
        )?;
        invalid("more than the allocator has", AlignedHostBuf::<u8>::zeroed(1 << 60))
    });
    case("VirtualRange::reserve(huge)", |_| {
        acl(
            "more address space than exists",
            VirtualRange::reserve(1 << 62),
            "aclrtReserveMemAddress",
            sys::ACL_ERROR_RT_MEMORY_ALLOCATION,
        )?;
        invalid(
            "usize::MAX (not a multiple of the granularity)",
            VirtualRange::reserve(usize::MAX),
        )
    });
    case("PhysicalAlloc::new(huge)", |d| {
        let (prop, size) = granule(d);
        acl(
            "more than the device holds",
            PhysicalAlloc::new(&prop, usize::MAX - size + 1),
            "aclrtMallocPhysical",
            sys::ACL_ERROR_RT_MEMORY_ALLOCATION,
        )?;
        invalid("round_up(usize::MAX)", prop.round_up(usize::MAX))
    });
    case("2-D shapes whose extent overflows", |d| {
        let mut buf = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 16))?;
        invalid(
            "width usize::MAX",
            buf.as_mut_slice().write_from_host_2d(
                &[0; 16],
                Copy2d::new(usize::MAX, 2)
                    .with_src_pitch(usize::MAX)
                    .with_dst_pitch(usize::MAX),
            ),
        )?;
        invalid(
            "height usize::MAX",
            buf.as_mut_slice()
                .write_from_host_2d(&[0; 16], Copy2d::new(4, usize::MAX)),
        )?;
        invalid(
            "extent overflow",
            Copy2d::new(2, usize::MAX).with_src_pitch(usize::MAX).src_extent(),
        )
    });
    case("timeouts and priorities out of range", |d| {
        let stream = ok("Stream::new", Stream::new(d))?;
        invalid("timeout above i32::MAX ms", stream.synchronize_timeout(Duration::MAX))?;
        invalid("priority 200", StreamPriority::new(200))?;
        ok("Stream::destroy", stream.destroy())
    });
}

#[test]
fn misaligned_offsets_and_pointers_are_refused() {
    let _serial = serial();
    case("maps at misaligned or out-of-range offsets", |d| {
        let (prop, size) = granule(d);
        let range = ok("reserve", VirtualRange::reserve(2 * size))?;
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        invalid("half a granule", range.map(size / 2, &physical))?;
        invalid("one page", range.map(4096, &physical))?;
        invalid("past the end", range.map(2 * size, &physical))?;
        invalid("offset overflow", range.map(usize::MAX - 1, &physical))?;
        let region = ok("map", range.map(0, &physical))?;
        let second = ok("second allocation", PhysicalAlloc::new(&prop, size))?;
        invalid("overlap", range.map(0, &second))?;
        ok("unmap", region.unmap())
    });
    case("physical and reserved sizes off the granularity", |d| {
        let (prop, size) = granule(d);
        // Checked in Rust, before any call, the same way for both, with the
        // granularity in the message and the fix.
        for (what, result) in [
            (
                "PhysicalAlloc::new(granule + 4 KiB)",
                PhysicalAlloc::new(&prop, size + 4096).err(),
            ),
            ("reserve(granule + 4 KiB)", VirtualRange::reserve(size + 4096).err()),
            ("reserve(3000)", VirtualRange::reserve(3000).err()),
        ] {
            let expected = format!("is not a positive multiple of the granularity, {}", size >> 20);
            match result {
                Some(error @ Error::InvalidArgument { .. })
                    if error.to_string().contains(&expected) && error.to_string().contains("round it up") => {}
                other => {
                    return Err(format!(
                        "{what}: expected InvalidArgument naming the granularity, got {other:?}"
                    ));
                }
            }
        }
        Ok(())
    });
    case("reserve_at a misaligned or busy address", |d| {
        let (_, size) = granule(d);
        let range = ok("reserve", VirtualRange::reserve(size))?;
        let base = range.base() as usize;
        invalid("misaligned", VirtualRange::reserve_at(size, base + size / 2))?;
        acl(
            "in use",
            VirtualRange::reserve_at(size, base),
            "aclrtReserveMemAddress",
            sys::ACL_ERROR_RT_PARAM_INVALID,
        )?;
        invalid("address 0", VirtualRange::reserve_at(size, 0))
    });
    case("host registration of a misaligned pointer", |d| {
        let mut buf = ok("AlignedHostBuf::zeroed", AlignedHostBuf::<u8>::zeroed(8192))?;
        invalid(
            "register_v2(&mut buf[1..])",
            HostRegistration::register_v2(d, &mut buf[1..], HostRegisterFlags::MAPPED),
        )
    });
    case("views of a mapping in an element type that does not divide it", |d| {
        let (prop, size) = granule(d);
        let range = ok("reserve", VirtualRange::reserve(size))?;
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        let region = ok("map", range.map(0, &physical))?;
        invalid("as_slice::<[u8; 3]>", region.as_slice::<[u8; 3]>())
    });
}

#[test]
fn mismatched_lengths_are_refused_before_any_call() {
    let _serial = serial();
    case("synchronous copies", |d| {
        let mut buf = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 4))?;
        let other = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 5))?;
        invalid("write_from_host(3)", buf.write_from_host(&[1, 2, 3]))?;
        invalid("copy_to_host(5)", buf.read_to_host(&mut [0; 5]))?;
        invalid("copy_from_device(5)", buf.copy_from_device(&other))?;
        let view = ok("slice", buf.as_slice().slice(1..3))?;
        invalid("a sub-view into 3", view.read_to_host(&mut [0; 3]))?;
        if ok("to_vec", buf.to_vec())? != [0; 4] {
            return Err("a refused copy changed the buffer".into());
        }
        Ok(())
    });
    case("scoped asynchronous copies", |d| {
        let stream = ok("Stream::new", Stream::new(d))?;
        let host = ok("PinnedHostBuf::from_slice", PinnedHostBuf::from_slice(d, &[9u16; 3]))?;
        let mut back = ok("PinnedHostBuf::zeroed", PinnedHostBuf::<u16>::zeroed(d, 5))?;
        let mut on_device = ok("DeviceBuf::zeroed", DeviceBuf::<u16>::zeroed(d, 4))?;
        let source = ok("DeviceBuf::zeroed", DeviceBuf::<u16>::zeroed(d, 2))?;
        invalid(
            "copy_to_device(3 -> 4)",
            stream.scope(|s| s.copy_to_device(&host, &mut on_device)),
        )?;
        invalid(
            "copy_to_host(4 -> 5)",
            stream.scope(|s| s.copy_to_host(&on_device, &mut back)),
        )?;
        invalid(
            "copy_on_device(2 -> 4)",
            stream.scope(|s| s.copy_on_device(&source, &mut on_device)),
        )?;
        if ok("to_vec", on_device.to_vec())? != [0; 4] {
            return Err("a refused scoped copy changed the buffer".into());
        }
        ok("Stream::destroy", stream.destroy())
    });
    case("stream-ordered copies refuse a mismatch before queueing", |d| {
        let stream = std::sync::Arc::new(ok("Stream::new", Stream::new(d))?);
        let host = ascend::stream::Ordered::new(ok("PinnedHostBuf::zeroed", PinnedHostBuf::<u8>::zeroed(d, 3))?);
        let on_device = ascend::stream::Ordered::new(ok("DeviceBuf::zeroed", DeviceBuf::<u8>::zeroed(d, 4))?);
        invalid(
            "Ordered::copy_from_host(3 -> 4)",
            on_device.copy_from_host(&host, &stream),
        )?;
        if on_device.is_busy() {
            return Err("a refused copy left work queued".into());
        }
        Ok(())
    });
}

#[test]
fn wrong_devices_are_refused() {
    let _serial = serial();
    case("Device::new with ids out of range", |_| {
        let count = ok("Device::count", Device::count())? as i32;
        for id in [-1, count, 64, i32::MAX, i32::MIN] {
            // A fresh thread, so that no device is current there yet.
            let result = std::thread::spawn(move || Device::new(id))
                .join()
                .map_err(|_| format!("Device::new({id}) panicked"))?;
            acl(
                &format!("Device::new({id})"),
                result,
                "aclrtSetDevice",
                sys::ACL_ERROR_RT_INVALID_DEVICEID,
            )?;
            // And on a thread where device 0 is current.
            acl(
                &format!("Device::new({id}) after device 0"),
                Device::new(id),
                "aclrtSetDevice",
                sys::ACL_ERROR_RT_INVALID_DEVICEID,
            )?;
        }
        Ok(())
    });
    case("physical memory on a device that does not exist", |_| {
        let prop = PhysicalMemProp::new(MemLocation::Device(64), MemAttr::HUGE);
        acl(
            "granularity of device 64",
            PhysicalAlloc::new(&prop, 2 << 20),
            "aclrtMemGetAllocationGranularity",
            sys::ACL_ERROR_RT_INVALID_DEVICEID,
        )
    });
    case("a device is not its own peer", |d| {
        invalid("can_access_peer(self)", d.can_access_peer(d))?;
        invalid("enable_peer_access(self)", d.enable_peer_access(d))
    });
    case("access for a device that does not exist", |d| {
        let (prop, size) = granule(d);
        let range = ok("reserve", VirtualRange::reserve(size))?;
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        let mut region = ok("map_no_access", range.map_no_access(0, &physical))?;
        acl(
            "set_access(Device(64))",
            region.set_access(&[AccessDesc::read_write(MemLocation::Device(64))]),
            "aclrtMemSetAccess",
            sys::ACL_ERROR_RT_INVALID_DEVICEID,
        )?;
        if region.is_accessible() {
            return Err("a refused set_access made the mapping accessible".into());
        }
        Ok(())
    });
}

#[test]
fn views_out_of_bounds_are_refused() {
    let _serial = serial();
    case("sub-views", |d| {
        let mut buf = ok("from_slice", DeviceBuf::from_slice(d, &[10u16, 11, 12, 13]))?;
        let view = buf.as_slice();
        invalid("2..9", view.slice(2..9))?;
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = view.slice(3..2);
        invalid("3..2", reversed)?;
        invalid("..=usize::MAX", view.slice(..=usize::MAX))?;
        invalid("usize::MAX..", view.slice(usize::MAX..))?;
        invalid("5..", view.slice(5..))?;
        let tail = ok("1..", view.slice(1..))?;
        invalid("a sub-view's 1..4", tail.slice(1..4))?;
        if !ok("4..4", view.slice(4..4))?.is_empty() {
            return Err("4..4 is not empty".into());
        }
        let mut whole = buf.as_mut_slice();
        invalid("slice_mut(3..5)", whole.slice_mut(3..5))?;
        invalid("slice_mut(..=4)", whole.slice_mut(..=4))?;
        Ok(())
    });
}

#[test]
fn two_d_shapes_that_do_not_fit_are_refused() {
    let _serial = serial();
    case("synchronous 2-D copies", |d| {
        let mut buf = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 12))?;
        let host = [1u32; 12];
        invalid(
            "4 x 4 into 12",
            buf.as_mut_slice().write_from_host_2d(&[1; 16], Copy2d::new(4, 4)),
        )?;
        invalid(
            "source too short",
            buf.as_mut_slice().write_from_host_2d(&host[..5], Copy2d::new(3, 2)),
        )?;
        invalid(
            "width above the pitch",
            buf.as_mut_slice()
                .write_from_host_2d(&host, Copy2d::new(4, 2).with_dst_pitch(3)),
        )?;
        invalid(
            "read 4 rows of pitch 5 from 12",
            buf.as_slice()
                .read_to_host_2d(&mut [0; 8], Copy2d::new(2, 4).with_src_pitch(5)),
        )?;
        invalid("dst_extent", Copy2d::new(4, 3).with_dst_pitch(2).dst_extent())?;
        if ok("to_vec", buf.to_vec())? != [0; 12] {
            return Err("a refused 2-D copy changed the buffer".into());
        }
        Ok(())
    });
    case("2-D shapes above the runtime's limits", |d| {
        // They fit both buffers, so only the runtime can refuse them.
        let rows = 5_242_881;
        let mut tall = ok("zeroed", DeviceBuf::<u8>::zeroed(d, rows))?;
        acl(
            "height 5 242 881",
            tall.as_mut_slice()
                .write_from_host_2d(&vec![0; rows], Copy2d::new(1, rows)),
            "aclrtMemcpy2d",
            sys::ACL_ERROR_RT_PARAM_INVALID,
        )?;
        let wide = 5_000_001;
        let mut buf = ok("zeroed", DeviceBuf::<u8>::zeroed(d, wide))?;
        acl(
            "width 5 000 001",
            buf.as_mut_slice()
                .write_from_host_2d(&vec![0; wide], Copy2d::new(wide, 1)),
            "aclrtMemcpy2d",
            sys::ACL_ERROR_RT_PARAM_INVALID,
        )
    });
    case("scoped 2-D copies", |d| {
        let stream = ok("Stream::new", Stream::new(d))?;
        let host = ok("PinnedHostBuf::zeroed", PinnedHostBuf::<u8>::zeroed(d, 10))?;
        let mut on_device = ok("DeviceBuf::zeroed", DeviceBuf::<u8>::zeroed(d, 10))?;
        invalid(
            "3 x 4 from 10",
            stream.scope(|s| s.copy_to_device_2d(&host, &mut on_device, Copy2d::new(3, 4))),
        )?;
        ok("Stream::destroy", stream.destroy())
    });
}

#[test]
fn argument_errors_name_the_method_called_and_its_c_function() {
    let _serial = serial();
    case("the method and the C call in each argument error", |d| {
        let (prop, size) = granule(d);
        let mut buf = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 4))?;
        let other = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 5))?;
        invalid_from(
            "copy_from_host(3 into 4)",
            buf.write_from_host(&[1, 2, 3]),
            "DeviceBuf::write_from_host",
            "aclrtMemcpy",
        )?;
        invalid_from(
            "copy_to_host(4 into 5)",
            buf.read_to_host(&mut [0; 5]),
            "DeviceBuf::read_to_host",
            "aclrtMemcpy",
        )?;
        invalid_from(
            "copy_from_device(5 into 4)",
            buf.copy_from_device(&other),
            "DeviceBuf::copy_from_device",
            "aclrtMemcpy",
        )?;
        invalid_from(
            "a view's copy_from_host(3 into 4)",
            buf.as_mut_slice().write_from_host(&[1, 2, 3]),
            "DeviceSliceMut::write_from_host",
            "aclrtMemcpy",
        )?;
        invalid_from(
            "reserve(3000)",
            VirtualRange::reserve(3000),
            "VirtualRange::reserve",
            "aclrtReserveMemAddress",
        )?;
        invalid_from(
            "PhysicalAlloc::new(granule + 4 KiB)",
            PhysicalAlloc::new(&prop, size + 4096),
            "PhysicalAlloc::new",
            "aclrtMallocPhysical",
        )?;
        let range = ok("reserve", VirtualRange::reserve(2 * size))?;
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        invalid_from(
            "map(half a granule)",
            range.map(size / 2, &physical),
            "VirtualRange::map",
            "aclrtMapMem",
        )?;
        invalid_from(
            "DeviceBuf::slice(2..9)",
            buf.slice(2..9),
            "DeviceBuf::slice",
            "DeviceBuf::slice",
        )?;
        invalid_from(
            "DeviceSlice::slice(2..9)",
            buf.as_slice().slice(2..9),
            "DeviceSlice::slice",
            "DeviceSlice::slice",
        )?;
        invalid_from(
            "DeviceBuf::slice_mut(3..5)",
            buf.slice_mut(3..5),
            "DeviceBuf::slice_mut",
            "DeviceBuf::slice_mut",
        )?;
        invalid_from(
            "synchronous 2-D copy, 4 x 4 into 4",
            buf.as_mut_slice().write_from_host_2d(&[1; 16], Copy2d::new(4, 4)),
            "DeviceSliceMut::write_from_host_2d",
            "aclrtMemcpy2d",
        )?;
        let stream = ok("Stream::new", Stream::new(d))?;
        let host = ok("PinnedHostBuf::zeroed", PinnedHostBuf::<u8>::zeroed(d, 10))?;
        let mut on_device = ok("DeviceBuf::zeroed", DeviceBuf::<u8>::zeroed(d, 10))?;
        let mut four = ok("DeviceBuf::zeroed", DeviceBuf::<u8>::zeroed(d, 4))?;
        invalid_from(
            "stream 2-D copy, 3 x 4 from 10",
            stream.scope(|s| s.copy_to_device_2d(&host, &mut on_device, Copy2d::new(3, 4))),
            "AsyncScope::copy_to_device_2d",
            "aclrtMemcpy2dAsync",
        )?;
        invalid_from(
            "stream copy, 10 into 4",
            stream.scope(|s| s.copy_to_device(&host, &mut four)),
            "AsyncScope::copy_to_device",
            "aclrtMemcpyAsync",
        )?;
        ok("Stream::destroy", stream.destroy())?;
        let ordered = Ordered::new(ok("DeviceBuf::zeroed", DeviceBuf::<u8>::zeroed(d, 8))?);
        invalid_from(
            "Ordered::bytes(4..9)",
            ordered.bytes(4..9),
            "Ordered::bytes",
            "Ordered::bytes",
        )?;
        invalid_from(
            "OrderedView::bytes(4..9)",
            ordered.view().bytes(4..9),
            "OrderedView::bytes",
            "OrderedView::bytes",
        )?;
        invalid_from(
            "PoolConfig::parse(an unknown key)",
            PoolConfig::parse("no_such_key:1"),
            "PoolConfig::parse",
            "PoolConfig::parse",
        )?;
        invalid_from(
            "DeviceBuf::zeroed(usize::MAX)",
            DeviceBuf::<u32>::zeroed(d, usize::MAX),
            "DeviceBuf::zeroed",
            "aclrtMalloc",
        )?;
        Ok(())
    });
}

/// Raw calls with handles that were freed, released, destroyed or never
/// existed: the software device's documented codes, and nothing changes.
#[test]
fn stale_and_unknown_handles_are_refused_by_the_runtime() {
    let _serial = serial();
    if !on_software() {
        eprintln!("raw calls with stale handles are undefined behaviour on hardware; skipped");
        return;
    }
    case("a freed device buffer", |d| {
        let buf = ok("zeroed", DeviceBuf::<u8>::zeroed(d, 256))?;
        let raw = buf.as_raw();
        ok("free", buf.free())?;
        let data = [1u8; 16];
        // SAFETY: the software device validates the stale pointer against
        // its table; nothing is dereferenced.
        unsafe {
            code("aclrtFree(stale)", sys::aclrtFree(raw), sys::ACL_ERROR_RT_PARAM_INVALID)?;
            code(
                "aclrtMemcpy(stale)",
                sys::aclrtMemcpy(raw, 16, data.as_ptr().cast(), 16, sys::ACL_MEMCPY_HOST_TO_DEVICE),
                sys::ACL_ERROR_RT_PARAM_INVALID,
            )?;
            code(
                "aclrtMemset(stale)",
                sys::aclrtMemset(raw, 16, 0, 16),
                sys::ACL_ERROR_RT_PARAM_INVALID,
            )
        }
    });
    case("an interior device pointer", |d| {
        let buf = ok("zeroed", DeviceBuf::<u8>::zeroed(d, 256))?;
        let interior = (buf.as_raw() as usize + 64) as *mut c_void;
        // SAFETY: validated by the software device; nothing is freed.
        code(
            "aclrtFree(interior)",
            unsafe { sys::aclrtFree(interior) },
            sys::ACL_ERROR_RT_PARAM_INVALID,
        )?;
        ok("free", buf.free())
    });
    case("a freed pinned host buffer", |d| {
        let buf = ok("zeroed", PinnedHostBuf::<u8>::zeroed(d, 256))?;
        let raw = buf.as_ptr() as *mut c_void;
        ok("free", buf.free())?;
        // SAFETY: validated against the table; not dereferenced.
        code(
            "aclrtFreeHost(stale)",
            unsafe { sys::aclrtFreeHost(raw) },
            sys::ACL_ERROR_RT_PARAM_INVALID,
        )
    });
    case("a freed physical allocation", |d| {
        let (prop, size) = granule(d);
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        let handle = physical.as_raw();
        ok("free", physical.free())?;
        let range = ok("reserve", VirtualRange::reserve(size))?;
        let mut reported = sys::aclrtPhysicalMemProp::default();
        // SAFETY: the handle is an opaque token the software device checks.
        unsafe {
            code(
                "aclrtFreePhysical(stale)",
                sys::aclrtFreePhysical(handle),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )?;
            code(
                "aclrtMapMem(stale)",
                sys::aclrtMapMem(range.base(), size, 0, handle, 0),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )?;
            code(
                "aclrtMemGetAllocationPropertiesFromHandle(stale)",
                sys::aclrtMemGetAllocationPropertiesFromHandle(handle, &mut reported),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )?;
            code(
                "aclrtFreePhysical(never a handle)",
                sys::aclrtFreePhysical(0x1234_5000 as sys::aclrtDrvMemHandle),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )?;
        }
        ok("release", range.release())
    });
    case("a released range and an unmapped region", |d| {
        let (prop, size) = granule(d);
        let range = ok("reserve", VirtualRange::reserve(size))?;
        let physical = ok("new", PhysicalAlloc::new(&prop, size))?;
        let region = ok("map", range.map(0, &physical))?;
        let address = region.address();
        ok("unmap", region.unmap())?;
        let mut retained = null_mut();
        // SAFETY: validated against the tables; nothing is dereferenced.
        unsafe {
            code(
                "aclrtUnmapMem(stale)",
                sys::aclrtUnmapMem(address),
                sys::ACL_ERROR_RT_PARAM_INVALID,
            )?;
            code(
                "aclrtMemRetainAllocationHandle(unmapped)",
                sys::aclrtMemRetainAllocationHandle(address, &mut retained),
                sys::ACL_ERROR_RT_PARAM_INVALID,
            )?;
        }
        let base = range.base();
        ok("release", range.release())?;
        // SAFETY: as above.
        unsafe {
            code(
                "aclrtReleaseMemAddress(stale)",
                sys::aclrtReleaseMemAddress(base),
                sys::ACL_ERROR_RT_PARAM_INVALID,
            )?;
            code(
                "aclrtMapMem(released range)",
                sys::aclrtMapMem(base, size, 0, physical.as_raw(), 0),
                sys::ACL_ERROR_RT_PARAM_INVALID,
            )?;
        }
        ok("free", physical.free())
    });
    case("a destroyed stream and event", |d| {
        let stream = ok("Stream::new", Stream::new(d))?;
        let event = ok("Event::new", Event::new(d))?;
        let (raw_stream, raw_event) = (stream.as_raw(), event.as_raw());
        ok("Stream::destroy", stream.destroy())?;
        ok("Event::destroy", event.destroy())?;
        // SAFETY: the software device checks handles against its tables.
        unsafe {
            code(
                "aclrtSynchronizeStream(stale)",
                sys::aclrtSynchronizeStream(raw_stream),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )?;
            code(
                "aclrtDestroyStream(stale)",
                sys::aclrtDestroyStream(raw_stream),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )?;
            code(
                "aclrtDestroyEvent(stale)",
                sys::aclrtDestroyEvent(raw_event),
                sys::ACL_ERROR_RT_INVALID_HANDLE,
            )
        }
    });
    case("an unregistered host range", |d| {
        let mut buf = ok("AlignedHostBuf::zeroed", AlignedHostBuf::<u8>::zeroed(4096))?;
        let pointer = buf.as_mut_ptr().cast::<c_void>();
        let registration = ok(
            "register_v2",
            HostRegistration::register_v2(d, &mut buf, HostRegisterFlags::MAPPED),
        )?;
        ok("unregister", registration.unregister())?;
        // SAFETY: validated against the registration table.
        code(
            "aclrtHostUnregister(stale)",
            unsafe { sys::aclrtHostUnregister(pointer) },
            sys::ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
        )
    });
    case("a closed IPC key", |d| {
        let buf = ok("zeroed", DeviceBuf::<u32>::zeroed(d, 1024))?;
        let export = ok("ipc_export", buf.ipc_export())?;
        let key = export.key().as_c_str().to_owned();
        ok("close", export.close())?;
        // SAFETY: a NUL-terminated key, only looked up.
        code(
            "aclrtIpcMemClose(closed)",
            unsafe { sys::aclrtIpcMemClose(key.as_ptr()) },
            sys::ACL_ERROR_RT_PARAM_INVALID,
        )?;
        ok("free", buf.free())
    });
    // A destroyed allocator descriptor is recorded as misuse (the real
    // runtime would corrupt memory), and refused.
    case_with_misuse("a destroyed allocator descriptor", 1, |d| {
        struct Never;
        // SAFETY: never hands out a block.
        unsafe impl ascend::allocator::DeviceAllocator for Never {
            fn alloc(&self, _: usize) -> Option<ascend::allocator::Block> {
                None
            }
            fn free(&self, _: ascend::allocator::Block) {}
        }
        let stream = ok("Stream::new", Stream::new(d))?;
        let registration = ok(
            "register",
            ascend::allocator::AllocatorRegistration::register(&stream, std::sync::Arc::new(Never)),
        )?;
        let descriptor = registration.descriptor_raw();
        ok("unregister", registration.unregister())?;
        // SAFETY: the software device never dereferences a descriptor
        // handle; it checks it against its table.
        code(
            "aclrtAllocatorDestroyDesc(stale)",
            unsafe { sys::aclrtAllocatorDestroyDesc(descriptor) },
            sys::ACL_ERROR_INVALID_PARAM,
        )?;
        ok("Stream::destroy", stream.destroy())
    });
}

/// A framework's own errors travel in `ascend::Error` (issue 39): built
/// with `Error::external` or converted from `std::io::Error` by `?`, with
/// the error itself as the source, and the type stays `Send + Sync`.
#[test]
fn external_errors_carry_their_source_and_context() {
    use std::error::Error as _;
    fn assert_thread_safe<T: Send + Sync + 'static>() {}
    assert_thread_safe::<Error>();
    fn read(path: &str) -> ascend::Result<Vec<u8>> {
        Ok(std::fs::read(path)?)
    }
    let error = read("/no/such/ascend/file").unwrap_err();
    assert!(matches!(&error, Error::External { context, .. } if context == "I/O error"));
    let io = error
        .source()
        .and_then(|source| source.downcast_ref::<std::io::Error>());
    assert_eq!(io.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
    assert!(error.to_string().starts_with("I/O error: "), "{error}");
    assert_eq!(error.code(), None, "no AscendCL code");
    // A message, and equality: a clone shares the source, a rebuild does not.
    let refused = Error::external("Tensor::reshape", format!("{} elements into {}", 6, 4));
    assert_eq!(refused.to_string(), "Tensor::reshape: 6 elements into 4");
    assert_eq!(refused.clone(), refused);
    assert_ne!(Error::external("Tensor::reshape", "6 elements into 4"), refused);
    assert_ne!(refused, error);
    // Boxed into `dyn Error`, the chain reaches the I/O error.
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    assert!(boxed.source().is_some());
}
