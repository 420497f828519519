//! Fault injection over the safe operations: each operation that makes
//! AscendCL calls is run once per call it makes, with that call failing
//! (`ascend::sys::soft::inject_fault`), and must clean up after itself.
//!
//! Each operation lists the calls it makes, read from its source, as data
//! (`(api, times)`). A first run with no fault checks the list: a sentinel
//! fault armed far in the future on every watched function counts the calls
//! the operation really makes, and the count must equal the list (so a
//! change to an operation's calls shows up here). Then for every `(api,
//! nth)` in the list the `nth` call of `api` fails with [`CODE`], and:
//!
//! - the injected fault fired inside the operation (the call happens);
//! - the operation returns an `Err`, carrying [`CODE`] (or the code the
//!   crate documents for that failure) — and does not panic;
//! - nothing leaks: `soft::live()` equals its value before the operation
//!   once everything made around it is freed;
//! - nothing is freed twice: the explicit `free`/`destroy`/... of every
//!   object made around the operation succeeds, and `soft::misuse()` does
//!   not grow.
//!
//! Software device only (faults and counts come from `ascend::sys::soft`):
//! on another backend every test returns at once. The tests share one
//! file-local lock because armed faults and live counts are process-wide.
//! `ImportedAlloc::import` and `IpcImport::open` need memory exported by
//! another process: the test starts this binary again as a child exporter.
//! The sweep is exhaustive and deterministic (one run per listed call), so
//! `ASCEND_TEST_SCALE` does not change it; the whole file runs in a few
//! seconds.

mod common;

use ascend::allocator::{AllocatorRegistration, Block, DeviceAllocator};
use ascend::host_register::{AlignedHostBuf, HostMallocConfig, HostRegisterFlags, HostRegisterType, HostRegistration};
use ascend::share::{ImportedAlloc, IpcImport, IpcKey, PidValidation, ShareKind, ShareableHandle};
use ascend::stream::{
    Copy2d, DeviceFlag, Event, EventFlags, Ordered, Stream, StreamFlags, StreamPriority, ValueCondition,
};
use ascend::sys::{self, soft};
use ascend::vmm::{AccessDesc, MemLocation, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Device, DeviceBuf, PinnedHostBuf, Runtime};
use common::on_software;
use std::cell::RefCell;
use std::io::{BufRead, BufReader, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

/// The code every injected fault returns: a driver error no argument check
/// produces, so it can only come from the injection.
const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

/// How far ahead the counting sentinels are armed.
const SENTINEL: u64 = 1 << 40;

/// Every function whose calls the counting run watches: the union of the
/// lists below, plus the frees and context calls an operation must *not*
/// make when it succeeds.
const WATCHED: &[&str] = &[
    "aclInit",
    "aclFinalize",
    "aclrtSetDevice",
    "aclrtResetDevice",
    "aclrtMalloc",
    "aclrtFree",
    "aclrtMemset",
    "aclrtMemcpy",
    "aclrtMemcpy2d",
    "aclrtMallocHost",
    "aclrtMallocHostWithCfg",
    "aclrtFreeHost",
    "aclrtMemGetAllocationGranularity",
    "aclrtMallocPhysical",
    "aclrtFreePhysical",
    "aclrtReserveMemAddress",
    "aclrtReleaseMemAddress",
    "aclrtMapMem",
    "aclrtMemMapNoAccess",
    "aclrtUnmapMem",
    "aclrtMemSetAccess",
    "aclrtMemRetainAllocationHandle",
    "aclrtMemGetAllocationPropertiesFromHandle",
    "aclrtMemExportToShareableHandle",
    "aclrtMemExportToShareableHandleV2",
    "aclrtMemSetPidToShareableHandleV2",
    "aclrtMemImportFromShareableHandle",
    "aclrtMemImportFromShareableHandleV2",
    "aclrtIpcMemGetExportKey",
    "aclrtIpcMemImportByKey",
    "aclrtIpcMemClose",
    "aclrtHostRegister",
    "aclrtHostRegisterV2",
    "aclrtHostUnregister",
    "aclrtHostGetDevicePointer",
    "aclrtCreateStream",
    "aclrtCreateStreamWithConfig",
    "aclrtDestroyStream",
    "aclrtCreateEvent",
    "aclrtCreateEventWithFlag",
    "aclrtDestroyEvent",
    "aclrtRecordEvent",
    "aclrtStreamWaitEvent",
    "aclrtValueWrite",
    "aclrtValueWait",
    "aclrtMemcpyAsync",
    "aclrtMemsetAsync",
    "aclrtSynchronizeStream",
    "aclrtAllocatorCreateDesc",
    "aclrtAllocatorDestroyDesc",
    "aclrtAllocatorSetObjToDesc",
    "aclrtAllocatorSetAllocFuncToDesc",
    "aclrtAllocatorSetFreeFuncToDesc",
    "aclrtAllocatorSetAllocAdviseFuncToDesc",
    "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
    "aclrtAllocatorRegister",
    "aclrtAllocatorGetByStream",
    "aclrtAllocatorUnregister",
];

/// The calls of one operation: `(api, times)`.
type Calls = &'static [(&'static str, u64)];

