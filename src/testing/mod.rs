//! Testing helpers (feature `testing`).
