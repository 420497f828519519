//! Host registration: ordinary (pageable) host memory made known to the
//! device (`aclrtHostRegister`, `aclrtHostRegisterV2`).
//!
//! ```text
//! AlignedHostBuf::zeroed ─> HostRegistration::register(&device, &mut buf, ..)
//!                              (borrows the memory mutably: it cannot be
//!                               freed, moved or touched except through the
//!                               registration while registered)
//!                           registration.device_pointer() -> DevicePointer<'_>
//! drop(HostRegistration) = aclrtHostUnregister
//! ```
//!
//! The registration borrows `&'a mut [T]`, not `&'a [T]`: a *mapped*
//! registration gives the device an address through which device code may
//! **write** the host bytes, so no other Rust reference to them may exist
//! while it lives. The host can still read and write them through
//! [`HostRegistration::as_slice`] and [`HostRegistration::as_mut_slice`]
//! (device work that uses the device pointer must have finished first).
//!
//! The runtime requires the host pointer to be aligned to 4 KiB
//! ([`HOST_REGISTER_ALIGN`]); this is checked in Rust before the call.
//! [`AlignedHostBuf`] provides suitably aligned memory. A
//! [`PinnedHostBuf`](crate::PinnedHostBuf) is only guaranteed 64-byte
//! alignment, and is already page-locked, so it is rarely a candidate.
//!
//! ```
//! use ascend::Device;
//! use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
//! let device = Device::new(0)?;
//! let mut buf = AlignedHostBuf::<u32>::zeroed(1024)?;
//! let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
//! let device_pointer = registration.device_pointer()?;
//! println!("device address: {device_pointer:?}");
//! registration.unregister()?;
//! buf[0] = 7; // usable again once unregistered
//! # Ok::<(), ascend::Error>(())
//! ```
//!
//! Freeing or touching the memory while registered does not compile:
//!
//! ```compile_fail,E0505
//! use ascend::Device;
//! use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
//! let device = Device::new(0)?;
//! let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
//! let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
//! drop(buf); // error: cannot move out of `buf` because it is borrowed
//! drop(registration);
//! # Ok::<(), ascend::Error>(())
//! ```
//!
//! # Leaking a registration
//!
//! [`std::mem::forget`] on a registration ends the borrow without
//! unregistering: the runtime keeps the range registered (a later
//! registration of that memory is refused with
//! `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`). Nothing in this crate's safe
//! API reaches host memory through a device pointer, so this leaks but is
//! not undefined behaviour; device code (launched through `unsafe` calls
//! outside this crate) must not use the device pointer of a leaked
//! registration.

mod aligned;
mod capabilities;
mod device_pointer;
mod flags;
mod malloc_config;
mod registration;

pub use aligned::AlignedHostBuf;
pub use capabilities::{HacType, host_mem_map_capabilities};
pub use device_pointer::DevicePointer;
pub use flags::{HostRegisterFlags, HostRegisterType};
pub use malloc_config::HostMallocConfig;
pub use registration::HostRegistration;

/// The alignment the runtime requires of a registered host pointer: 4 KiB,
/// the host page size `aclrtHostRegister` is documented with.
pub const HOST_REGISTER_ALIGN: usize = 4096;
