//! The map slots of this process's imports: two imports of the same export
//! are the same memory, so they share one [`MapSlot`] and only one of them
//! can be mapped at a time.
//!
//! An import is known by the export's value (V1 and V2 DEFAULT handles of
//! one export carry the same number) and by the handle the runtime returned
//! (should it return the same handle for a second import). What no process
//! can see is that two *different* exports name the same memory; an
//! exporter that exports one allocation twice and sends both tokens to one
//! process gives that process two allocations as far as it can tell (the
//! software device refuses a second export of one handle).

use super::handle::HandleValue;
use crate::vmm::MapSlot;
use std::sync::{Arc, Mutex, Weak};

/// What identifies one import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ImportKey {
    /// A V1 or V2 DEFAULT export value.
    Number(u64),
    /// A V2 FABRIC export.
    Fabric([u8; super::FABRIC_HANDLE_LEN]),
    /// The handle the runtime returned for the import.
    Handle(usize),
}

/// Slots of live imports; entries whose owners are all gone are dropped on
/// the next lookup.
static SLOTS: Mutex<Vec<(ImportKey, Weak<MapSlot>)>> = Mutex::new(Vec::new());

/// The slot of an import of `value` that the runtime returned as `handle`:
/// the slot of a live import of the same export or handle, or a new one.
pub(super) fn slot_for(value: HandleValue, handle: usize) -> Arc<MapSlot> {
    let export = match value {
        HandleValue::V1(number) | HandleValue::V2Default(number) => ImportKey::Number(number),
        HandleValue::V2Fabric(data) => ImportKey::Fabric(data),
    };
    let keys = [export, ImportKey::Handle(handle)];
    let mut slots = SLOTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    slots.retain(|(_, slot)| slot.strong_count() > 0);
    let slot = slots
        .iter()
        .filter(|(key, _)| keys.contains(key))
        .find_map(|(_, slot)| slot.upgrade())
        .unwrap_or_else(MapSlot::new);
    for key in keys {
        if !slots.iter().any(|(known, _)| *known == key) {
            slots.push((key, Arc::downgrade(&slot)));
        }
    }
    slot
}
