//! Interop with sub-allocators and operator libraries (issue 11, item 3):
//! raw parts of a `DeviceBuf`, typed casts, consuming splits and sub-range
//! views, the public error check, borrowed stream and event handles, and
//! uninitialised pinned host memory.
//!
//! Every test runs inside one leak check on the software device (nothing
//! it created may be live at its end, no misuse may be recorded); leak
//! checks run one at a time, so the live counts read inside a test are not
//! disturbed by the others. On hardware the bodies run without the check.

mod common;

use ascend::stream::{Event, Ordered, Stream};
use ascend::sys::{self, soft};
use ascend::testing::on_software_device;
use ascend::{Device, DeviceBuf, DeviceSliceMut, Error, ErrorCode, PinnedHostBuf};
use common::{device, on_software, software_only};
use std::sync::Arc;

/// Runs `body` inside a leak check on the software device.
fn checked(body: impl FnOnce()) {
    if on_software() {
        on_software_device(body);
    } else {
        body();
    }
}

/// The reason of an `Error::InvalidArgument`, or a panic naming what came
/// instead.
fn refusal(error: &Error) -> &str {
    match error {
        Error::InvalidArgument { reason, .. } => reason,
        other => panic!("expected Error::InvalidArgument, got {other:?}"),
    }
}

fn live_device_allocations() -> usize {
    soft::live().device_allocations
}

#[test]
fn raw_parts_round_trip_without_freeing_in_between() {
    checked(|| {
        let device = device();
        let before = live_device_allocations();
        let buf = DeviceBuf::from_slice(&device, &[1u32, 2, 3, 4]).unwrap();
        let (address, len, owner) = buf.into_raw();
        assert!(!address.is_null());
        assert_eq!(len, 4);
        assert_eq!(owner, device);
        software_only(|| assert_eq!(live_device_allocations(), before + 1, "into_raw freed the memory"));

        // SAFETY: the allocation `into_raw` gave up, on `owner`, read as the
        // 16 bytes it holds; nothing else uses or frees it.
        let bytes = unsafe { DeviceBuf::<u8>::from_raw(address, 16, &owner) };
        assert_eq!(bytes.as_raw(), address);
        assert_eq!(bytes.to_vec().unwrap(), bytemuck::cast_slice::<u32, u8>(&[1, 2, 3, 4]));
        bytes.free().unwrap();
        software_only(|| assert_eq!(live_device_allocations(), before));
    });
}

#[test]
fn memory_given_up_by_into_raw_is_freed_by_raw_free_exactly_once() {
    checked(|| {
        let device = device();
        let (address, _, _owner) = DeviceBuf::<u64>::zeroed(&device, 32).unwrap().into_raw();
        // SAFETY: the allocation `into_raw` gave up; freed once, here.
        ascend::check("aclrtFree", unsafe { ascend::sys::aclrtFree(address) }).unwrap();
    });
}

#[test]
fn an_empty_buffer_has_null_raw_parts_and_owns_nothing() {
    checked(|| {
        let device = device();
        let before = live_device_allocations();
        let (address, len, owner) = DeviceBuf::<f32>::zeroed(&device, 0).unwrap().into_raw();
        assert!(address.is_null());
        assert_eq!(len, 0);
        // SAFETY: NULL with zero bytes: an empty buffer.
        let empty = unsafe { DeviceBuf::<f32>::from_raw(address, 0, &owner) };
        assert!(empty.is_empty());
        assert_eq!(empty.to_vec().unwrap(), Vec::<f32>::new());
        empty.free().unwrap();
        software_only(|| assert_eq!(live_device_allocations(), before));
    });
}

