//! A rank's local contribution to the pool and its views of its peers':
//! host memory (DRAM) in a `memfd` that peers map through
//! `/proc/<pid>/fd/<fd>` ([`dram`]), and device memory (HBM) of the
//! software device, shared through its key-based IPC ([`hbm`]).

pub(crate) mod dram;
pub(crate) mod hbm;
