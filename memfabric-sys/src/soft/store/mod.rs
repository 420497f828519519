//! The config store: a TCP server on loopback ([`server`]) and the
//! connection each rank keeps to it ([`client`]), speaking a line protocol
//! of this crate's own ([`protocol`]), and the page of rank states it
//! shares with the ranks ([`rank_page`]).

pub(crate) mod client;
pub(crate) mod protocol;
pub(crate) mod rank_page;
pub(crate) mod server;
mod state;
