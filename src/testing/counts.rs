//! A readable difference of two [`Live`] count snapshots.

use ascend_sys::soft::Live;

/// `name: before -> after` for every field of [`Live`] that differs (a
/// summary for reports; [`LeakCheck`](super::LeakCheck) itself compares
/// identities).
///
/// ```
/// use ascend::testing::changed_counts;
/// use ascend::{Device, DeviceBuf};
/// use ascend_sys::soft;
/// let device = Device::new(0)?;
/// let before = soft::live();
/// let buf = DeviceBuf::<u8>::zeroed(&device, 64)?;
/// let changes = changed_counts(&before, &soft::live());
/// let allocations = before.device_allocations;
/// assert!(changes.contains(&format!("device_allocations: {allocations} -> {}", allocations + 1)));
/// drop(buf);
/// assert_eq!(changed_counts(&before, &soft::live()), Vec::<String>::new());
/// # Ok::<(), ascend::Error>(())
/// ```
pub fn changed_counts(before: &Live, after: &Live) -> Vec<String> {
    let fields: [(&str, u64, u64); 21] = [
        (
            "device_allocations",
            count(before.device_allocations),
            count(after.device_allocations),
        ),
        ("device_bytes", before.device_bytes, after.device_bytes),
        (
            "host_allocations",
            count(before.host_allocations),
            count(after.host_allocations),
        ),
        ("host_bytes", before.host_bytes, after.host_bytes),
        (
            "host_registrations",
            count(before.host_registrations),
            count(after.host_registrations),
        ),
        ("registered_bytes", before.registered_bytes, after.registered_bytes),
        ("contexts", count(before.contexts), count(after.contexts)),
        (
            "allocator_descriptors",
            count(before.allocator_descriptors),
            count(after.allocator_descriptors),
        ),
        (
            "physical_allocations",
            count(before.physical_allocations),
            count(after.physical_allocations),
        ),
        ("physical_bytes", before.physical_bytes, after.physical_bytes),
        ("reservations", count(before.reservations), count(after.reservations)),
        ("mappings", count(before.mappings), count(after.mappings)),
        ("streams", count(before.streams), count(after.streams)),
        ("events", count(before.events), count(after.events)),
        ("notifies", count(before.notifies), count(after.notifies)),
        (
            "shareable_exports",
            count(before.shareable_exports),
            count(after.shareable_exports),
        ),
        (
            "shareable_imports",
            count(before.shareable_imports),
            count(after.shareable_imports),
        ),
        ("ipc_keys", count(before.ipc_keys), count(after.ipc_keys)),
        ("ipc_imports", count(before.ipc_imports), count(after.ipc_imports)),
        ("mbufs", count(before.mbufs), count(after.mbufs)),
        ("mbuf_bytes", before.mbuf_bytes, after.mbuf_bytes),
    ];
    fields
        .iter()
        .filter(|(_, was, is)| was != is)
        .map(|(name, was, is)| format!("{name}: {was} -> {is}"))
        .collect()
}

fn count(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