#[test]
fn buffer_cast_keeps_the_allocation_and_refusals_give_it_back() {
    checked(|| {
        let device = device();
        let words = DeviceBuf::from_slice(&device, &[0x0102_0304u32, 0x0506_0708]).unwrap();
        let address = words.as_raw();
        let bytes = words.cast::<u8>().unwrap();
        assert_eq!((bytes.as_raw(), bytes.len()), (address, 8));
        let words = bytes.cast::<u32>().unwrap();
        assert_eq!(words.to_vec().unwrap(), [0x0102_0304, 0x0506_0708]);
        let before = live_device_allocations();

        // 8 bytes are not a whole number of 3-byte elements: refused, and
        // the buffer comes back unchanged (nothing freed).
        let refused = words.cast::<[u8; 3]>().unwrap_err();
        assert!(refusal(refused.error()).contains("whole number"), "{refused}");
        software_only(|| assert_eq!(live_device_allocations(), before));
        let words = refused.into_buffer();
        assert_eq!((words.as_raw(), words.len()), (address, 2));
        assert_eq!(words.to_vec().unwrap(), [0x0102_0304, 0x0506_0708]);

        // Zero-sized types, on either side.
        let (error, words) = words.cast::<()>().unwrap_err().into_parts();
        assert!(refusal(&error).contains("zero-sized"), "{error}");
        let empty = DeviceBuf::<()>::zeroed(&device, 4).unwrap();
        assert!(refusal(empty.cast::<u8>().unwrap_err().error()).contains("zero-sized"));

        // `?` (the conversion into `Error`) drops the buffer, freeing it.
        let as_error: Error = words.cast::<[u8; 3]>().unwrap_err().into();
        assert!(matches!(
            as_error,
            Error::InvalidArgument {
                method: "DeviceBuf::cast",
                ..
            }
        ));
        software_only(|| assert_eq!(live_device_allocations(), before - 1));

        // An empty buffer casts to an empty buffer.
        let nothing = DeviceBuf::<u16>::zeroed(&device, 0).unwrap().cast::<u64>().unwrap();
        assert!(nothing.is_empty());
    });
}

#[test]
fn view_casts_check_length_and_alignment() {
    checked(|| {
        let device = device();
        let mut buf = DeviceBuf::<u8>::zeroed(&device, 16).unwrap();

        // Whole u32s, but at an odd address.
        let misaligned = buf.as_slice().slice(1..5).unwrap().cast::<u32>().unwrap_err();
        assert!(refusal(&misaligned).contains("aligned"), "{misaligned}");
        // Aligned, but not whole u32s.
        let ragged = buf.as_slice().slice(4..10).unwrap().cast::<u32>().unwrap_err();
        assert!(refusal(&ragged).contains("whole number"), "{ragged}");
        assert!(refusal(&buf.as_slice().cast::<()>().unwrap_err()).contains("zero-sized"));

        let words = buf.as_slice().slice(4..12).unwrap().cast::<u32>().unwrap();
        assert_eq!(words.len(), 2);
        assert_eq!(words.as_raw() as usize, buf.as_raw() as usize + 4);

        let refused = buf.as_mut_slice().into_slice_mut(2..8).unwrap().cast::<u32>();
        assert!(refused.is_err());
        let mut words = buf.as_mut_slice().into_slice_mut(8..16).unwrap().cast::<u32>().unwrap();
        words.write_from_host(&[u32::MAX, 0x0101_0101]).unwrap();
        let mut expected = vec![0u8; 8];
        expected.extend([0xff; 4]);
        expected.extend([1; 4]);
        assert_eq!(buf.to_vec().unwrap(), expected);
    });
}

/// Both halves of a split keep the lifetime of the buffer they came from:
/// they can be returned from a function.
fn halves(buf: &mut DeviceBuf<u16>, mid: usize) -> ascend::Result<(DeviceSliceMut<'_, u16>, DeviceSliceMut<'_, u16>)> {
    buf.as_mut_slice().split_at_mut(mid)
}

