//! The BM layer: the process-wide world (`smem_bm_init`: the rank, the
//! store connection, the store this process serves) in [`world`], and the
//! BM objects with their local segments and peer views in [`handle`].

pub(crate) mod handle;
pub(crate) mod peer;
pub(crate) mod world;