/// The code an operation reports when `api` fails: [`CODE`], except where
/// the C function signals failure by a NULL return (the crate reports
/// `ACL_ERROR_BAD_ALLOC` then).
fn expected_code(api: &str) -> sys::aclError {
    match api {
        "aclrtAllocatorCreateDesc" => sys::ACL_ERROR_BAD_ALLOC,
        _ => CODE,
    }
}

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the window of the current run does.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// No fault; count the calls (sentinels are armed).
    Count,
    /// The `nth` call of `api` fails.
    Fault(&'static str, u64),
}

/// The operation's window in one run of a sweep.
struct Window {
    name: &'static str,
    calls: Calls,
    mode: Mode,
    /// Whether `op` ran (each body must call it exactly once).
    ran: RefCell<bool>,
}

impl Window {
    /// Runs the operation with the fault (or the counting sentinels) armed
    /// for exactly its duration, and checks its outcome; returns what it
    /// made on success (only in the counting run).
    fn op<T>(&self, operation: impl FnOnce() -> ascend::Result<T>) -> Option<T> {
        assert!(
            !self.ran.replace(true),
            "{}: the body ran the operation twice",
            self.name
        );
        soft::clear_faults();
        match self.mode {
            Mode::Count => {
                for api in WATCHED {
                    soft::inject_fault(api, SENTINEL, CODE).expect("a watched function");
                }
            }
            Mode::Fault(api, nth) => soft::inject_fault(api, nth, CODE).expect("a listed function"),
        }
        let outcome = catch_unwind(AssertUnwindSafe(operation));
        let left = soft::armed_faults();
        soft::clear_faults();
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(_) => panic!("{} panicked under {:?}", self.name, self.mode),
        };
        match self.mode {
            Mode::Count => {
                let made = match outcome {
                    Ok(made) => made,
                    Err(error) => panic!("{} failed with no fault: {error}", self.name),
                };
                // A test thread that ends resets the devices it set
                // (`aclrtResetDevice` at thread exit), possibly while the
                // next test counts: device set/reset calls count only for
                // operations that list them.
                let lists = |api: &str| self.calls.iter().any(|(listed, _)| *listed == api);
                let mut counted: Vec<(&str, u64)> = left
                    .iter()
                    .filter(|(_, remaining, _)| *remaining < SENTINEL)
                    .filter(|(api, _, _)| !matches!(api.as_str(), "aclrtSetDevice" | "aclrtResetDevice") || lists(api))
                    .map(|(api, remaining, _)| {
                        let api = WATCHED.iter().copied().find(|w| *w == api.as_str()).unwrap_or("?");
                        (api, SENTINEL - remaining)
                    })
                    .collect();
                counted.sort_unstable();
                let mut listed = self.calls.to_vec();
                listed.sort_unstable();
                assert_eq!(
                    counted, listed,
                    "{}: the calls made (left) differ from the calls listed (right)",
                    self.name
                );
                Some(made)
            }
            Mode::Fault(api, nth) => {
                assert!(
                    left.is_empty(),
                    "{}: the fault on call {nth} of {api} never fired",
                    self.name
                );
                match outcome {
                    Ok(_) => panic!("{} succeeded although call {nth} of {api} failed", self.name),
                    Err(error) => {
                        if let Some(code) = error.code() {
                            assert_eq!(
                                code.0,
                                expected_code(api),
                                "{}: call {nth} of {api} failed, but the error is {error}",
                                self.name
                            );
                        }
                        None
                    }
                }
            }
        }
    }
}

