//! Copies in a stream's order ([`Member::copy_on`],
//! [`Member::copy_batch_on`]), inside a
//! [`Stream::scope`](crate::stream::Stream::scope): the stream is
//! synchronised first, so a copy runs after the stream's earlier work (a
//! kernel writing the KV blocks, a copy in), and the copy has finished
//! when the call returns, so the stream's later work sees it.
//!
//! Why not MemFabric's `SMEM_BM_FLAG_USE_EXTERNAL_STREAM`: in its source
//! (1.3), a copy without `ASYNC_COPY_FLAG` runs synchronously on the
//! thread's own stream whatever stream it is given, and an asynchronous
//! copy on the given stream is honoured by some versions only (others
//! queue it on the thread's stream, which the scope's synchronisation
//! would not cover). Synchronising first is correct on all of them.

use super::copy::{Submit, checked_pair, copy_batch_raw, copy_raw};
use super::{CopyTo, FabricError, Member, Side};
use crate::stream::AsyncScope;

impl Member<'_> {
    /// Copies `src` to `dst` in the order of `scope`'s stream: it
    /// synchronises the stream (the copy runs after the work queued on it
    /// before), then copies (`smem_bm_copy`) and returns when the bytes are
    /// there (the work queued after it sees them). Both sides stay borrowed
    /// until the scope ends (`'scope`), as the scope's own transfers do, so
    /// the member cannot leave meanwhile. Zero bytes: the stream is
    /// synchronised, nothing is copied.
    ///
    /// # Errors
    ///
    /// - [`FabricError::InvalidArgument`]: the stream is on another device
    ///   than the BM, the sides' lengths differ, or a side belongs to
    ///   another pool (nothing is called);
    /// - [`FabricError::Stream`]: synchronising the stream failed (nothing
    ///   is copied);
    /// - the library's error.
    ///
    /// # Examples
    ///
    /// An offload and a fetch of the same slot in one stream's order: the
    /// fetch runs after the offload, and both have run when `scope`
    /// returns.
    ///
    /// ```
    /// use ascend::{DeviceBuf, stream::Stream};
    /// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// let device = ascend::Device::new(0)?;
    /// let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram(2 << 20))?;
    /// let member = pool.join()?;
    /// let stream = Stream::new(&device)?;
    /// let mut kv = DeviceBuf::from_slice(&device, &[7u8; 4096])?;
    /// let kv = member.register_device(&mut kv)?;
    /// let mut back = DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let mut back = member.register_device(&mut back)?;
    /// let slot = member.peer_dram(0)?.slice(..4096)?;
    /// let (kv_read, back_write) = (kv.read(), back.write());
    /// stream.scope(|s| {
    ///     member.copy_on(s, kv_read, slot)?; // L2GH, after the stream's earlier work
    ///     member.copy_on(s, slot, back_write)?; // GH2L, after the offload
    ///     Ok(())
    /// })?; // synchronised: both copies have run
    /// assert_eq!(back.storage().to_vec()?, [7u8; 4096]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Using a side's buffer inside the scope does not compile:
    ///
    /// ```compile_fail,E0502
    /// # use ascend::{DeviceBuf, stream::Stream};
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// # let stream = Stream::new(&device)?;
    /// let mut back = DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let mut registered = member.register_device(&mut back)?;
    /// let slot = member.peer_dram(0)?.slice(..4096)?;
    /// stream.scope(|s| {
    ///     member.copy_on(s, slot, registered.write())?;
    ///     registered.storage().to_vec()?; // borrowed by the copy until the scope ends
    ///     Ok(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy")]
    pub fn copy_on<'scope, S, D>(
        &self,
        scope: &'scope AsyncScope<'scope, '_>,
        src: S,
        dst: D,
    ) -> Result<(), FabricError>
    where
        S: CopyTo<D> + 'scope,
        D: Side + 'scope,
    {
        const METHOD: &str = "Member::copy_on";
        self.check_stream(METHOD, scope)?;
        let pair = checked_pair(self.pool_key(), METHOD, &src, &dst)?;
        synchronize(METHOD, scope)?;
        copy_raw(self.handle(), pair, S::COPY_TYPE, Submit::NOW)
    }

    /// Copies a batch of one direction in the order of `scope`'s stream
    /// (`smem_bm_copy_batch` after synchronising the stream), as
    /// [`copy_on`](Self::copy_on) does one. An empty batch copies nothing.
    ///
    /// # Errors
    ///
    /// As [`copy_on`](Self::copy_on), for any pair.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::stream::Stream;
    /// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// let device = ascend::Device::new(0)?;
    /// let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// let pool = bm.create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram(2 << 20))?;
    /// let member = pool.join()?;
    /// let stream = Stream::new(&device)?;
    /// let mut blocks = ascend::DeviceBuf::from_slice(&device, &[3u8; 8192])?;
    /// let blocks = member.register_device(&mut blocks)?;
    /// let dram = member.peer_dram(0)?;
    /// let pairs = [
    ///     (blocks.slice(..4096)?, dram.slice(..4096)?),
    ///     (blocks.slice(4096..)?, dram.slice(65536..69632)?),
    /// ];
    /// stream.scope(|s| Ok(member.copy_batch_on(s, &pairs)?))?; // L2GH, in stream order
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy_batch")]
    pub fn copy_batch_on<'scope, S, D>(
        &self,
        scope: &'scope AsyncScope<'scope, '_>,
        pairs: &[(S, D)],
    ) -> Result<(), FabricError>
    where
        S: CopyTo<D> + 'scope,
        D: Side + 'scope,
    {
        const METHOD: &str = "Member::copy_batch_on";
        self.check_stream(METHOD, scope)?;
        let checked = pairs
            .iter()
            .map(|(src, dst)| checked_pair(self.pool_key(), METHOD, src, dst))
            .collect::<Result<Vec<_>, _>>()?;
        synchronize(METHOD, scope)?;
        copy_batch_raw(
            self.handle(),
            METHOD,
            checked.into_iter().map(Ok),
            S::COPY_TYPE,
            Submit::NOW,
        )
    }

    /// The scope's stream must be on the BM's device.
    fn check_stream(&self, method: &'static str, scope: &AsyncScope<'_, '_>) -> Result<(), FabricError> {
        let (stream_device, bm_device) = (scope.stream().device(), self.pool().big_memory().device());
        if stream_device != bm_device {
            return Err(FabricError::InvalidArgument {
                method,
                reason: format!(
                    "a stream on device {}, the BM on device {}",
                    stream_device.id(),
                    bm_device.id()
                ),
            });
        }
        Ok(())
    }
}

/// Waits for the work queued on `scope`'s stream before a copy.
fn synchronize(method: &'static str, scope: &AsyncScope<'_, '_>) -> Result<(), FabricError> {
    scope.stream().synchronize().map_err(|error| FabricError::Stream {
        method,
        error: Box::new(error),
    })
}
