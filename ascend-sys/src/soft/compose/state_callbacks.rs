//! Stream and device state callbacks (`aclrtRegStreamStateCallback`,
//! `aclrtRegDeviceStateCallback`): named registrations the entry points of
//! stream creation and destruction and of device set and reset call.
//!
//! The runtime's rules: a NULL callback removes the registration of that
//! name (a name never registered included); a name already registered is
//! refused (`ACL_ERROR_RT_PARAM_INVALID`). Callbacks run on the thread of
//! the call that changes the state, with no lock of the software device
//! held (the list is copied out first), in the order of their names.
//!
//! Its lock is a leaf: nothing is called while it is held.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

type StreamCallback = unsafe extern "C" fn(aclrtStream, aclrtStreamState, *mut c_void);
type DeviceCallback = unsafe extern "C" fn(i32, aclrtDeviceState, *mut c_void);

/// A callback and the argument it was registered with.
#[derive(Clone, Copy)]
struct Registered<F> {
    callback: F,
    args: *mut c_void,
}

// SAFETY: the registration's contract is that the runtime calls the
// callback with `args` from whichever thread changes a state.
unsafe impl<F: Send> Send for Registered<F> {}

struct Registry {
    streams: BTreeMap<String, Registered<StreamCallback>>,
    devices: BTreeMap<String, Registered<DeviceCallback>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    streams: BTreeMap::new(),
    devices: BTreeMap::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn register<F>(
    table: &mut BTreeMap<String, Registered<F>>,
    name: &str,
    callback: Option<F>,
    args: *mut c_void,
    what: &str,
) -> SoftResult {
    let Some(callback) = callback else {
        table.remove(name);
        return Ok(());
    };
    if table.contains_key(name) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "a {what} state callback named {name:?} is already registered (remove it with a NULL callback first)"
            ),
        );
    }
    table.insert(name.to_string(), Registered { callback, args });
    Ok(())
}

/// `aclrtRegStreamStateCallback` (the name already checked).
pub(crate) fn register_stream(name: &str, callback: Option<StreamCallback>, args: *mut c_void) -> SoftResult {
    register(&mut registry().streams, name, callback, args, "stream")
}

/// `aclrtRegDeviceStateCallback` (the name already checked).
pub(crate) fn register_device(name: &str, callback: Option<DeviceCallback>, args: *mut c_void) -> SoftResult {
    register(&mut registry().devices, name, callback, args, "device")
}

/// Tells the stream state callbacks that `stream` changed as `state` says.
pub(crate) fn stream_changed(stream: aclrtStream, state: aclrtStreamState) {
    let callbacks: Vec<_> = registry().streams.values().copied().collect();
    for registered in callbacks {
        // SAFETY: registered by the program to be called on stream state
        // changes with these arguments.
        unsafe { (registered.callback)(stream, state, registered.args) };
    }
}

/// Tells the device state callbacks that `device` changes as `state` says.
pub(crate) fn device_changed(device: i32, state: aclrtDeviceState) {
    let callbacks: Vec<_> = registry().devices.values().copied().collect();
    for registered in callbacks {
        // SAFETY: registered by the program to be called on device state
        // changes with these arguments.
        unsafe { (registered.callback)(device, state, registered.args) };
    }
}