/// Sweeps one operation: `body` sets up what the operation needs, calls
/// [`Window::op`] once, and frees everything (the operation's product
/// included, when it made one) through the explicit consuming methods,
/// asserting that each succeeds.
fn sweep(name: &'static str, calls: Calls, body: impl Fn(&Window)) {
    let mut modes = vec![Mode::Count];
    for &(api, times) in calls {
        modes.extend((1..=times).map(|nth| Mode::Fault(api, nth)));
    }
    for mode in modes {
        let before = soft::live();
        let misuse = soft::misuse().len();
        let window = Window {
            name,
            calls,
            mode,
            ran: RefCell::new(false),
        };
        body(&window);
        assert!(*window.ran.borrow(), "{name}: the body never ran the operation");
        let after = soft::live();
        assert_eq!(
            after,
            before,
            "{name} under {mode:?} leaked (or freed what it did not own):\n{}",
            soft::leak_report()
        );
        assert_eq!(
            soft::misuse().len(),
            misuse,
            "{name} under {mode:?}: the software device recorded misuse: {:?}",
            soft::misuse()
        );
    }
}

/// Asserts an explicit free (or another clean-up call) succeeded.
fn freed(what: &str, result: ascend::Result<()>) {
    if let Err(error) = result {
        panic!("{what} failed: {error}");
    }
}

/// The start of every test: the lock, and device 0 current on this thread
/// (so that no operation's count includes the thread's first
/// `aclrtSetDevice`). `None` off the software device.
fn start() -> Option<(MutexGuard<'static, ()>, Device)> {
    let guard = serial();
    if !on_software() {
        eprintln!("fault injection needs the software device; skipped");
        return None;
    }
    soft::clear_faults();
    Some((guard, common::device()))
}

fn granule(device: &Device) -> (PhysicalMemProp, usize) {
    let prop = PhysicalMemProp::device(device);
    let size = prop.round_up(1).expect("granularity");
    (prop, size)
}

#[test]
fn device_and_host_buffers_clean_up_after_each_failed_call() {
    let Some((_serial, device)) = start() else { return };
    let data: Vec<u32> = (0..1000).collect();
    sweep("DeviceBuf::zeroed", &[("aclrtMalloc", 1), ("aclrtMemset", 1)], |w| {
        if let Some(buf) = w.op(|| DeviceBuf::<u32>::zeroed(&device, 1000)) {
            freed("DeviceBuf::free", buf.free());
        }
    });
    sweep(
        "DeviceBuf::from_slice",
        &[("aclrtMalloc", 1), ("aclrtMemcpy", 1)],
        |w| {
            if let Some(buf) = w.op(|| DeviceBuf::from_slice(&device, &data)) {
                freed("DeviceBuf::free", buf.free());
            }
        },
    );
    sweep("DeviceBuf::to_vec", &[("aclrtMemcpy", 1)], |w| {
        let buf = DeviceBuf::from_slice(&device, &data).expect("setup");
        if let Some(read) = w.op(|| buf.to_vec()) {
            assert_eq!(read, data);
        }
        freed("DeviceBuf::free", buf.free());
    });
    sweep("DeviceSliceMut::write_from_host_2d", &[("aclrtMemcpy2d", 1)], |w| {
        let mut buf = DeviceBuf::<u32>::zeroed(&device, 64).expect("setup");
        w.op(|| buf.as_mut_slice().write_from_host_2d(&data[..64], Copy2d::new(8, 8)));
        freed("DeviceBuf::free", buf.free());
    });
    sweep("PinnedHostBuf::from_slice", &[("aclrtMallocHost", 1)], |w| {
        if let Some(buf) = w.op(|| PinnedHostBuf::from_slice(&device, &data)) {
            assert_eq!(&buf[..], &data[..]);
            freed("PinnedHostBuf::free", buf.free());
        }
    });
    let config = HostMallocConfig::new().with_module_id(7);
    sweep(
        "PinnedHostBuf::zeroed_with_config",
        &[("aclrtMallocHostWithCfg", 1)],
        |w| {
            if let Some(buf) = w.op(|| PinnedHostBuf::<u8>::zeroed_with_config(&device, 4096, &config)) {
                freed("PinnedHostBuf::free", buf.free());
            }
        },
    );
}

