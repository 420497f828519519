//! `aclrtValueWrite` and `aclrtValueWait`: memory-semantic synchronisation
//! through a 64-bit word of device memory.
//!
//! Both calls check their arguments at the call (in the runtime's order,
//! see [`enqueue`]) and queue a task. A write task stores the word through
//! the same byte-moving core as copies (so it is atomic with respect to
//! them) and wakes the waiters. A wait task blocks only its own stream's
//! worker: it reads the word, compares, and sleeps until a value write
//! wakes it, re-reading at least every [`MAX_POLL`] so that any other
//! writer (a copy, a memset, the host, another process sharing the memory)
//! is seen too.
//!
//! A wait whose condition never comes keeps its stream blocked
//! (`aclrtSynchronizeStreamWithTimeout` says what it is blocked in; the
//! leak report too). It ends without its condition, recorded in
//! [`crate::soft::check::misuse_log`] as for a stream waiting for an event that is
//! destroyed, when the memory it reads is freed or unmapped, when its
//! stream is destroyed by `aclrtDestroyStreamForce`, or when its device's
//! context is torn down by the last `aclrtResetDevice`.
//!
//! The state of this family: the waiters' wake-up signal below, and on each
//! [`Stream`] the wait its worker is blocked in and the waits to give up.

use super::queue::Stream;
use super::task::{Task, Work};
use super::transfer::{Location, location};
use super::{lookup_stream, target_stream};
use crate::soft::check::misuse_log;
use crate::soft::compose::copy;
use crate::soft::compose::translate::Translator;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;
use std::fmt;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// The longest a blocked wait sleeps before it reads the word again.
const MAX_POLL: Duration = Duration::from_millis(2);
/// The first sleep of a blocked wait (doubled up to [`MAX_POLL`]).
const FIRST_POLL: Duration = Duration::from_micros(50);

/// Counts value writes (and other reasons to look again); waiters sleep on
/// [`SIGNAL`] until it changes.
static WRITES: Mutex<u64> = Mutex::new(0);
static SIGNAL: Condvar = Condvar::new();

/// Wakes every blocked value wait to read its word again (and to check
/// whether it must give up).
pub(crate) fn wake_waiters() {
    let mut writes = WRITES.lock().unwrap_or_else(PoisonError::into_inner);
    *writes = writes.wrapping_add(1);
    drop(writes);
    SIGNAL.notify_all();
}

/// Whether `current` satisfies the wait for `value` with `flag` (the
/// documented comparisons of the `ACL_STREAM_WAIT_VALUE_*` flags).
pub(crate) fn satisfied(flag: u32, current: u64, value: u64) -> bool {
    match flag {
        ACL_STREAM_WAIT_VALUE_GEQ => current.wrapping_sub(value) as i64 >= 0,
        ACL_STREAM_WAIT_VALUE_EQ => current == value,
        ACL_STREAM_WAIT_VALUE_AND => current & value != 0,
        ACL_STREAM_WAIT_VALUE_NOR => !(current | value) != 0,
        _ => false,
    }
}

/// Says what a wait waits for, e.g. "the value at 0x… == 0x1".
pub(crate) fn condition(address: usize, value: u64, flag: u32) -> String {
    match flag {
        ACL_STREAM_WAIT_VALUE_GEQ => format!("(int64_t)(the value at {address:#x} - {value:#x}) >= 0"),
        ACL_STREAM_WAIT_VALUE_EQ => format!("the value at {address:#x} == {value:#x}"),
        ACL_STREAM_WAIT_VALUE_AND => format!("(the value at {address:#x} & {value:#x}) != 0"),
        _ => format!("~(the value at {address:#x} | {value:#x}) != 0"),
    }
}

/// The value wait a stream's worker is blocked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockedOn {
    pub(crate) address: usize,
    pub(crate) value: u64,
    pub(crate) flag: u32,
    /// The word when the wait last read it.
    pub(crate) seen: u64,
    /// The wait's task number on its stream.
    pub(crate) task: u64,
}

impl fmt::Display for BlockedOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a value wait (task {}) until {}; the value is {:#x}",
            self.task,
            condition(self.address, self.value, self.flag),
            self.seen
        )
    }
}

/// Reads the 64-bit word at device address `address`.
fn read(address: usize) -> SoftResult<u64> {
    let mut word = 0u64;
    // SAFETY: `word` is a live local of 8 bytes, valid for the write; the
    // device side is translated (and refused when it is gone).
    unsafe { copy::copy_bytes((&raw mut word) as usize, address, 8) }?;
    Ok(word)
}

/// Runs an `aclrtValueWrite` task: stores `value`, then wakes the waiters.
pub(crate) fn write(address: usize, value: u64) -> SoftResult {
    // SAFETY: `value` is a live local of 8 bytes, valid for the read; the
    // device side is translated (and refused when it is gone).
    let outcome = unsafe { copy::copy_bytes(address, (&raw const value) as usize, 8) };
    wake_waiters();
    outcome
}