#[test]
fn split_halves_are_disjoint_exclusive_views() {
    checked(|| {
        let device = device();
        let mut buf = DeviceBuf::<u16>::zeroed(&device, 6).unwrap();
        let (mut head, mut tail) = halves(&mut buf, 2).unwrap();
        assert_eq!((head.len(), tail.len()), (2, 4));
        assert_eq!(tail.as_raw() as usize, head.as_raw() as usize + 4);
        tail.write_from_host(&[3, 4, 5, 6]).unwrap();
        head.write_from_host(&[1, 2]).unwrap();
        // A 2-element source for a 4-element destination: refused.
        assert!(tail.copy_from_device(&head.as_slice()).is_err());
        assert_eq!(buf.to_vec().unwrap(), [1, 2, 3, 4, 5, 6]);

        // Split points at both ends, and past the end.
        let (empty, all) = buf.as_mut_slice().split_at_mut(0).unwrap();
        assert_eq!((empty.len(), all.len()), (0, 6));
        let (all, empty) = buf.split_at_mut(6).unwrap();
        assert_eq!((all.len(), empty.len()), (6, 0));
        let past = buf.as_mut_slice().split_at_mut(7).unwrap_err();
        assert!(refusal(&past).contains("past the end"), "{past}");
        assert!(buf.as_slice().split_at(7).is_err());

        // Shared splits and sub-ranges.
        let (left, right) = buf.as_slice().split_at(3).unwrap();
        assert_eq!(
            (left.to_vec().unwrap(), right.to_vec().unwrap()),
            (vec![1, 2, 3], vec![4, 5, 6])
        );
        assert!(buf.as_mut_slice().into_slice_mut(5..9).is_err());
        assert!(buf.slice_mut(..7).is_err());
        buf.slice_mut(1..=2).unwrap().fill_bytes(0).unwrap();
        assert_eq!(buf.slice(..4).unwrap().to_vec().unwrap(), [1, 0, 0, 4]);
        let shared = buf.as_mut_slice().into_slice_mut(4..).unwrap().into_shared();
        assert_eq!(shared.to_vec().unwrap(), [5, 6]);
    });
}

/// A stream and an event created through raw calls, as an operator
/// library would, destroyed through raw calls at the end.
fn raw_stream_and_event(device: &Device) -> (sys::aclrtStream, sys::aclrtEvent) {
    device.make_current().unwrap();
    let (mut stream, mut event) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers, with the device current.
    ascend::check("aclrtCreateStream", unsafe { sys::aclrtCreateStream(&mut stream) }).unwrap();
    // SAFETY: as above.
    ascend::check("aclrtCreateEvent", unsafe { sys::aclrtCreateEvent(&mut event) }).unwrap();
    (stream, event)
}

#[test]
fn borrowed_raw_handles_work_as_streams_and_events_and_stay_alive() {
    checked(|| {
        let device = device();
        let (raw_stream, raw_event) = raw_stream_and_event(&device);
        let live = soft::live();
        {
            // SAFETY: both handles are live on `device` until the raw
            // destroys at the end of the test.
            let stream = unsafe { Stream::borrow_raw(raw_stream, &device) }.unwrap();
            // SAFETY: as above.
            let event = unsafe { Event::borrow_raw(raw_event, &device) }.unwrap();
            assert_eq!((stream.as_raw(), event.as_raw()), (raw_stream, raw_event));
            assert_eq!(stream.device(), &device);

            // Two scopes, ordered by the borrowed event.
            let host = PinnedHostBuf::from_slice(&device, &[5u32; 256]).unwrap();
            let mut on_device = DeviceBuf::<u32>::zeroed(&device, 256).unwrap();
            stream.scope(|s| s.copy_to_device(&host, &mut on_device)).unwrap();
            let other = Stream::new(&device).unwrap();
            let mut copy = DeviceBuf::<u32>::zeroed(&device, 256).unwrap();
            stream.scope(|s| s.record(&event)).unwrap();
            other
                .scope(|s| {
                    s.wait_event(&event)?;
                    s.copy_on_device(&on_device, &mut copy)
                })
                .unwrap();
            assert!(event.query().unwrap());
            assert_eq!(copy.to_vec().unwrap(), &host[..]);
        }
        // Dropping the borrowed forms destroyed nothing: the raw handles
        // still work, and the software device still counts them.
        software_only(|| {
            let now = soft::live();
            assert_eq!((now.streams, now.events), (live.streams, live.events));
        });
        // SAFETY: a live stream handle.
        let synchronized = unsafe { sys::aclrtSynchronizeStream(raw_stream) };
        ascend::check("aclrtSynchronizeStream", synchronized).unwrap();
        // SAFETY: a live event handle, destroyed once.
        ascend::check("aclrtDestroyEvent", unsafe { sys::aclrtDestroyEvent(raw_event) }).unwrap();
        // SAFETY: a live stream handle, destroyed once, with its device
        // current.
        ascend::check("aclrtDestroyStream", unsafe { sys::aclrtDestroyStream(raw_stream) }).unwrap();
    });
}

