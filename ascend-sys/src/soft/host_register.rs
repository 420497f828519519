//! Host registration: host ranges registered with the device (to be built).

/// Every registered host range.
#[derive(Debug, Default)]
pub(crate) struct Registrations {}
