//! Copies between registered local memory and the global pool, their
//! direction taken from the types of their sides: [`CopyTo`],
//! [`Member::copy`], [`Member::copy_batch`].

use super::handle::Handle;
use super::registration::Raw;
use super::{
    DeviceRead, DeviceWrite, Dram, FabricError, GlobalRange, Hbm, HostRead, HostWrite, MemKind, Member,
    clear_last_error, sys,
};
use std::ffi::c_void;

mod sealed {
    use super::Raw;

    /// A side of a copy, as the library sees it. Only this module's types
    /// implement it.
    pub trait Side {
        fn raw(&self) -> Raw;

        /// Whether it is registered local memory (not a global range).
        fn is_local(&self) -> bool;
    }
}

/// One side of a copy: a registered local buffer ([`DeviceRead`],
/// [`DeviceWrite`], [`HostRead`], [`HostWrite`]) or a [`GlobalRange`].
/// Sealed: only these types are sides.
///
/// ```
/// use ascend::fabric::{Dram, GlobalRange, HostWrite, Side};
/// fn is_side<S: Side>() {}
/// is_side::<GlobalRange<'static, Dram>>();
/// is_side::<HostWrite<'static>>();
/// ```
pub trait Side: sealed::Side {}

impl<T: sealed::Side> Side for T {}

/// `Self` can be copied to `D`: implemented only for the pairs MemFabric
/// moves, each with its copy type, so that an illegal pair does not
/// compile.
///
/// | source ↓ / destination → | [`DeviceWrite`] | [`HostWrite`] | [`GlobalRange<Hbm>`] | [`GlobalRange<Dram>`] |
/// |---|---|---|---|---|
/// | [`DeviceRead`] | — | — | L2G | L2GH |
/// | [`HostRead`] | — | — | H2G | H2GH |
/// | [`GlobalRange<Hbm>`] | G2L | G2H | G2G | G2G |
/// | [`GlobalRange<Dram>`] | GH2L | GH2H | G2G | G2G |
///
/// ("G" is any global address, of HBM or DRAM, "GH" a global DRAM one; a
/// copy between two local buffers is not MemFabric's: use the
/// [`Stream`](crate::Stream) copies.)
///
/// ```
/// use ascend::fabric::{CopyTo, DeviceRead, Dram, GlobalRange, Hbm, HostWrite, sys};
/// assert_eq!(<DeviceRead as CopyTo<GlobalRange<Hbm>>>::COPY_TYPE, sys::SMEMB_COPY_L2G);
/// assert_eq!(<GlobalRange<Dram> as CopyTo<HostWrite>>::COPY_TYPE, sys::SMEMB_COPY_GH2H);
/// assert_eq!(<GlobalRange<Hbm> as CopyTo<GlobalRange<Dram>>>::COPY_TYPE, sys::SMEMB_COPY_G2G);
/// ```
pub trait CopyTo<D: Side>: Side {
    /// The copy type (`smem_bm_copy_type`).
    ///
    /// ```
    /// use ascend::fabric::{CopyTo, Dram, GlobalRange, HostRead, sys};
    /// assert_eq!(<HostRead as CopyTo<GlobalRange<Dram>>>::COPY_TYPE, sys::SMEMB_COPY_H2GH);
    /// ```
    const COPY_TYPE: sys::smem_bm_copy_type;
}

macro_rules! copy_to {
    ($($src:ty => $dst:ty : $kind:ident;)*) => {
        $(impl CopyTo<$dst> for $src {
            const COPY_TYPE: sys::smem_bm_copy_type = sys::$kind;
        })*
    };
}

copy_to! {
    DeviceRead<'_> => GlobalRange<'_, Hbm>: SMEMB_COPY_L2G;
    GlobalRange<'_, Hbm> => DeviceWrite<'_>: SMEMB_COPY_G2L;
    GlobalRange<'_, Hbm> => HostWrite<'_>: SMEMB_COPY_G2H;
    HostRead<'_> => GlobalRange<'_, Hbm>: SMEMB_COPY_H2G;
    DeviceRead<'_> => GlobalRange<'_, Dram>: SMEMB_COPY_L2GH;
    GlobalRange<'_, Dram> => DeviceWrite<'_>: SMEMB_COPY_GH2L;
    GlobalRange<'_, Dram> => HostWrite<'_>: SMEMB_COPY_GH2H;
    HostRead<'_> => GlobalRange<'_, Dram>: SMEMB_COPY_H2GH;
}

