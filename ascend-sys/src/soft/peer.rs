//! Peer access between devices (to be built).

/// Which device may access which peer.
#[derive(Debug, Default)]
pub(crate) struct PeerAccess {}
