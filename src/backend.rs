//! Which backend runs the calls, and why.

use crate::error::Result;
use ascend_sys as sys;

pub use sys::{Backend, BackendInfo};

/// The active backend, choosing it now if nothing has yet. Before choosing,
/// it registers the toolkit found at build time ([`build_toolkit`]) as a
/// last-resort library location (see
/// [`ascend_sys::backend`] for the rules and [`ascend_sys::select_backend`]
/// to choose from Rust).
///
/// # Errors
///
/// [`Error::Backend`](crate::Error::Backend) when `ASCEND_BACKEND=hardware`
/// and no library was found (every path tried is listed), or when
/// `ASCEND_BACKEND` has an unknown value.
///
/// ```
/// let info = ascend::backend()?;
/// println!("{}", info.describe());
/// # Ok::<(), ascend::Error>(())
/// ```
pub fn backend() -> Result<&'static BackendInfo> {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        if let Some(dir) = build_toolkit() {
            sys::add_library_fallback(dir);
        }
    });
    Ok(sys::backend()?)
}

/// The CANN library directory found when this crate was *built*, if any
/// (from `ASCEND_HOME_PATH`, `ASCEND_TOOLKIT_HOME` or the default install
/// locations at build time). The loader searches at run time regardless;
/// this tells a user whether the build machine had a toolkit.
///
/// ```
/// // `None` on a build machine without CANN; the software device runs then.
/// if let Some(dir) = ascend::build_toolkit() {
///     assert!(std::path::Path::new(dir).is_absolute(), "{dir}");
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
pub fn build_toolkit() -> Option<&'static str> {
    option_env!("ASCEND_BUILD_TOOLKIT_LIB")
}