#[test]
fn null_handles_are_not_borrowed() {
    checked(|| {
        let device = device();
        // SAFETY: NULL is refused before it is used.
        let stream = unsafe { Stream::borrow_raw(std::ptr::null_mut(), &device) };
        assert!(matches!(
            stream,
            Err(Error::InvalidArgument {
                method: "Stream::borrow_raw",
                ..
            })
        ));
        // SAFETY: as above.
        let event = unsafe { Event::borrow_raw(std::ptr::null_mut(), &device) };
        assert!(matches!(
            event,
            Err(Error::InvalidArgument {
                method: "Event::borrow_raw",
                ..
            })
        ));
    });
}

#[test]
fn check_turns_raw_codes_into_typed_errors() {
    checked(|| {
        let _device = device();
        assert_eq!(ascend::check("aclrtFree", sys::ACL_SUCCESS), Ok(()));
        // SAFETY: NULL is refused by the runtime before it is used.
        let error = ascend::check("aclrtFree", unsafe { sys::aclrtFree(std::ptr::null_mut()) }).unwrap_err();
        assert!(matches!(error, Error::Acl { api: "aclrtFree", .. }), "{error:?}");
        assert_eq!(error.code(), Some(ErrorCode::INVALID_PARAM));
        software_only(|| {
            let Error::Acl { message, .. } = &error else {
                unreachable!()
            };
            assert!(message.is_some(), "the runtime's recent message is attached");
        });
    });
}

#[test]
fn uninitialised_pinned_memory_is_filled_by_copies_and_raw_writes() {
    checked(|| {
        let device = device();
        let stream = Arc::new(Stream::new(&device).unwrap());
        let before = soft::live().host_allocations;
        let on_device = DeviceBuf::from_slice(&device, &[0xabcd_u16; 512]).unwrap();

        // Filled by a stream-ordered download.
        // SAFETY: the download writes every element before it is read.
        let host = unsafe { PinnedHostBuf::<u16>::uninit(&device, 512) }.unwrap();
        assert_eq!((host.len(), host.is_empty()), (512, false));
        software_only(|| assert_eq!(soft::live().host_allocations, before + 1));
        let (on_device, host) = (Ordered::new(on_device), Ordered::new(host));
        host.copy_from_device(&on_device, &stream).unwrap();
        let (on_device, host) = (on_device.into_inner().unwrap(), host.into_inner().unwrap());
        assert!(host.iter().all(|&x| x == 0xabcd));

        // Filled by a scoped copy.
        // SAFETY: the scope's copy writes every element, and the scope has
        // synchronised before the buffer is read.
        let mut scoped = unsafe { PinnedHostBuf::<u16>::uninit(&device, 512) }.unwrap();
        stream.scope(|s| s.copy_to_host(&on_device, &mut scoped)).unwrap();
        assert_eq!(&scoped[..], &host[..]);

        // Filled through the raw pointer.
        // SAFETY: written through the pointer below before it is read.
        let mut raw = unsafe { PinnedHostBuf::<u64>::uninit(&device, 4) }.unwrap();
        for i in 0..4 {
            // SAFETY: `i` is in bounds of the 4 owned elements.
            unsafe { raw.as_mut_ptr().add(i).write(i as u64 * 3) };
        }
        assert_eq!(&raw[..], &[0, 3, 6, 9]);

        // Dropped or freed unread; empty; refused alignment.
        // SAFETY: never read.
        drop(unsafe { PinnedHostBuf::<u8>::uninit(&device, 4096) }.unwrap());
        // SAFETY: never read.
        unsafe { PinnedHostBuf::<u8>::uninit(&device, 4096) }
            .unwrap()
            .free()
            .unwrap();
        // SAFETY: no elements.
        let empty = unsafe { PinnedHostBuf::<u8>::uninit(&device, 0) }.unwrap();
        assert!(empty.is_empty());
        #[derive(Clone, Copy, bytemuck::Zeroable, bytemuck::Pod)]
        #[repr(C, align(128))]
        struct Wide([u8; 128]);
        // SAFETY: refused before anything is allocated.
        let refused = unsafe { PinnedHostBuf::<Wide>::uninit(&device, 1) };
        assert!(matches!(refused, Err(Error::InvalidArgument { .. })));
        drop((host, scoped, raw, empty));
        software_only(|| assert_eq!(soft::live().host_allocations, before));
    });
}