impl<A: MemKind, B: MemKind> CopyTo<GlobalRange<'_, B>> for GlobalRange<'_, A> {
    const COPY_TYPE: sys::smem_bm_copy_type = sys::SMEMB_COPY_G2G;
}

macro_rules! local_sides {
    ($($name:ident),*) => {
        $(impl sealed::Side for $name<'_> {
            fn raw(&self) -> Raw {
                self.raw
            }

            fn is_local(&self) -> bool {
                true
            }
        })*
    };
}

local_sides!(DeviceRead, DeviceWrite, HostRead, HostWrite);

impl<K: MemKind> sealed::Side for GlobalRange<'_, K> {
    fn raw(&self) -> Raw {
        Raw {
            handle: self.handle,
            address: self.gva(),
            len: self.len(),
        }
    }

    fn is_local(&self) -> bool {
        false
    }
}

/// Whether `side` is registered local memory (not a global range).
pub(super) fn is_local<S: Side>(side: &S) -> bool {
    sealed::Side::is_local(side)
}

/// What a copy needs, checked: the (source, destination) raw sides.
pub(super) fn checked_pair<S: CopyTo<D>, D: Side>(
    (handle, pool): (Handle, u32),
    method: &'static str,
    src: &S,
    dst: &D,
) -> Result<(Raw, Raw), FabricError> {
    let (from, to) = (src.raw(), dst.raw());
    if from.handle != handle.id() || to.handle != handle.id() {
        return Err(FabricError::InvalidArgument {
            method,
            reason: format!("a side of another pool than pool {pool}"),
        });
    }
    if from.len != to.len {
        return Err(FabricError::InvalidArgument {
            method,
            reason: format!("{} source bytes, {} destination bytes", from.len, to.len),
        });
    }
    Ok((from, to))
}

/// How a copy is submitted: its flags (the params' stream stays NULL:
/// MemFabric 1.3 runs a copy without `ASYNC_COPY_FLAG` synchronously
/// whatever the stream, see [`Member::copy_on`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Submit {
    flags: u32,
}

impl Submit {
    /// Synchronously: the call returns when the bytes are there.
    pub(super) const NOW: Submit = Submit { flags: 0 };
    /// `ASYNC_COPY_FLAG`: finished by `smem_bm_wait` on the same thread.
    pub(super) const ASYNC: Submit = Submit {
        flags: sys::ASYNC_COPY_FLAG,
    };
}

/// `smem_bm_copy` of one checked pair (nothing for zero bytes).
pub(super) fn copy_raw(
    handle: Handle,
    (from, to): (Raw, Raw),
    kind: sys::smem_bm_copy_type,
    submit: Submit,
) -> Result<(), FabricError> {
    if from.len == 0 {
        return Ok(());
    }
    let mut params = sys::smem_copy_params_t {
        src: from.address as *const c_void,
        dest: to.address as *mut c_void,
        dataSize: from.len,
        stream: std::ptr::null_mut(),
    };
    clear_last_error();
    // SAFETY: a live, joined handle; each side is registered local memory
    // (borrowed by the caller as the direction needs: shared for a source,
    // exclusively for a destination) or a checked range of the pool's
    // global addresses, `from.len` bytes each; the copy type is the one of
    // the sides' classes.
    super::check("smem_bm_copy", unsafe {
        sys::smem_bm_copy(handle.0, &mut params, kind, submit.flags)
    })
}