/// Runs an `aclrtValueWait` task on `stream`'s worker: returns once the
/// condition holds, or, recorded as misuse, once it can never come (the
/// memory is gone, or a call ended the wait).
pub(crate) fn wait(stream: &Stream, task: &Task, address: usize, value: u64, flag: u32) {
    let mut sleep = FIRST_POLL;
    loop {
        let seen_writes = *WRITES.lock().unwrap_or_else(PoisonError::into_inner);
        let current = match read(address) {
            Ok(current) => current,
            Err(failure) => {
                stream.set_blocked(None);
                misuse_log::record(
                    "aclrtValueWait",
                    format!(
                        "{} ended without its condition: the memory it reads is gone ({})",
                        task.describe(),
                        failure.message
                    ),
                );
                return;
            }
        };
        if satisfied(flag, current, value) {
            stream.set_blocked(None);
            return;
        }
        if let Some(api) = stream.given_up(task.number, false) {
            stream.set_blocked(None);
            misuse_log::record(
                api,
                format!(
                    "{} ended without its condition (the value is {current:#x}): {api} ends it",
                    task.describe()
                ),
            );
            return;
        }
        stream.set_blocked(Some(BlockedOn {
            address,
            value,
            flag,
            seen: current,
            task: task.number,
        }));
        let writes = WRITES.lock().unwrap_or_else(PoisonError::into_inner);
        if *writes == seen_writes {
            let _woken = SIGNAL
                .wait_timeout(writes, sleep)
                .unwrap_or_else(PoisonError::into_inner);
            sleep = (sleep * 2).min(MAX_POLL);
        }
    }
}

/// Which of the two calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueCall {
    /// `aclrtValueWrite`.
    Write,
    /// `aclrtValueWait`.
    Wait,
}

/// `aclrtValueWrite` / `aclrtValueWait` after the ACL layer's check
/// (`devAddr` NULL → 100000), in the runtime's order: the stream handle
/// (107017); the flag (write: not 0; wait: not an `ACL_STREAM_WAIT_VALUE_*`
/// value → 107000); `devAddr` must be device memory (107000); a current
/// context (107002); a stream of the current device (107003). Then the
/// software device's choices: `devAddr` 8-byte aligned, and the 8 bytes
/// inside one live device allocation or mapping (107000).
pub(crate) fn enqueue(call: ValueCall, address: usize, value: u64, flag: u32, stream: usize) -> SoftResult {
    let mut streams = super::lock()?;
    let mut tables = Translator::default();
    let explicit = lookup_stream(&streams, stream)?;
    match call {
        ValueCall::Write if flag != 0 => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag {flag:#x} is reserved and must be 0"),
            );
        }
        ValueCall::Wait if flag > ACL_STREAM_WAIT_VALUE_NOR => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag {flag:#x} is not an ACL_STREAM_WAIT_VALUE_* comparison (0 to 3)"),
            );
        }
        _ => {}
    }
    let place = location(&mut tables, address)?;
    if place != Location::Device {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("devAddr {address:#x} is {}, not device memory", place.name()),
        );
    }
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    if !address.is_multiple_of(8) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("devAddr {address:#x} is not 8-byte aligned"),
        );
    }
    tables.resolve(address, 8, "devAddr")?;
    drop((tables, streams));
    match call {
        ValueCall::Write => crate::soft::check::sanitize::value_write(stream.site(), address),
        ValueCall::Wait => crate::soft::check::sanitize::value_wait(stream.site(), address),
    }
    let task = match call {
        ValueCall::Write => Task::new("aclrtValueWrite", Work::ValueWrite { address, value }, Vec::new()),
        ValueCall::Wait => Task::new("aclrtValueWait", Work::ValueWait { address, value, flag }, Vec::new()),
    };
    stream.submit(task);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The comparisons of the API reference (11-09, `aclrtValueWait`).
    #[test]
    fn comparisons_follow_the_documented_formulas() {
        assert!(satisfied(ACL_STREAM_WAIT_VALUE_GEQ, 5, 5));
        assert!(satisfied(ACL_STREAM_WAIT_VALUE_GEQ, 6, 5));
        assert!(!satisfied(ACL_STREAM_WAIT_VALUE_GEQ, 4, 5));
        // Signed difference: a counter that wrapped is still "after".
        assert!(satisfied(ACL_STREAM_WAIT_VALUE_GEQ, 1, u64::MAX));
        assert!(!satisfied(ACL_STREAM_WAIT_VALUE_GEQ, u64::MAX, 1));
        assert!(satisfied(ACL_STREAM_WAIT_VALUE_EQ, 7, 7));
        assert!(!satisfied(ACL_STREAM_WAIT_VALUE_EQ, 7, 8));
        assert!(satisfied(ACL_STREAM_WAIT_VALUE_AND, 0b0110, 0b0100));
        assert!(!satisfied(ACL_STREAM_WAIT_VALUE_AND, 0b0011, 0b0100));
        // NOR: some bit is clear in both.
        assert!(satisfied(ACL_STREAM_WAIT_VALUE_NOR, 0, 0));
        assert!(!satisfied(ACL_STREAM_WAIT_VALUE_NOR, u64::MAX, 0));
        assert!(!satisfied(
            ACL_STREAM_WAIT_VALUE_NOR,
            0xFFFF_0000_0000_0000,
            0x0000_FFFF_FFFF_FFFF
        ));
        assert!(!satisfied(4, 0, 0));
    }
}
