//! What the software fabric holds in this process now ([`live`]): the
//! count a leak check compares before and after.

use crate::soft::bm::handle;

/// The software fabric's live objects in this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FabricLive {
    /// BM objects created (`smem_bm_create2`) and not destroyed.
    pub bms: usize,
    /// User memory registrations (`smem_bm_register_user_mem`) not
    /// unregistered, over every live BM object.
    pub registrations: usize,
    /// The bytes of those registrations.
    pub registered_bytes: u64,
}

/// The software fabric's live objects in this process now (all zero before
/// its first use). Only the software fabric can answer this; with the real
/// library it counts nothing.
///
/// ```
/// use memfabric_sys::soft::{FabricLive, live};
/// assert_eq!(live(), FabricLive::default()); // nothing created yet
/// ```
pub fn live() -> FabricLive {
    let (bms, registrations, registered_bytes) = handle::census();
    FabricLive {
        bms,
        registrations,
        registered_bytes,
    }
}
