//! Entry points of 3.3 Streams and events.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

not_emulated! {
    fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError;
    fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32) -> aclError;
    fn aclrtDestroyStream(stream: aclrtStream) -> aclError;
    fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError;
    fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError;
    fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError;
    fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError;
    fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError;
    fn aclrtDestroyEvent(event: aclrtEvent) -> aclError;
    fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError;
    fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError;
    fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) -> aclError;
    fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError;
    fn aclrtEventElapsedTime(ms: *mut f32, startEvent: aclrtEvent, endEvent: aclrtEvent) -> aclError;
}
