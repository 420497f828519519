//! The bottom layer of the software device: leaf helpers that name no other
//! part of it. The lock order ([`lock_order`]), the byte stripes of the data
//! path ([`byte_locks`]), settings ([`config`]), how a broken rule is
//! reported ([`soft_result`]), creation order ([`sequence`]), live-resource records
//! ([`resource`]), the leaf types of translation ([`segments`]), the host-visible ranges that are not plain host memory
//! ([`address_map`]), range allocation ([`range_alloc`]), one device's
//! sparse memory ([`device_arena`]), and one physical allocation's memory and
//! kind ([`physical_memory`], [`memory_kind`]), which the virtual-memory
//! and sharing families both hold.

pub(super) mod address_map;
pub(super) mod byte_locks;
pub(super) mod config;
pub(super) mod device_arena;
pub(super) mod lock_order;
pub(super) mod memory_kind;
pub(super) mod physical_memory;
pub(super) mod range_alloc;
pub(super) mod resource;
pub(super) mod segments;
pub(super) mod sequence;
pub(super) mod soft_result;
