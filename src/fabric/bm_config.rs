//! [`BmConfig`]: how `smem_bm_init` joins this process to a BM world.

use super::{FabricError, StoreSecurity, check, sys};
use std::time::Duration;

/// How this process takes part in a BM world ([`BigMemory::init`](super::BigMemory::init)):
/// the timeouts, whether rank 0 runs the config store, how the rank is
/// chosen, and how the store connection is protected.
///
/// The defaults are the library's own (`smem_bm_config_init`, measured on
/// 1.3.0): 120 s to initialise, 120 s to create, 900 s per control
/// operation; rank 0 starts the config store; the store assigns ranks in
/// join order; and the safe layer's own: a plaintext store only on this
/// host ([`StoreSecurity::LoopbackOnly`]).
///
/// ```
/// use std::time::Duration;
/// use ascend::fabric::BmConfig;
/// let config = BmConfig::default()
///     .with_init_timeout(Duration::from_secs(30))
///     .with_rank(1); // not assigned by the store
/// assert_eq!(config.rank(), Some(1));
/// assert_eq!(config.init_timeout(), Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BmConfig {
    init_timeout: Duration,
    create_timeout: Duration,
    control_timeout: Duration,
    start_store_server: bool,
    rank: Option<u32>,
    security: StoreSecurity,
}

impl Default for BmConfig {
    fn default() -> Self {
        BmConfig {
            init_timeout: Duration::from_secs(120),
            create_timeout: Duration::from_secs(120),
            control_timeout: Duration::from_secs(900),
            start_store_server: true,
            rank: None,
            security: StoreSecurity::default(),
        }
    }
}

impl BmConfig {
    /// How long `smem_bm_init` waits for the world (whole seconds, at
    /// least one).
    ///
    /// ```
    /// use ascend::fabric::BmConfig;
    /// let config = BmConfig::default().with_init_timeout(std::time::Duration::from_secs(5));
    /// assert_eq!(config.init_timeout().as_secs(), 5);
    /// ```
    pub fn with_init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// How long creating a pool waits (whole seconds, at least one).
    ///
    /// ```
    /// use ascend::fabric::BmConfig;
    /// let _ = BmConfig::default().with_create_timeout(std::time::Duration::from_secs(10));
    /// ```
    pub fn with_create_timeout(mut self, timeout: Duration) -> Self {
        self.create_timeout = timeout;
        self
    }

    /// How long each control operation (join, leave, a copy's wait for a
    /// peer) waits (whole seconds, at least one).
    ///
    /// ```
    /// use ascend::fabric::BmConfig;
    /// let _ = BmConfig::default().with_control_timeout(std::time::Duration::from_secs(60));
    /// ```
    pub fn with_control_timeout(mut self, timeout: Duration) -> Self {
        self.control_timeout = timeout;
        self
    }

    /// Rank 0 does not start the config store: one runs already (a
    /// standalone store, or another world's).
    ///
    /// ```
    /// use ascend::fabric::BmConfig;
    /// assert!(!BmConfig::default().without_store_server().starts_store_server());
    /// ```
    pub fn without_store_server(mut self) -> Self {
        self.start_store_server = false;
        self
    }

    /// This process is rank `rank`, instead of the rank the store assigns
    /// in join order.
    ///
    /// ```
    /// use ascend::fabric::BmConfig;
    /// assert_eq!(BmConfig::default().rank(), None);
    /// assert_eq!(BmConfig::default().with_rank(3).rank(), Some(3));
    /// ```
    pub fn with_rank(mut self, rank: u32) -> Self {
        self.rank = Some(rank);
        self
    }

    /// How the connection to the config store is protected (by default a
    /// plaintext store on this host only).
    ///
    /// ```
    /// use ascend::fabric::{BmConfig, StoreSecurity, StoreTls};
    /// let tls = StoreTls::new("ca.pem", "node.pem", "node.key");
    /// let config = BmConfig::default().with_store_security(StoreSecurity::Tls(tls));
    /// assert!(matches!(config.store_security(), StoreSecurity::Tls(_)));
    /// ```
    pub fn with_store_security(mut self, security: StoreSecurity) -> Self {
        self.security = security;
        self
    }

    /// The timeout of `smem_bm_init`.
    ///
    /// ```
    /// assert_eq!(ascend::fabric::BmConfig::default().init_timeout().as_secs(), 120);
    /// ```
    pub fn init_timeout(&self) -> Duration {
        self.init_timeout
    }

    /// Whether rank 0 starts the config store.
    ///
    /// ```
    /// assert!(ascend::fabric::BmConfig::default().starts_store_server());
    /// ```
    pub fn starts_store_server(&self) -> bool {
        self.start_store_server
    }

    /// The rank asked for, or `None` when the store assigns it.
    ///
    /// ```
    /// assert_eq!(ascend::fabric::BmConfig::default().rank(), None);
    /// ```
    pub fn rank(&self) -> Option<u32> {
        self.rank
    }

    /// The protection of the store connection.
    ///
    /// ```
    /// use ascend::fabric::{BmConfig, StoreSecurity};
    /// assert_eq!(BmConfig::default().store_security(), &StoreSecurity::LoopbackOnly);
    /// ```
    pub fn store_security(&self) -> &StoreSecurity {
        &self.security
    }

    /// The three timeouts in whole seconds, checked (no call is made).
    pub(crate) fn timeout_seconds(&self) -> Result<[u32; 3], FabricError> {
        let seconds = |what: &str, timeout: Duration| -> Result<u32, FabricError> {
            match u32::try_from(timeout.as_secs()) {
                Ok(0) | Err(_) => Err(FabricError::InvalidArgument {
                    method: "BigMemory::init",
                    reason: format!(
                        "the {what} timeout is {timeout:?}; MemFabric takes whole seconds from 1 to {}",
                        u32::MAX
                    ),
                }),
                Ok(seconds) => Ok(seconds),
            }
        };
        Ok([
            seconds("init", self.init_timeout)?,
            seconds("create", self.create_timeout)?,
            seconds("control", self.control_timeout)?,
        ])
    }

    /// The library's `smem_bm_config_t`: its own defaults
    /// (`smem_bm_config_init`) with this configuration written over them.
    /// Needs the library loaded.
    pub(crate) fn to_raw(&self) -> Result<sys::smem_bm_config_t, FabricError> {
        let [init, create, control] = self.timeout_seconds()?;
        let store_tls = self.security.to_raw()?;
        // SAFETY: a plain C struct of integers, bools and char arrays, for
        // which all-zero bytes are valid; the library then writes its
        // defaults over it.
        let mut raw: sys::smem_bm_config_t = unsafe { std::mem::zeroed() };
        // SAFETY: `raw` is a live, writable config.
        check("smem_bm_config_init", unsafe { sys::smem_bm_config_init(&mut raw) })?;
        raw.initTimeout = init;
        raw.createTimeout = create;
        raw.controlOperationTimeout = control;
        raw.startConfigStoreServer = self.start_store_server;
        raw.autoRanking = self.rank.is_none();
        if let Some(rank) = self.rank {
            raw.rankId = rank;
        }
        raw.storeTlsConfig = store_tls;
        Ok(raw)
    }
}