#[test]
fn vmm_operations_clean_up_after_each_failed_call() {
    let Some((_serial, device)) = start() else { return };
    let (prop, size) = granule(&device);
    sweep(
        "PhysicalAlloc::new",
        &[("aclrtMemGetAllocationGranularity", 1), ("aclrtMallocPhysical", 1)],
        |w| {
            if let Some(physical) = w.op(|| PhysicalAlloc::new(&prop, size)) {
                freed("PhysicalAlloc::free", physical.free());
            }
        },
    );
    sweep(
        "PhysicalMemProp::round_up",
        &[("aclrtMemGetAllocationGranularity", 1)],
        |w| {
            if let Some(rounded) = w.op(|| prop.round_up(1)) {
                assert_eq!(rounded, size);
            }
        },
    );
    let reserve_calls: Calls = &[("aclrtMemGetAllocationGranularity", 1), ("aclrtReserveMemAddress", 1)];
    sweep("VirtualRange::reserve", reserve_calls, |w| {
        if let Some(range) = w.op(|| VirtualRange::reserve(2 * size)) {
            freed("VirtualRange::release", range.release());
        }
    });
    for no_access in [false, true] {
        let (name, calls): (&str, Calls) = if no_access {
            ("VirtualRange::map_no_access", &[("aclrtMemMapNoAccess", 1)])
        } else {
            ("VirtualRange::map", &[("aclrtMapMem", 1)])
        };
        sweep(name, calls, |w| {
            let range = VirtualRange::reserve(size).expect("setup");
            let physical = PhysicalAlloc::new(&prop, size).expect("setup");
            if let Some(region) = w.op(|| {
                if no_access {
                    range.map_no_access(0, &physical)
                } else {
                    range.map(0, &physical)
                }
            }) {
                freed("MappedRegion::unmap", region.unmap());
            }
            // A failed map must leave the range free for another mapping.
            let again = range.map(0, &physical).expect("mapping after a failed map");
            freed("MappedRegion::unmap", again.unmap());
            freed("PhysicalAlloc::free", physical.free());
            freed("VirtualRange::release", range.release());
        });
    }
    sweep("MappedRegion::set_access", &[("aclrtMemSetAccess", 1)], |w| {
        let range = VirtualRange::reserve(size).expect("setup");
        let physical = PhysicalAlloc::new(&prop, size).expect("setup");
        let mut region = range.map_no_access(0, &physical).expect("setup");
        let grant = [AccessDesc::read_write(MemLocation::Device(device.id()))];
        w.op(|| region.set_access(&grant));
        freed("MappedRegion::unmap", region.unmap());
        freed("PhysicalAlloc::free", physical.free());
        freed("VirtualRange::release", range.release());
    });
    sweep(
        "MappedRegion::retain_physical",
        &[
            ("aclrtMemRetainAllocationHandle", 1),
            ("aclrtMemGetAllocationGranularity", 1),
        ],
        |w| {
            let range = VirtualRange::reserve(size).expect("setup");
            let physical = PhysicalAlloc::new(&prop, size).expect("setup");
            let region = range.map(0, &physical).expect("setup");
            if let Some(retained) = w.op(|| region.retain_physical()) {
                freed("PhysicalAlloc::free (retained)", retained.free());
            }
            freed("MappedRegion::unmap", region.unmap());
            freed("PhysicalAlloc::free", physical.free());
            freed("VirtualRange::release", range.release());
        },
    );
    sweep(
        "PhysicalAlloc::export + allow_pids",
        &[
            ("aclrtMemExportToShareableHandleV2", 1),
            ("aclrtMemSetPidToShareableHandleV2", 1),
        ],
        |w| {
            let physical = PhysicalAlloc::new(&prop, size).expect("setup");
            let pid = "4242".parse().expect("a pid");
            w.op(|| {
                let export = physical.export(ShareKind::V2Default)?;
                export.allow_pids(&[pid])
            });
            freed("PhysicalAlloc::free", physical.free());
        },
    );
}