/// `smem_bm_copy_batch` of checked pairs (nothing for none; zero-byte
/// entries are left out).
pub(super) fn copy_batch_raw(
    handle: Handle,
    method: &'static str,
    pairs: impl Iterator<Item = Result<(Raw, Raw), FabricError>>,
    kind: sys::smem_bm_copy_type,
    submit: Submit,
) -> Result<(), FabricError> {
    let mut sources = Vec::new();
    let mut destinations = Vec::new();
    let mut sizes = Vec::new();
    for pair in pairs {
        let (from, to) = pair?;
        if from.len == 0 {
            continue;
        }
        sources.push(from.address as *mut c_void);
        destinations.push(to.address as *mut c_void);
        sizes.push(from.len as u64);
    }
    if sources.is_empty() {
        return Ok(());
    }
    let count = u32::try_from(sources.len()).map_err(|_| FabricError::InvalidArgument {
        method,
        reason: format!("{} entries (at most {})", sources.len(), u32::MAX),
    })?;
    let mut params = sys::smem_batch_copy_params_t {
        sources: sources.as_mut_ptr(),
        destinations: destinations.as_mut_ptr(),
        dataSizes: sizes.as_ptr(),
        batchSize: count,
        stream: std::ptr::null_mut(),
    };
    clear_last_error();
    // SAFETY: a live, joined handle; `count` entries in each array, alive
    // for the call, each a checked pair of one direction (one type pair),
    // borrowed by the caller as `copy_raw` says.
    super::check("smem_bm_copy_batch", unsafe {
        sys::smem_bm_copy_batch(handle.0, &mut params, kind, submit.flags)
    })
}

impl Member<'_> {
    /// Copies `src` to `dst` and returns when the bytes are there
    /// (`smem_bm_copy`); the copy type follows from the two sides' types
    /// ([`CopyTo`]). Zero bytes: nothing is called.
    ///
    /// # Errors
    ///
    /// - [`FabricError::InvalidArgument`]: the sides' lengths differ, or a
    ///   side belongs to another pool (nothing is called);
    /// - the library's error (a rank that died: a timeout).
    ///
    /// # Examples
    ///
    /// See [`Member::register_device`] and [`Member::register_host`]; G2G:
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// let member = pool.join()?;
    /// let (hbm, dram) = (member.peer_hbm(0)?, member.peer_dram(0)?);
    /// member.copy(hbm.slice(..4096)?, dram.slice(4096..8192)?)?; // G2G
    /// assert!(member.copy(hbm.slice(..10)?, dram.slice(..20)?).is_err()); // lengths differ
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy")]
    pub fn copy<S: CopyTo<D>, D: Side>(&self, src: S, dst: D) -> Result<(), FabricError> {
        let pair = checked_pair(self.pool_key(), "Member::copy", &src, &dst)?;
        copy_raw(self.handle(), pair, S::COPY_TYPE, Submit::NOW)
    }

    /// Copies each `(source, destination)` pair in one call
    /// (`smem_bm_copy_batch`) and returns when all bytes are there. Every
    /// pair has the same types, so the batch has one direction (MemFabric
    /// takes it from entry 0). An empty batch calls nothing.
    ///
    /// # Errors
    ///
    /// - [`FabricError::InvalidArgument`]: a pair's lengths differ, or a
    ///   side of another pool (nothing is called);
    /// - the library's error (the batch may have partly happened).
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
    /// let member = pool.join()?;
    /// let mut block = ascend::PinnedHostBuf::from_slice(&device, &[3u8; 8192])?;
    /// let registered = member.register_host(&mut block)?;
    /// let dram = member.peer_dram(0)?;
    /// // Two halves to two places: H2GH, one call.
    /// member.copy_batch(&[
    ///     (registered.slice(..4096)?, dram.slice(0..4096)?),
    ///     (registered.slice(4096..)?, dram.slice(65536..69632)?),
    /// ])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy_batch")]
    pub fn copy_batch<S: CopyTo<D>, D: Side>(&self, pairs: &[(S, D)]) -> Result<(), FabricError> {
        const METHOD: &str = "Member::copy_batch";
        let checked = pairs
            .iter()
            .map(|(src, dst)| checked_pair(self.pool_key(), METHOD, src, dst));
        copy_batch_raw(self.handle(), METHOD, checked, S::COPY_TYPE, Submit::NOW)
    }
}
