//! The pools' side of the leak check of [`crate::testing`]: which blocks a
//! pool handed out while a check ran, and which runtime resources it keeps
//! as its own cache.
//!
//! A pool hit makes no runtime call, so the software device cannot see a
//! pool block that leaks. With the feature `testing`, every pool registers
//! (a weak reference, at creation only) in a process-wide list; a check
//! asks each pool to *watch* while it runs. A watched [`DevicePool`]
//! bypasses its thread caches, as it does while a tag sleeps (the hit
//! already reads that flag: the hit path does no more work), so every
//! block goes out and comes back through the pool's locked state, which
//! records the blocks handed out and forgets them when they come back. A
//! [`PinnedPool`] always takes its lock and records there. So a block is
//! known by its identity (its place), not by a count: a block made before
//! the check and freed inside cannot balance one leaked inside, even when
//! the pool gives the leaked one the same address.
//!
//! What a check reports of a block, [`PoolBlockLeak`] (with [`PoolKind`]),
//! is defined here too (`leak.rs`), public as `ascend::testing::*`.
//!
//! Without the feature, [`Watch`] is empty and every hook is an empty
//! inline function.
//!
//! [`DevicePool`]: super::DevicePool
//! [`PinnedPool`]: super::PinnedPool

#[cfg(feature = "testing")]
mod leak;

pub(super) use imp::Watch;
#[cfg(feature = "testing")]
pub(crate) use imp::{Held, PoolWatch, Watched, WatchedBlock, register};
#[cfg(feature = "testing")]
pub use leak::{PoolBlockLeak, PoolKind};

