//! The config store: a TCP server on loopback ([`server`]) and the
//! connection each rank keeps to it ([`client`]), speaking a line protocol
//! of this crate's own ([`protocol`]).

pub(crate) mod client;
pub(crate) mod protocol;
pub(crate) mod server;
mod state;
