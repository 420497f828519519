//! A symbol resolved on first use, once.

use libloading::Library;
use std::sync::OnceLock;

/// A function pointer of type `F` looked up by name in the loaded library the
/// first time it is needed. A missing symbol is remembered as missing, so it
/// is looked up once, not on every call.
pub(crate) struct LazySymbol<F> {
    name: &'static str,
    resolved: OnceLock<Option<F>>,
}

impl<F: Copy> LazySymbol<F> {
    /// `name` must end with a NUL byte.
    pub(crate) const fn new(name: &'static str) -> Self {
        Self {
            name,
            resolved: OnceLock::new(),
        }
    }

    /// The function, or `None` when the library does not export it.
    ///
    /// There is one library per process (the backend is chosen once), so
    /// caching the pointer per symbol is sound.
    #[inline]
    pub(crate) fn get(&self, library: &'static Library) -> Option<F> {
        *self.resolved.get_or_init(|| {
            // SAFETY: `F` is the function-pointer type of this symbol in
            // MemFabric's ABI 1.3 (the list in `api.rs`), the ABI version
            // the loader checked; the library lives for the rest of the
            // process (it is never closed), so the copied pointer never
            // dangles.
            unsafe { library.get::<F>(self.name.as_bytes()) }
                .ok()
                .map(|symbol| *symbol)
        })
    }
}