#[cfg(feature = "testing")]
mod imp {
    use super::leak::{PoolBlockLeak, PoolKind};
    use std::collections::{HashMap, HashSet};
    use std::hash::Hash;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, MutexGuard, Weak};

    /// Orders the blocks of every pool by when they were handed out.
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);

    /// A block handed out while a check watched, not given back yet.
    #[derive(Debug, Clone)]
    pub(crate) struct WatchedBlock {
        sequence: u64,
        address: usize,
        bytes: usize,
        tag: Option<String>,
    }

    /// The blocks a pool handed out since its watch started, by key (a
    /// device pool's place of a block, a pinned pool's address); `None`
    /// while no check watches.
    pub(crate) struct Watch<K> {
        blocks: Option<HashMap<K, WatchedBlock>>,
    }

    impl<K> Default for Watch<K> {
        fn default() -> Self {
            Self { blocks: None }
        }
    }

    impl<K: Hash + Eq> Watch<K> {
        /// Starts recording (forgetting what an earlier watch recorded).
        pub(crate) fn start(&mut self) {
            self.blocks = Some(HashMap::new());
        }

        /// Records a block handed out (while watching).
        #[inline]
        pub(crate) fn handed_out(&mut self, key: K, address: usize, bytes: usize, tag: Option<&str>) {
            if let Some(blocks) = &mut self.blocks {
                let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
                let tag = tag.map(str::to_owned);
                blocks.insert(
                    key,
                    WatchedBlock {
                        sequence,
                        address,
                        bytes,
                        tag,
                    },
                );
            }
        }

        /// Forgets a block given back (a block handed out before the watch
        /// was never recorded).
        #[inline]
        pub(crate) fn given_back(&mut self, key: &K) {
            if let Some(blocks) = &mut self.blocks {
                blocks.remove(key);
            }
        }

        /// The blocks recorded and not given back.
        pub(crate) fn live(&self) -> Vec<WatchedBlock> {
            self.blocks
                .as_ref()
                .map_or_else(Vec::new, |blocks| blocks.values().cloned().collect())
        }

        /// Stops recording; returns the blocks not given back.
        pub(crate) fn end(&mut self) -> Vec<WatchedBlock> {
            self.blocks
                .take()
                .map_or_else(Vec::new, |blocks| blocks.into_values().collect())
        }
    }

    /// The runtime resources a pool keeps as its own cache (the chunks
    /// mapped for cached blocks, cached pinned buffers), which a check
    /// must not blame on the checked code.
    #[derive(Debug, Default)]
    pub(crate) struct Held {
        /// Handles of physical allocations.
        pub(crate) physical: HashSet<u64>,
        /// Reserved device ranges `(base, bytes)`: their reservations and
        /// every mapping in them.
        pub(crate) device_ranges: Vec<(usize, usize)>,
        /// Addresses of pinned host buffers.
        pub(crate) host: HashSet<u64>,
    }

    impl Held {
        /// Whether `address` is in one of the reserved ranges.
        pub(crate) fn in_device_range(&self, address: u64) -> bool {
            self.device_ranges
                .iter()
                .any(|&(base, bytes)| address >= base as u64 && address - (base as u64) < bytes as u64)
        }
    }

    /// A pool a check can watch.
    pub(crate) trait Watched: Send + Sync {
        /// Which kind of pool.
        fn kind(&self) -> PoolKind;
        /// The id of its device.
        fn device_id(&self) -> i32;
        /// Starts recording the blocks handed out (its caches, if any,
        /// are bypassed meanwhile).
        fn start_watch(&self);
        /// The recorded blocks not given back yet.
        fn watched_now(&self) -> Vec<WatchedBlock>;
        /// Stops recording; returns the recorded blocks not given back.
        fn end_watch(&self) -> Vec<WatchedBlock>;
        /// Adds the runtime resources it keeps as its cache to `held`.
        fn held(&self, held: &mut Held);
    }

    /// Every pool made so far (dead ones are pruned at each registration),
    /// by registration number.
    #[derive(Default)]
    struct Registry {
        pools: Vec<(u64, Weak<dyn Watched>)>,
        next: u64,
        /// Whether a check watches (new pools start watching at once).
        watching: bool,
    }

    static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
        pools: Vec::new(),
        next: 0,
        watching: false,
    });

    fn registry() -> MutexGuard<'static, Registry> {
        // Nothing is left half-done under this lock; a poison means nothing.
        REGISTRY.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a new pool (at its creation; lock order: the registry,
    /// then a pool's state).
    pub(crate) fn register(pool: Weak<dyn Watched>) {
        let mut registry = registry();
        registry.pools.retain(|(_, pool)| pool.strong_count() > 0);
        if registry.watching
            && let Some(live) = pool.upgrade()
        {
            live.start_watch();
        }
        let number = registry.next;
        registry.next += 1;
        registry.pools.push((number, pool));
    }

    /// The live pools, with whether each was made before the watch started.
    fn live_pools(registry: &Registry, first_new: u64) -> Vec<(bool, Arc<dyn Watched>)> {
        registry
            .pools
            .iter()
            .filter_map(|(number, pool)| Some((*number < first_new, pool.upgrade()?)))
            .collect()
    }

    /// What a watch found.
    #[derive(Debug, Default)]
    pub(crate) struct Found {
        /// Blocks handed out while it watched and not given back, oldest
        /// first.
        pub(crate) blocks: Vec<PoolBlockLeak>,
        /// What the pools made before it keep as their cache.
        pub(crate) held: Held,
    }

    /// A check's watch of every pool; ended by [`PoolWatch::finish`] or
    /// the drop.
    #[derive(Debug)]
    pub(crate) struct PoolWatch {
        /// The registration number of the first pool made after the start.
        first_new: u64,
        ended: bool,
    }

    impl PoolWatch {
        /// Starts watching every pool, and pools made from now on.
        pub(crate) fn start() -> Self {
            let mut registry = registry();
            registry.watching = true;
            let first_new = registry.next;
            // Pools dropped here (the last reference gone meanwhile) do not
            // touch the registry.
            for (_, pool) in live_pools(&registry, first_new) {
                pool.start_watch();
            }
            Self {
                first_new,
                ended: false,
            }
        }

        /// What [`PoolWatch::finish`] would find now.
        pub(crate) fn found_now(&self) -> Found {
            self.collect(false)
        }

        /// Ends the watch; returns what it found (nothing more once ended).
        pub(crate) fn finish(&mut self) -> Found {
            let found = self.collect(!self.ended);
            self.ended = true;
            found
        }

        fn collect(&self, end: bool) -> Found {
            let mut registry = registry();
            let mut found = Found::default();
            let mut blocks = Vec::new();
            for (before, pool) in live_pools(&registry, self.first_new) {
                let watched = if end { pool.end_watch() } else { pool.watched_now() };
                blocks.extend(watched.into_iter().map(|block| (block, pool.kind(), pool.device_id())));
                if before {
                    pool.held(&mut found.held);
                }
            }
            if end {
                registry.watching = false;
            }
            blocks.sort_by_key(|(block, _, _)| block.sequence);
            found.blocks = blocks
                .into_iter()
                .map(|(block, pool, device)| PoolBlockLeak {
                    pool,
                    device,
                    tag: block.tag,
                    address: block.address as u64,
                    bytes: block.bytes,
                })
                .collect();
            found
        }
    }

    impl Drop for PoolWatch {
        fn drop(&mut self) {
            drop(self.finish());
        }
    }
}

#[cfg(not(feature = "testing"))]
mod imp {
    use std::marker::PhantomData;

    /// Without the feature `testing`: nothing is recorded.
    pub(crate) struct Watch<K>(PhantomData<K>);

    impl<K> Default for Watch<K> {
        fn default() -> Self {
            Self(PhantomData)
        }
    }

    impl<K> Watch<K> {
        #[inline(always)]
        pub(crate) fn handed_out(&mut self, _key: K, _address: usize, _bytes: usize, _tag: Option<&str>) {}

        #[inline(always)]
        pub(crate) fn given_back(&mut self, _key: &K) {}
    }
}
