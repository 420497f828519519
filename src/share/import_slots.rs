//! The map slots of this process's imports: two imports of the same export
//! are the same memory, so they share one [`MapSlot`] and only one of them
//! can be mapped at a time. This process's own exports are noted too, with
//! the exported memory's slot: an import of one of them (which the runtime
//! is not known to allow) shares that slot.
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

/// Notes an export this process made of memory whose owners here share
/// `slot`: should the runtime let this process import its own export, the
/// import shares the exporter's slot, so the same bytes are never mapped
/// at two addresses of one process (each mapping would be an exclusive
/// view of them).
pub(super) fn register_export(value: HandleValue, slot: &Arc<MapSlot>) {
    let key = key_of(value);
    let mut slots = SLOTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    slots.retain(|(_, slot)| slot.strong_count() > 0);
    if !slots.iter().any(|(known, _)| *known == key) {
        slots.push((key, Arc::downgrade(slot)));
    }
}

fn key_of(value: HandleValue) -> ImportKey {
    match value {
        HandleValue::V1(number) | HandleValue::V2Default(number) => ImportKey::Number(number),
        HandleValue::V2Fabric(data) => ImportKey::Fabric(data),
    }
}

/// The slot of an import of `value` that the runtime returned as `handle`:
/// the slot of a live import of the same export or handle, or a new one.
pub(super) fn slot_for(value: HandleValue, handle: usize) -> Arc<MapSlot> {
    let keys = [key_of(value), ImportKey::Handle(handle)];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_of_an_own_export_shares_the_exporters_slot() {
        // Values no runtime hands out in this test process.
        let exporter = MapSlot::new();
        register_export(HandleValue::V2Default(0xA5A5_0001), &exporter);
        let imported = slot_for(HandleValue::V1(0xA5A5_0001), 0xA5A5_0100);
        assert!(Arc::ptr_eq(&imported, &exporter), "the same memory, one slot");
        // The exporter maps its memory: the import cannot map it too.
        assert!(exporter.take());
        assert!(!imported.take());
        // Another export's import has a slot of its own.
        let other = slot_for(HandleValue::V2Default(0xA5A5_0002), 0xA5A5_0200);
        assert!(!Arc::ptr_eq(&other, &exporter));
    }
}
