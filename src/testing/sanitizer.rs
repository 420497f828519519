//! The software device's stream-hazard sanitizer, for tests of code built
//! on this crate: races between streams (and between a stream and the
//! host), reads of device memory nothing wrote, and synchronisation that
//! orders nothing. See the guide page
//! [Finding stream races](crate::guide::stream_races).

use super::guard::on_software_device;
pub use ascend_sys::soft::{Checks as SanitizerChecks, SanitizerSummary};

/// Starts the sanitizer with `checks`, for the rest of the process (it is
/// process-wide; starting it twice adds the checks). Its reports join the
/// software device's misuse list, so [`on_software_device`] and
/// [`LeakCheck`](super::LeakCheck) fail on a hazard.
///
/// ```
/// use ascend::testing::{SanitizerChecks, start_sanitizer};
/// start_sanitizer(SanitizerChecks::RACE | SanitizerChecks::INIT);
/// ```
pub fn start_sanitizer(checks: SanitizerChecks) {
    ascend_sys::soft::start_sanitizer(checks);
}

/// What the sanitizer reported since it started, by kind.
///
/// ```
/// use ascend::testing::{SanitizerChecks, sanitizer_summary, start_sanitizer};
/// start_sanitizer(SanitizerChecks::all());
/// assert_eq!(sanitizer_summary().total(), 0);
/// ```
pub fn sanitizer_summary() -> SanitizerSummary {
    ascend_sys::soft::sanitizer_summary()
}

/// [`on_software_device`] with the sanitizer's `checks` started first:
/// `f` must leave nothing live, and its device work must be free of
/// hazards.
///
/// ```
/// use ascend::testing::{SanitizerChecks, on_software_device_sanitized};
/// use ascend::{Device, DeviceBuf, Stream};
/// let device = Device::new(0).unwrap();
/// let total = on_software_device_sanitized(SanitizerChecks::all(), || {
///     let buf = DeviceBuf::from_slice(&device, &[1u32, 2, 3]).unwrap();
///     buf.to_vec().unwrap().iter().sum::<u32>()
/// });
/// assert_eq!(total, 6);
/// ```
///
/// A read of memory nothing wrote is a hazard:
///
/// ```should_panic
/// use ascend::testing::{SanitizerChecks, on_software_device_sanitized};
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0).unwrap();
/// on_software_device_sanitized(SanitizerChecks::INIT, || {
///     // SAFETY: `u32` accepts any bit pattern; the example reads the
///     // meaningless values on purpose, to show the sanitizer catching it.
///     let buf = unsafe { DeviceBuf::<u32>::uninit(&device, 16) }.unwrap();
///     buf.to_vec().unwrap() // reads bytes nothing wrote
/// });
/// ```
///
/// # Panics
///
/// As [`on_software_device`]: on a leak, on misuse (a hazard included),
/// and on another backend.
pub fn on_software_device_sanitized<R>(checks: SanitizerChecks, f: impl FnOnce() -> R) -> R {
    start_sanitizer(checks);
    on_software_device(f)
}
