//! Safe Rust SDK for Huawei Ascend NPU memory management (placeholder while the
//! safe layer is built; see `ascend_sys` for the raw API).
pub use ascend_sys as sys;
