//! Custom allocator descriptors and their registration on streams (to be built).

/// Every descriptor and every stream's registered allocator.
#[derive(Debug, Default)]
pub(crate) struct Allocators {}
