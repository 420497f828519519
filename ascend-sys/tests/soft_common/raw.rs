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
