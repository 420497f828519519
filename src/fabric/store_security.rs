//! How the connection to MemFabric's config store is protected:
//! [`StoreSecurity`] and its TLS files, [`StoreTls`].
//!
//! MemFabric's config store is plaintext by default (its security note says
//! so; measured: the handshake logs "ssl disable"), and whoever reaches it
//! can join a pool, and then read and write the memory of every member.
//! The safe layer therefore refuses a store on another host without TLS
//! unless the caller opts out by name.

use super::{FabricError, StoreUrl, sys};
use std::ffi::c_char;
use std::path::{Path, PathBuf};

/// The TLS files of the config store connection (MemFabric's
/// `smem_tls_config`): the CA certificate, this side's certificate and
/// private key, and optionally a revocation list, the file holding the
/// key's passphrase, the TLS library and the passphrase decrypter.
///
/// Each path must fit MemFabric's fixed field (255 bytes).
///
/// ```
/// use ascend::fabric::StoreTls;
/// let tls = StoreTls::new("/etc/mf/ca.pem", "/etc/mf/node.pem", "/etc/mf/node.key")
///     .with_crl("/etc/mf/revoked.crl");
/// assert_eq!(tls.ca(), std::path::Path::new("/etc/mf/ca.pem"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreTls {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    crl: Option<PathBuf>,
    key_passphrase: Option<PathBuf>,
    package: Option<PathBuf>,
    decrypter: Option<PathBuf>,
}

impl StoreTls {
    /// TLS with the CA certificate `ca`, this side's certificate `cert` and
    /// its private key `key`.
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// let tls = StoreTls::new("ca.pem", "node.pem", "node.key");
    /// assert_eq!(tls.cert(), std::path::Path::new("node.pem"));
    /// ```
    pub fn new(ca: impl Into<PathBuf>, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        StoreTls {
            ca: ca.into(),
            cert: cert.into(),
            key: key.into(),
            crl: None,
            key_passphrase: None,
            package: None,
            decrypter: None,
        }
    }

    /// Also checks peers against the certificate revocation list `crl`.
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// let _ = StoreTls::new("ca.pem", "node.pem", "node.key").with_crl("revoked.crl");
    /// ```
    pub fn with_crl(mut self, crl: impl Into<PathBuf>) -> Self {
        self.crl = Some(crl.into());
        self
    }

    /// The private key is encrypted; its passphrase is in `file`.
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// let _ = StoreTls::new("ca.pem", "node.pem", "node.key").with_key_passphrase_file("node.pass");
    /// ```
    pub fn with_key_passphrase_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.key_passphrase = Some(file.into());
        self
    }

    /// The TLS library MemFabric loads (its `packagePath`).
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// let _ = StoreTls::new("ca.pem", "node.pem", "node.key").with_package("/opt/mf/tls");
    /// ```
    pub fn with_package(mut self, path: impl Into<PathBuf>) -> Self {
        self.package = Some(path.into());
        self
    }

    /// The library that decrypts the key's passphrase (its
    /// `decrypterLibPath`).
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// let _ = StoreTls::new("ca.pem", "node.pem", "node.key").with_decrypter("/opt/mf/libdecrypt.so");
    /// ```
    pub fn with_decrypter(mut self, library: impl Into<PathBuf>) -> Self {
        self.decrypter = Some(library.into());
        self
    }

    /// The CA certificate.
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// assert_eq!(StoreTls::new("a", "b", "c").ca(), std::path::Path::new("a"));
    /// ```
    pub fn ca(&self) -> &Path {
        &self.ca
    }

    /// This side's certificate.
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// assert_eq!(StoreTls::new("a", "b", "c").cert(), std::path::Path::new("b"));
    /// ```
    pub fn cert(&self) -> &Path {
        &self.cert
    }

    /// This side's private key.
    ///
    /// ```
    /// use ascend::fabric::StoreTls;
    /// assert_eq!(StoreTls::new("a", "b", "c").key(), std::path::Path::new("c"));
    /// ```
    pub fn key(&self) -> &Path {
        &self.key
    }

    /// MemFabric's `smem_tls_config` for these files, with TLS on.
    fn to_raw(&self) -> Result<sys::smem_tls_config, FabricError> {
        let mut raw = tls_off();
        raw.tlsEnable = true;
        let optional = |path: &Option<PathBuf>| path.clone().unwrap_or_default();
        for (field, path, what) in [
            (&mut raw.caPath, self.ca.clone(), "the CA certificate"),
            (&mut raw.certPath, self.cert.clone(), "the certificate"),
            (&mut raw.keyPath, self.key.clone(), "the private key"),
            (&mut raw.crlPath, optional(&self.crl), "the revocation list"),
            (
                &mut raw.keyPassPath,
                optional(&self.key_passphrase),
                "the passphrase file",
            ),
            (&mut raw.packagePath, optional(&self.package), "the TLS library"),
            (&mut raw.decrypterLibPath, optional(&self.decrypter), "the decrypter"),
        ] {
            write_path(field, &path, what)?;
        }
        Ok(raw)
    }
}

