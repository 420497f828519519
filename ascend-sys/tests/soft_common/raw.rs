//! Raw calls the rule tests share: allocate and free device memory,
//! create and destroy streams, each asserting success.

use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `size` bytes of device memory on the current device.
pub fn malloc(size: usize) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: `ptr` is a valid out-pointer.
    assert_eq!(
        unsafe { aclrtMalloc(&mut ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) },
        ACL_SUCCESS
    );
    ptr
}

/// Frees what [`malloc`] returned.
pub fn free(ptr: *mut c_void) {
    // SAFETY: `ptr` came from `malloc` and is freed once.
    assert_eq!(unsafe { aclrtFree(ptr) }, ACL_SUCCESS);
}

/// A new stream on the current device.
pub fn create_stream() -> aclrtStream {
    let mut stream = null_mut();
    // SAFETY: `stream` is a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, ACL_SUCCESS);
    stream
}

/// Destroys a stream from [`create_stream`].
pub fn destroy_stream(stream: aclrtStream) {
    // SAFETY: a live stream, destroyed once.
    assert_eq!(unsafe { aclrtDestroyStream(stream) }, ACL_SUCCESS);
}

/// Synchronises a stream (any handle: validated).
pub fn sync(stream: aclrtStream) -> aclError {
    // SAFETY: a handle (live or not: validated).
    unsafe { aclrtSynchronizeStream(stream) }
}

/// Synchronises a stream with a timeout in milliseconds.
pub fn sync_within(stream: aclrtStream, ms: i32) -> aclError {
    // SAFETY: a handle (live or not: validated).
    unsafe { aclrtSynchronizeStreamWithTimeout(stream, ms) }
}

/// A new event made by `aclrtCreateEventWithFlag`.
pub fn event_with_flag(flag: u32) -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEventWithFlag(&mut event, flag) }, ACL_SUCCESS);
    event
}

/// A new event made by `aclrtCreateEvent`.
pub fn plain_event() -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEvent(&mut event) }, ACL_SUCCESS);
    event
}

/// Destroys a live event.
pub fn destroy_event(event: aclrtEvent) {
    // SAFETY: a live event, destroyed once.
    assert_eq!(unsafe { aclrtDestroyEvent(event) }, ACL_SUCCESS);
}

/// Records an event on a stream.
pub fn record(event: aclrtEvent, stream: aclrtStream) -> aclError {
    // SAFETY: handles only.
    unsafe { aclrtRecordEvent(event, stream) }
}

/// Makes a stream wait for an event.
pub fn wait_event(stream: aclrtStream, event: aclrtEvent) -> aclError {
    // SAFETY: handles only.
    unsafe { aclrtStreamWaitEvent(stream, event) }
}

/// A stream blocked until [`Gate::open`]: it waits for the first record of
/// an `ACL_EVENT_SYNC` event that has none yet. (The handle is kept as an
/// integer so that another thread may open the gate.)
pub struct Gate(pub usize);

impl Gate {
    /// Blocks `stream` (its later tasks wait for the gate).
    pub fn block(stream: aclrtStream) -> Gate {
        let event = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(wait_event(stream, event), ACL_SUCCESS);
        Gate(event as usize)
    }

    /// Records the gate on a stream of its own (the current device's).
    pub fn open(self) {
        let event = self.0 as aclrtEvent;
        let opener = create_stream();
        assert_eq!(record(event, opener), ACL_SUCCESS);
        assert_eq!(sync(opener), ACL_SUCCESS);
        destroy_stream(opener);
        destroy_event(event);
    }
}

/// `size` bytes of managed memory (`aclrtMemAllocManaged`, global).
pub fn managed(size: u64) -> *mut c_void {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    let code = unsafe { aclrtMemAllocManaged(&mut ptr, size, ACL_RT_MEM_ATTACH_GLOBAL) };
    assert_eq!(code, ACL_SUCCESS, "aclrtMemAllocManaged of {size} bytes");
    ptr
}

/// A managed-memory location of `type_` and `id`.
pub fn managed_location(type_: aclrtMemManagedLocationType, id: i32) -> aclrtMemManagedLocation {
    aclrtMemManagedLocation { type_, id }
}

/// The number of devices.
pub fn device_count() -> i32 {
    let mut count = 0u32;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_SUCCESS);
    count as i32
}

/// A new mbuf with a data area of `size` bytes.
pub fn alloc_buf(size: usize) -> aclrtMbuf {
    let mut buf = null_mut();
    // SAFETY: `buf` is a valid out-pointer.
    assert_eq!(unsafe { aclrtAllocBuf(&mut buf, size) }, ACL_SUCCESS);
    assert!(!buf.is_null());
    buf
}

/// Frees an mbuf (or the chain it heads), returning the code.
pub fn free_buf(buf: aclrtMbuf) -> aclError {
    // SAFETY: the handle is only looked up by the software device.
    unsafe { aclrtFreeBuf(buf) }
}

/// The address and capacity of an mbuf's data area.
pub fn buf_data(buf: aclrtMbuf) -> (*mut c_void, usize) {
    let (mut data, mut size) = (null_mut(), 0usize);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { aclrtGetBufData(buf, &mut data, &mut size) }, ACL_SUCCESS);
    (data, size)
}

/// A reference copy of an mbuf.
pub fn copy_buf_ref(buf: aclrtMbuf) -> aclrtMbuf {
    let mut copy = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCopyBufRef(buf, &mut copy) }, ACL_SUCCESS);
    copy
}

/// The number of mbufs in the chain `head` heads, or the code.
pub fn chain_num(head: aclrtMbuf) -> Result<u32, aclError> {
    let mut num = 0u32;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetBufChainNum(head, &mut num) } {
        ACL_SUCCESS => Ok(num),
        code => Err(code),
    }
}

/// Member `index` of the chain `head` heads, or the code.
pub fn chain_get(head: aclrtMbuf, index: u32) -> Result<aclrtMbuf, aclError> {
    let mut buf = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetBufFromChain(head, index, &mut buf) } {
        ACL_SUCCESS => Ok(buf),
        code => Err(code),
    }
}
