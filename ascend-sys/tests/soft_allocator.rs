//! The software device's custom-allocator descriptor rules
//! (`acl-behaviour.md` §10): pure bookkeeping, no context needed. Software
//! device only: these tests select it explicitly.

mod soft_common;

use ascend_sys::*;
use soft_common::{recent, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;

unsafe extern "C" fn alloc_block(_allocator: aclrtAllocator, _size: usize) -> *mut c_void {
    null_mut()
}

unsafe extern "C" fn other_alloc_block(_allocator: aclrtAllocator, _size: usize) -> *mut c_void {
    16 as *mut c_void
}

unsafe extern "C" fn free_block(_allocator: aclrtAllocator, _block: aclrtAllocatorBlock) {}

unsafe extern "C" fn advise_block(_allocator: aclrtAllocator, _size: usize, _addr: aclrtAllocatorAddr) -> *mut c_void {
    null_mut()
}

unsafe extern "C" fn block_address(_block: aclrtAllocatorBlock) -> *mut c_void {
    null_mut()
}

/// A stream handle: the allocator calls do not validate it.
fn stream(tag: usize) -> aclrtStream {
    (0x5000 + tag * 0x10) as aclrtStream
}

fn create() -> aclrtAllocatorDesc {
    // SAFETY: no arguments.
    let desc = unsafe { aclrtAllocatorCreateDesc() };
    assert!(!desc.is_null());
    desc
}

fn destroy(desc: aclrtAllocatorDesc) -> aclError {
    // SAFETY: the handle is only looked up, never dereferenced.
    unsafe { aclrtAllocatorDestroyDesc(desc) }
}

/// A descriptor with every required field set (alloc-advise optional).
fn complete(object: usize, advise: bool) -> aclrtAllocatorDesc {
    let desc = create();
    // SAFETY: `desc` is live; the values are plain tokens and functions.
    unsafe {
        assert_eq!(aclrtAllocatorSetObjToDesc(desc, object as aclrtAllocator), ACL_SUCCESS);
        assert_eq!(aclrtAllocatorSetAllocFuncToDesc(desc, Some(alloc_block)), ACL_SUCCESS);
        assert_eq!(aclrtAllocatorSetFreeFuncToDesc(desc, Some(free_block)), ACL_SUCCESS);
        assert_eq!(
            aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(block_address)),
            ACL_SUCCESS
        );
        if advise {
            assert_eq!(
                aclrtAllocatorSetAllocAdviseFuncToDesc(desc, Some(advise_block)),
                ACL_SUCCESS
            );
        }
    }
    desc
}

/// Everything `aclrtAllocatorGetByStream` returns.
#[derive(Debug)]
struct Got {
    desc: aclrtAllocatorDesc,
    object: aclrtAllocator,
    alloc: aclrtAllocatorAllocFunc,
    free: aclrtAllocatorFreeFunc,
    advise: aclrtAllocatorAllocAdviseFunc,
    address: aclrtAllocatorGetAddrFromBlockFunc,
}

fn get(stream: aclrtStream) -> Result<Got, aclError> {
    let mut got = Got {
        desc: null_mut(),
        object: null_mut(),
        alloc: None,
        free: None,
        advise: None,
        address: None,
    };
    // SAFETY: every out-pointer is valid.
    let code = unsafe {
        aclrtAllocatorGetByStream(
            stream,
            &mut got.desc,
            &mut got.object,
            &mut got.alloc,
            &mut got.free,
            &mut got.advise,
            &mut got.address,
        )
    };
    if code == ACL_SUCCESS { Ok(got) } else { Err(code) }
}