/// A `smem_tls_config` with TLS off and every path empty.
fn tls_off() -> sys::smem_tls_config {
    // SAFETY: a plain C struct of a `bool` and `c_char` arrays, for which
    // all-zero bytes are valid (false, empty strings).
    unsafe { std::mem::zeroed() }
}

/// Copies `path` into `field` as a NUL-terminated string.
fn write_path(field: &mut [c_char; sys::SMEM_TLS_PATH_SIZE], path: &Path, what: &str) -> Result<(), FabricError> {
    let refuse = |reason: String| FabricError::InvalidArgument {
        method: "StoreSecurity::to_raw",
        reason: format!("{what} {}: {reason}", path.display()),
    };
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.contains(&0) {
        return Err(refuse("a path has no NUL bytes".into()));
    }
    if bytes.len() >= field.len() {
        return Err(refuse(format!(
            "{} bytes; MemFabric's field holds at most {}",
            bytes.len(),
            field.len() - 1
        )));
    }
    for (slot, &byte) in field.iter_mut().zip(bytes) {
        *slot = byte as c_char;
    }
    field[bytes.len()] = 0;
    Ok(())
}

/// How the connection to the config store is protected.
///
/// The default, [`StoreSecurity::LoopbackOnly`], allows a plaintext store
/// only on this host, where only local processes reach it. A store on
/// another host needs TLS ([`StoreSecurity::Tls`]), or an explicit opt-out
/// ([`StoreSecurity::plaintext_across_hosts`]) for a network the operator
/// trusts, since whoever reaches a plaintext store can join the pool.
///
/// ```
/// use ascend::fabric::{FabricError, StoreSecurity, StoreTls, StoreUrl};
/// let local = StoreUrl::parse("tcp://127.0.0.1:8570")?;
/// let remote = StoreUrl::parse("tcp://10.0.0.5:8570")?;
/// StoreSecurity::default().check(&local)?;
/// assert!(matches!(
///     StoreSecurity::default().check(&remote),
///     Err(FabricError::PlaintextStore { .. })
/// ));
/// StoreSecurity::Tls(StoreTls::new("ca.pem", "node.pem", "node.key")).check(&remote)?;
/// StoreSecurity::plaintext_across_hosts().check(&remote)?; // the operator's choice
/// # Ok::<(), FabricError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StoreSecurity {
    /// TLS with these files.
    Tls(StoreTls),
    /// Plaintext, and only for a store on this host.
    #[default]
    LoopbackOnly,
    /// Plaintext across hosts, accepted by the caller: anyone who reaches
    /// the store can join the pool and read or write its members' memory.
    PlaintextAcrossHosts,
}

impl StoreSecurity {
    /// Plaintext to a store on another host, accepting that anyone who
    /// reaches it can join (for a network the operator trusts; every
    /// peer must be a trusted process).
    ///
    /// ```
    /// use ascend::fabric::{StoreSecurity, StoreUrl};
    /// StoreSecurity::plaintext_across_hosts().check(&StoreUrl::parse("tcp://10.0.0.5:8570")?)?;
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn plaintext_across_hosts() -> Self {
        StoreSecurity::PlaintextAcrossHosts
    }

    /// Whether `url` may be used with this protection.
    ///
    /// # Errors
    ///
    /// [`FabricError::PlaintextStore`] for [`StoreSecurity::LoopbackOnly`]
    /// and a store that is not on a loopback address.
    ///
    /// ```
    /// use ascend::fabric::{StoreSecurity, StoreUrl};
    /// let error = StoreSecurity::LoopbackOnly.check(&StoreUrl::parse("tcp://0.0.0.0:8570")?).unwrap_err();
    /// assert!(error.to_string().contains("TLS is off"), "{error}");
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn check(&self, url: &StoreUrl) -> Result<(), FabricError> {
        match self {
            StoreSecurity::LoopbackOnly if !url.is_loopback() => {
                Err(FabricError::PlaintextStore { url: url.to_string() })
            }
            _ => Ok(()),
        }
    }