#[test]
fn streams_events_and_scopes_clean_up_after_each_failed_call() {
    let Some((_serial, device)) = start() else { return };
    sweep("Stream::new", &[("aclrtCreateStream", 1)], |w| {
        if let Some(stream) = w.op(|| Stream::new(&device)) {
            freed("Stream::destroy", stream.destroy());
        }
    });
    sweep("Stream::with_config", &[("aclrtCreateStreamWithConfig", 1)], |w| {
        let priority = StreamPriority::new(3).expect("a priority");
        if let Some(stream) = w.op(|| Stream::with_config(&device, priority, StreamFlags::FAST_LAUNCH)) {
            freed("Stream::destroy", stream.destroy());
        }
    });
    sweep("Event::new", &[("aclrtCreateEvent", 1)], |w| {
        if let Some(event) = w.op(|| Event::new(&device)) {
            freed("Event::destroy", event.destroy());
        }
    });
    sweep("Event::with_flags", &[("aclrtCreateEventWithFlag", 1)], |w| {
        if let Some(event) = w.op(|| Event::with_flags(&device, EventFlags::SYNC)) {
            freed("Event::destroy", event.destroy());
        }
    });
    let data: Vec<u32> = (0..4096).collect();
    sweep(
        "Stream::scope with two copies",
        &[("aclrtMemcpyAsync", 2), ("aclrtSynchronizeStream", 1)],
        |w| {
            let stream = Stream::new(&device).expect("setup");
            let input = PinnedHostBuf::from_slice(&device, &data).expect("setup");
            let mut output = PinnedHostBuf::<u32>::zeroed(&device, data.len()).expect("setup");
            let mut on_device = DeviceBuf::<u32>::zeroed(&device, data.len()).expect("setup");
            let done = w.op(|| {
                stream.scope(|s| {
                    let on_device = s.hold_device(&mut on_device);
                    s.copy_to_device(&input, on_device)?;
                    s.copy_to_host(on_device, &mut output)
                })
            });
            if done.is_some() {
                assert_eq!(&output[..], &data[..]);
            }
            // The stream is usable after the failure (a task failure would
            // have been reported once and drained).
            freed("Stream::synchronize", stream.synchronize());
            freed("DeviceBuf::free", on_device.free());
            freed("PinnedHostBuf::free", output.free());
            freed("PinnedHostBuf::free", input.free());
            freed("Stream::destroy", stream.destroy());
        },
    );
    sweep(
        "Stream::scope with a memset, a record and a wait",
        &[
            ("aclrtMemsetAsync", 1),
            ("aclrtRecordEvent", 1),
            ("aclrtStreamWaitEvent", 1),
            ("aclrtSynchronizeStream", 1),
        ],
        |w| {
            let stream = Stream::new(&device).expect("setup");
            let event = Event::with_flags(&device, EventFlags::SYNC).expect("setup");
            let mut on_device = DeviceBuf::<u8>::zeroed(&device, 4096).expect("setup");
            w.op(|| {
                stream.scope(|s| {
                    s.fill_bytes(&mut on_device, 0x5A)?;
                    s.record(&event)?;
                    s.wait_event(&event)
                })
            });
            freed("DeviceBuf::free", on_device.free());
            freed("Event::destroy", event.destroy());
            freed("Stream::destroy", stream.destroy());
        },
    );
    sweep(
        "DeviceFlag::new + Stream::write_value + wait_value + synchronize + DeviceFlag::get",
        &[
            ("aclrtMalloc", 1),
            ("aclrtMemcpy", 2),
            ("aclrtValueWrite", 1),
            ("aclrtValueWait", 1),
            ("aclrtSynchronizeStream", 1),
        ],
        |w| {
            let stream = Stream::new(&device).expect("setup");
            // The write is queued before the wait it satisfies, so a failed
            // write never leaves a wait nobody satisfies.
            let made = w.op(|| {
                let flag = DeviceFlag::new(&device, 0)?;
                stream.write_value(&flag, 3)?;
                stream.wait_value(&flag, 3, ValueCondition::Equal)?;
                stream.synchronize()?;
                Ok((flag.get()?, flag))
            });
            // The flag is freed (dropped) outside the window.
            if let Some((seen, _flag)) = made {
                assert_eq!(seen, 3);
            }
            // A failed synchronisation leaves the flag held by the stream
            // until its work is proven finished.
            freed("Stream::synchronize", stream.synchronize());
            freed("Stream::destroy", stream.destroy());
        },
    );
    sweep(
        "Ordered::copy_from_host + Ordered::into_inner",
        &[("aclrtMemcpyAsync", 1), ("aclrtSynchronizeStream", 1)],
        |w| {
            let stream = Arc::new(Stream::new(&device).expect("setup"));
            let host = Ordered::new(PinnedHostBuf::from_slice(&device, &data).expect("setup"));
            let on_device = Ordered::new(DeviceBuf::<u32>::zeroed(&device, data.len()).expect("setup"));
            // The device buffer moves into `into_inner`: on failure it drops it.
            if let Some(on_device) = w.op(|| {
                on_device.copy_from_host(&host, &stream)?;
                on_device.into_inner()
            }) {
                freed("DeviceBuf::free", on_device.free());
            }
            freed("PinnedHostBuf::free", host.into_inner().and_then(PinnedHostBuf::free));
            freed(
                "Stream::destroy",
                Arc::into_inner(stream).map_or(Ok(()), Stream::destroy),
            );
        },
    );
}

