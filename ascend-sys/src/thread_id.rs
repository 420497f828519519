//! The id `aclrtSubscribeReport` and `aclrtSubscribeHostFunc` take for a
//! thread: its POSIX thread id (`pthread_t`), the value `pthread_self()`
//! returns on that thread, as C programs on CANN pass it.

unsafe extern "C" {
    // `pthread_t` is an `unsigned long` on glibc and a pointer on musl: the
    // width of a pointer either way on Linux.
    safe fn pthread_self() -> usize;
}

/// The calling thread's id as the report functions take it (its
/// `pthread_t`), for `aclrtSubscribeReport(threadId, …)` and
/// `aclrtSubscribeHostFunc(hostFuncThreadId, …)`. Another thread's id is
/// `std::os::unix::thread::JoinHandleExt::as_pthread_t` of its handle.
///
/// ```
/// use std::os::unix::thread::JoinHandleExt;
/// let worker = std::thread::spawn(ascend_sys::current_thread_id);
/// let seen_from_outside = worker.as_pthread_t() as u64;
/// assert_eq!(worker.join().unwrap(), seen_from_outside);
/// assert_ne!(ascend_sys::current_thread_id(), seen_from_outside);
/// ```
pub fn current_thread_id() -> u64 {
    pthread_self() as u64
}