    /// MemFabric's `smem_tls_config` for this protection (TLS off unless
    /// [`StoreSecurity::Tls`]).
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a TLS path of 256 bytes or more,
    /// or one with a NUL byte.
    ///
    /// ```
    /// use ascend::fabric::{StoreSecurity, StoreTls};
    /// assert!(!StoreSecurity::LoopbackOnly.to_raw()?.tlsEnable);
    /// let raw = StoreSecurity::Tls(StoreTls::new("ca.pem", "node.pem", "node.key")).to_raw()?;
    /// assert!(raw.tlsEnable);
    /// let long = StoreTls::new("c".repeat(300), "node.pem", "node.key");
    /// assert!(StoreSecurity::Tls(long).to_raw().is_err());
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn to_raw(&self) -> Result<sys::smem_tls_config, FabricError> {
        match self {
            StoreSecurity::Tls(files) => files.to_raw(),
            StoreSecurity::LoopbackOnly | StoreSecurity::PlaintextAcrossHosts => Ok(tls_off()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(field: &[c_char; sys::SMEM_TLS_PATH_SIZE]) -> String {
        // SAFETY: `write_path` NUL-terminates inside the field.
        unsafe { CStr::from_ptr(field.as_ptr()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn tls_files_land_in_their_fields_nul_terminated() {
        let tls = StoreTls::new("/ca.pem", "/node.pem", "/node.key")
            .with_crl("/revoked.crl")
            .with_key_passphrase_file("/pass")
            .with_package("/pkg")
            .with_decrypter("/dec.so");
        let raw = StoreSecurity::Tls(tls).to_raw().unwrap();
        assert!(raw.tlsEnable);
        let fields = [
            (&raw.caPath, "/ca.pem"),
            (&raw.certPath, "/node.pem"),
            (&raw.keyPath, "/node.key"),
            (&raw.crlPath, "/revoked.crl"),
            (&raw.keyPassPath, "/pass"),
            (&raw.packagePath, "/pkg"),
            (&raw.decrypterLibPath, "/dec.so"),
        ];
        for (field, expected) in fields {
            assert_eq!(text(field), expected);
        }
        let without_options = StoreSecurity::Tls(StoreTls::new("a", "b", "c")).to_raw().unwrap();
        assert_eq!(text(&without_options.crlPath), "");
    }

    #[test]
    fn a_path_at_the_field_size_is_refused_one_below_fits() {
        let fits = "p".repeat(sys::SMEM_TLS_PATH_SIZE - 1);
        let raw = StoreSecurity::Tls(StoreTls::new(fits.clone(), "b", "c"))
            .to_raw()
            .unwrap();
        assert_eq!(text(&raw.caPath), fits);
        let too_long = "p".repeat(sys::SMEM_TLS_PATH_SIZE);
        match StoreSecurity::Tls(StoreTls::new(too_long, "b", "c")).to_raw() {
            Err(FabricError::InvalidArgument { reason, .. }) => assert!(reason.contains("at most 255"), "{reason}"),
            Err(other) => panic!("expected a refusal, got {other}"),
            Ok(_) => panic!("a 256-byte path was accepted"),
        }
    }

    #[test]
    fn only_a_loopback_store_goes_without_tls_by_default() {
        for (url, local) in [
            ("tcp://127.0.0.1:1", true),
            ("tcp://[::1]:1", true),
            ("tcp://0.0.0.0:1", false),
            ("tcp://192.168.0.2:1", false),
            ("etcd://10.0.0.1:2379#a", false),
        ] {
            let url = StoreUrl::parse(url).unwrap();
            assert_eq!(StoreSecurity::default().check(&url).is_ok(), local, "{url}");
            assert!(StoreSecurity::plaintext_across_hosts().check(&url).is_ok());
            assert!(
                StoreSecurity::Tls(StoreTls::new("a", "b", "c")).check(&url).is_ok(),
                "{url}"
            );
        }
    }
}