/// An allocator that never hands out memory (registration is what is
/// tested).
struct Empty;

// SAFETY: it never returns a block.
unsafe impl DeviceAllocator for Empty {
    fn alloc(&self, _size: usize) -> Option<Block> {
        None
    }
    fn free(&self, _block: Block) {}
}

#[test]
fn registrations_and_runtime_init_clean_up_after_each_failed_call() {
    let Some((_serial, device)) = start() else { return };
    sweep("Runtime::init", &[("aclInit", 1)], |w| {
        // Dropping the last handle finalizes (a normal way to end it).
        drop(w.op(Runtime::init));
    });
    sweep("HostRegistration::register_v2", &[("aclrtHostRegisterV2", 1)], |w| {
        let mut buf = AlignedHostBuf::<u8>::zeroed(8192).expect("setup");
        let (host, device): (&mut [u8], &Device) = (&mut buf, &device);
        // The borrow moves into the operation, which may return a
        // registration holding it.
        if let Some(registration) = w.op(move || HostRegistration::register_v2(device, host, HostRegisterFlags::MAPPED))
        {
            freed("HostRegistration::unregister", registration.unregister());
        }
        // A failed registration leaves the memory unregistered.
        let again = HostRegistration::register_v2(device, &mut buf, HostRegisterFlags::MAPPED).expect("again");
        freed("HostRegistration::unregister", again.unregister());
    });
    sweep(
        "HostRegistration::register + device_pointer",
        &[("aclrtHostRegister", 1), ("aclrtHostGetDevicePointer", 1)],
        |w| {
            let mut buf = AlignedHostBuf::<u8>::zeroed(8192).expect("setup");
            let (host, device): (&mut [u8], &Device) = (&mut buf, &device);
            let registered = w.op(move || {
                let registration = HostRegistration::register(device, host, HostRegisterType::Mapped)?;
                registration.device_pointer()?;
                Ok(registration)
            });
            if let Some(registration) = registered {
                freed("HostRegistration::unregister", registration.unregister());
            }
        },
    );
    sweep(
        "AllocatorRegistration::register",
        &[
            ("aclrtAllocatorGetByStream", 1),
            ("aclrtAllocatorCreateDesc", 1),
            ("aclrtAllocatorSetObjToDesc", 1),
            ("aclrtAllocatorSetAllocFuncToDesc", 1),
            ("aclrtAllocatorSetFreeFuncToDesc", 1),
            ("aclrtAllocatorSetAllocAdviseFuncToDesc", 1),
            ("aclrtAllocatorSetGetAddrFromBlockFuncToDesc", 1),
            ("aclrtAllocatorRegister", 1),
        ],
        |w| {
            let stream = Stream::new(&device).expect("setup");
            if let Some(registration) = w.op(|| AllocatorRegistration::register(&stream, Arc::new(Empty))) {
                freed("AllocatorRegistration::unregister", registration.unregister());
            }
            // Nothing is left registered on the stream.
            assert!(!ascend::allocator::registered_on(&stream).expect("query"));
            freed("Stream::destroy", stream.destroy());
        },
    );
    sweep("DeviceBuf::ipc_export", &[("aclrtIpcMemGetExportKey", 1)], |w| {
        let buf = DeviceBuf::<u32>::zeroed(&device, 4096).expect("setup");
        if let Some(export) = w.op(|| buf.ipc_export()) {
            freed("IpcExport::close", export.close());
        }
        freed("DeviceBuf::free", buf.free());
    });
}

// ---- imports: memory exported by a child process --------------------------------

/// Set in the child's environment; without it `child_exporter` does nothing.
const CHILD_VAR: &str = "ASCEND_FAULT_SWEEP_CHILD";