#[test]
fn descriptors_are_created_and_destroyed_once() {
    without_device(|| {
        let first = create();
        let second = create();
        assert_ne!(first, second);
        assert!(soft::live().allocator_descriptors >= 2);
        assert!(soft::leak_report().contains(&format!("allocator descriptor {:#x}", first as usize)));
        assert_eq!(destroy(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(destroy(first), ACL_SUCCESS);
        assert!(!soft::leak_report().contains(&format!("allocator descriptor {:#x}", first as usize)));
        // Software-device choice: an unknown handle (here: destroyed) is
        // ACL_ERROR_INVALID_PARAM and recorded as misuse (the runtime would
        // delete it again).
        assert_eq!(destroy(first), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("not a live descriptor"));
        assert!(
            soft::misuse()
                .iter()
                .any(|m| m.api == "aclrtAllocatorDestroyDesc"
                    && m.description.contains(&format!("{:#x}", first as usize)))
        );
        assert_eq!(destroy(0x1234 as aclrtAllocatorDesc), ACL_ERROR_INVALID_PARAM);
        assert_eq!(destroy(second), ACL_SUCCESS);
    });
}

#[test]
fn setters_refuse_null_and_unknown_descriptors() {
    without_device(|| {
        let desc = create();
        let unknown = 0x4321 as aclrtAllocatorDesc;
        // SAFETY: handles are only looked up, never dereferenced.
        unsafe {
            assert_eq!(
                aclrtAllocatorSetObjToDesc(null_mut(), 8 as aclrtAllocator),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtAllocatorSetObjToDesc(desc, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("allocator is NULL"));
            assert_eq!(
                aclrtAllocatorSetAllocFuncToDesc(null_mut(), Some(alloc_block)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtAllocatorSetAllocFuncToDesc(desc, None), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtAllocatorSetFreeFuncToDesc(null_mut(), Some(free_block)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtAllocatorSetFreeFuncToDesc(desc, None), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtAllocatorSetAllocAdviseFuncToDesc(null_mut(), Some(advise_block)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetAllocAdviseFuncToDesc(desc, None),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetGetAddrFromBlockFuncToDesc(null_mut(), Some(block_address)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, None),
                ACL_ERROR_INVALID_PARAM
            );
            // Unknown handles are refused, never written through.
            assert_eq!(
                aclrtAllocatorSetObjToDesc(unknown, 8 as aclrtAllocator),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetAllocFuncToDesc(unknown, Some(alloc_block)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetFreeFuncToDesc(unknown, Some(free_block)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetAllocAdviseFuncToDesc(unknown, Some(advise_block)),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorSetGetAddrFromBlockFuncToDesc(unknown, Some(block_address)),
                ACL_ERROR_INVALID_PARAM
            );
        }
        assert_eq!(destroy(desc), ACL_SUCCESS);
    });
}

#[test]
fn register_needs_every_required_field() {
    without_device(|| {
        let desc = create();
        // SAFETY: handles are only looked up, never dereferenced.
        unsafe {
            assert_eq!(aclrtAllocatorRegister(null_mut(), desc), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("stream is NULL"));
            assert_eq!(aclrtAllocatorRegister(stream(1), null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtAllocatorRegister(stream(1), 0x777 as aclrtAllocatorDesc),
                ACL_ERROR_INVALID_PARAM
            );
            // Fields are required in order: obj, alloc, free, get-address.
            assert_eq!(aclrtAllocatorRegister(stream(1), desc), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("allocatorDesc->obj is NULL"));
            assert_eq!(aclrtAllocatorSetObjToDesc(desc, 8 as aclrtAllocator), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorRegister(stream(1), desc), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("allocatorDesc->allocFunc is NULL"));
            assert_eq!(aclrtAllocatorSetAllocFuncToDesc(desc, Some(alloc_block)), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorRegister(stream(1), desc), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("allocatorDesc->freeFunc is NULL"));
            assert_eq!(aclrtAllocatorSetFreeFuncToDesc(desc, Some(free_block)), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorRegister(stream(1), desc), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("allocatorDesc->getAddrFromBlockFunc is NULL"));
            assert_eq!(get(stream(1)).err(), Some(ACL_ERROR_INVALID_PARAM));
            assert_eq!(
                aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(block_address)),
                ACL_SUCCESS
            );
            // Alloc-advise is optional.
            assert_eq!(aclrtAllocatorRegister(stream(1), desc), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorUnregister(stream(1)), ACL_SUCCESS);
        }
        assert_eq!(destroy(desc), ACL_SUCCESS);
    });
}

#[test]
fn register_and_get_round_trip_the_same_values() {
    without_device(|| {
        let desc = complete(0xabc0, true);
        // SAFETY: handles are only looked up; out-pointers are valid or NULL
        // where optional.
        unsafe {
            assert_eq!(aclrtAllocatorRegister(stream(2), desc), ACL_SUCCESS);
            let got = get(stream(2)).unwrap();
            assert_eq!(got.desc, desc);
            assert_eq!(got.object as usize, 0xabc0);
            assert_eq!(got.alloc.map(|f| f as usize), Some(alloc_block as *const () as usize));
            assert_eq!(got.free.map(|f| f as usize), Some(free_block as *const () as usize));
            assert_eq!(got.advise.map(|f| f as usize), Some(advise_block as *const () as usize));
            assert_eq!(
                got.address.map(|f| f as usize),
                Some(block_address as *const () as usize)
            );
            // The registered values are a copy: later changes to the
            // descriptor do not show, and neither does destroying it.
            assert_eq!(
                aclrtAllocatorSetAllocFuncToDesc(desc, Some(other_alloc_block)),
                ACL_SUCCESS
            );
            assert_eq!(
                get(stream(2)).unwrap().alloc.map(|f| f as usize),
                Some(alloc_block as *const () as usize)
            );
            // Optional out-pointers may be NULL; the descriptor out-pointer
            // and the stream may not.
            let mut only_desc = null_mut();
            assert_eq!(
                aclrtAllocatorGetByStream(
                    stream(2),
                    &mut only_desc,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut()
                ),
                ACL_SUCCESS
            );
            assert_eq!(only_desc, desc);
            let nothing = null_mut();
            assert_eq!(
                aclrtAllocatorGetByStream(
                    stream(2),
                    nothing,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut()
                ),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtAllocatorGetByStream(
                    null_mut(),
                    &mut only_desc,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut()
                ),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(get(stream(3)).err(), Some(ACL_ERROR_INVALID_PARAM));
            assert!(recent().contains("no registered allocator"));
            // Re-registering overwrites (with the descriptor's current values).
            assert_eq!(aclrtAllocatorRegister(stream(2), desc), ACL_SUCCESS);
            assert_eq!(
                get(stream(2)).unwrap().alloc.map(|f| f as usize),
                Some(other_alloc_block as *const () as usize)
            );
            let other = complete(0xdef0, false);
            assert_eq!(aclrtAllocatorRegister(stream(2), other), ACL_SUCCESS);
            let got = get(stream(2)).unwrap();
            assert_eq!((got.desc, got.object as usize, got.advise), (other, 0xdef0, None));
            assert_eq!(destroy(other), ACL_SUCCESS);
            assert_eq!(get(stream(2)).unwrap().desc, other);
            // Unregistering: NULL refused; unknown and repeated succeed.
            assert_eq!(aclrtAllocatorUnregister(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtAllocatorUnregister(stream(2)), ACL_SUCCESS);
            assert_eq!(get(stream(2)).err(), Some(ACL_ERROR_INVALID_PARAM));
            assert_eq!(aclrtAllocatorUnregister(stream(2)), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorUnregister(stream(9)), ACL_SUCCESS);
        }
        assert_eq!(destroy(desc), ACL_SUCCESS);
    });
}