/// Exports a V2 and a V1 shareable handle and an IPC key, all without pid
/// validation, prints them, and keeps them alive until its stdin closes.
#[test]
#[ignore = "the child half of imports_clean_up_after_each_failed_call"]
fn child_exporter() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    let device = common::device();
    let (prop, size) = granule(&device);
    let v2 = PhysicalAlloc::new(&prop, size).expect("physical");
    let v1 = PhysicalAlloc::new(&prop, size).expect("physical");
    let buf = DeviceBuf::from_slice(&device, &[7u32; 1024]).expect("buffer");
    let v2_export = v2
        .export_with(ShareKind::V2Default, PidValidation::Disabled)
        .expect("export");
    let v1_export = v1.export_with(ShareKind::V1, PidValidation::Disabled).expect("export");
    let ipc = buf.ipc_export_with(PidValidation::Disabled).expect("ipc export");
    println!("EXPORT v2 {}", v2_export.token());
    println!("EXPORT v1 {}", v1_export.token());
    println!("EXPORT ipc {}", ipc.key());
    std::io::stdout().flush().expect("flush");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    ipc.close().expect("close");
}

/// The exporter child; closing its stdin ends it.
struct Exporter {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The rest of its output, drained at the end (so that it never writes
    /// to a closed pipe).
    stdout: BufReader<ChildStdout>,
    v2: ShareableHandle,
    v1: ShareableHandle,
    ipc: IpcKey,
}

impl Exporter {
    fn start() -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this test binary"))
            .args([
                "--exact",
                "child_exporter",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_VAR, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the exporter child");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (mut v2, mut v1, mut ipc) = (None, None, None);
        let mut line = String::new();
        while {
            line.clear();
            stdout.read_line(&mut line).expect("a line from the child") > 0
        } {
            // libtest may print "test child_exporter ... " before the line.
            let Some((_, rest)) = line.split_once("EXPORT ") else {
                continue;
            };
            match rest.split_once(' ') {
                Some(("v2", token)) => v2 = token.trim().parse().ok(),
                Some(("v1", token)) => v1 = token.trim().parse().ok(),
                Some(("ipc", key)) => ipc = key.trim().parse().ok(),
                _ => {}
            }
            if v2.is_some() && v1.is_some() && ipc.is_some() {
                break;
            }
        }
        let (Some(v2), Some(v1), Some(ipc)) = (v2, v1, ipc) else {
            let _ = child.kill();
            panic!("the exporter child did not report its exports");
        };
        Self {
            child,
            stdin,
            stdout,
            v2,
            v1,
            ipc,
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"done\n");
        }
        let _ = std::io::copy(&mut self.stdout, &mut std::io::sink());
        let _ = self.child.wait();
    }
}

#[test]
fn imports_clean_up_after_each_failed_call() {
    let Some((_serial, device)) = start() else { return };
    let exporter = Exporter::start();
    let (_, size) = granule(&device);
    for (name, token, import_api) in [
        (
            "ImportedAlloc::import (V2)",
            exporter.v2,
            "aclrtMemImportFromShareableHandleV2",
        ),
        (
            "ImportedAlloc::import (V1)",
            exporter.v1,
            "aclrtMemImportFromShareableHandle",
        ),
    ] {
        let calls: Calls = match import_api {
            "aclrtMemImportFromShareableHandleV2" => &[
                ("aclrtMemImportFromShareableHandleV2", 1),
                ("aclrtMemGetAllocationPropertiesFromHandle", 1),
                ("aclrtMemGetAllocationGranularity", 1),
            ],
            _ => &[
                ("aclrtMemImportFromShareableHandle", 1),
                ("aclrtMemGetAllocationPropertiesFromHandle", 1),
                ("aclrtMemGetAllocationGranularity", 1),
            ],
        };
        sweep(name, calls, |w| {
            if let Some(imported) = w.op(|| ImportedAlloc::import(&token, &device)) {
                assert_eq!(imported.size(), size);
                freed("ImportedAlloc::free", imported.free());
            }
        });
    }
    sweep("IpcImport::open", &[("aclrtIpcMemImportByKey", 1)], |w| {
        if let Some(import) = w.op(|| IpcImport::open(&exporter.ipc, &device)) {
            assert_eq!(
                import.as_slice::<u32>().and_then(|view| view.to_vec()),
                Ok(vec![7u32; 1024])
            );
            freed("IpcImport::close", import.close());
        }
        // A failed open leaves the key free to open again.
        let again = IpcImport::open(&exporter.ipc, &device).expect("open after a failed open");
        freed("IpcImport::close", again.close());
    });
    drop(exporter);
}
