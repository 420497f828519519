//! [`StoreUrl`]: the address of MemFabric's config store, checked in Rust
//! before any call.

use super::FabricError;
use std::ffi::{CStr, CString};
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

/// The kind of config store a [`StoreUrl`] names.
///
/// ```
/// use ascend::fabric::{StoreScheme, StoreUrl};
/// assert_eq!(StoreUrl::parse("tcp://127.0.0.1:8570")?.scheme(), StoreScheme::Tcp);
/// assert_eq!(StoreUrl::parse("etcd://10.0.0.5:2379#a")?.scheme(), StoreScheme::Etcd);
/// # Ok::<(), ascend::fabric::FabricError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreScheme {
    /// `tcp://`: MemFabric's own store, a TCP server that rank 0 (or a
    /// standalone process) runs.
    Tcp,
    /// `etcd://`: an etcd cluster, for a highly available store.
    Etcd,
    /// `reg://`: a store through a registered back end.
    Reg,
}

impl StoreScheme {
    /// The URL prefix without `://` (`"tcp"`, `"etcd"`, `"reg"`).
    ///
    /// ```
    /// use ascend::fabric::StoreScheme;
    /// assert_eq!(StoreScheme::Etcd.as_str(), "etcd");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            StoreScheme::Tcp => "tcp",
            StoreScheme::Etcd => "etcd",
            StoreScheme::Reg => "reg",
        }
    }
}

/// The address of MemFabric's config store: `tcp://IP:PORT` (an IPv6
/// address in brackets: `tcp://[::1]:PORT`), or `etcd://IP:PORT` and
/// `reg://IP:PORT`, which may end in `#INSTANCE` to keep clusters apart.
///
/// MemFabric takes the URL as a C string and reports a malformed one with
/// `SMEM_INVALID_PARAM` only (and no message); parsing it here first gives
/// a typed error that says what is wrong, and lets the safe layer know
/// whether the store is on this host ([`StoreUrl::is_loopback`]), which
/// decides whether TLS is required ([`StoreSecurity`](super::StoreSecurity)).
/// Host names are refused: the library takes IP addresses.
///
/// ```
/// use ascend::fabric::{StoreScheme, StoreUrl};
/// let url: StoreUrl = "tcp://127.0.0.1:8570".parse()?;
/// assert_eq!(url.scheme(), StoreScheme::Tcp);
/// assert_eq!(url.socket_addr().port(), 8570);
/// assert!(url.is_loopback());
/// let cluster = StoreUrl::parse("etcd://10.0.0.5:2379#prefill")?;
/// assert_eq!(cluster.instance(), Some("prefill"));
/// assert!(!cluster.is_loopback());
/// assert!(StoreUrl::parse("tcp://store.local:8570").is_err()); // a host name
/// # Ok::<(), ascend::fabric::FabricError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreUrl {
    scheme: StoreScheme,
    address: SocketAddr,
    instance: Option<String>,
    text: CString,
}

impl StoreUrl {
    /// Parses and checks `url`.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] naming what is wrong: an unknown
    /// scheme, a host that is not an IP address, a missing or zero port,
    /// an instance on a `tcp://` URL (only `etcd://` and `reg://` take
    /// one) or an empty one, a space or NUL byte.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// let error = StoreUrl::parse("http://127.0.0.1:80").unwrap_err();
    /// assert!(error.to_string().contains("tcp://, etcd:// or reg://"), "{error}");
    /// assert!(StoreUrl::parse("tcp://127.0.0.1:0").is_err());
    /// assert!(StoreUrl::parse("tcp://[::1]:8570")?.is_loopback());
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn parse(url: &str) -> Result<Self, FabricError> {
        let refuse = |reason: String| FabricError::InvalidArgument {
            method: "StoreUrl::parse",
            reason: format!("{url:?}: {reason}"),
        };
        if url.chars().any(|c| c.is_whitespace() || c == '\0') {
            return Err(refuse("a store URL has no spaces or NUL bytes".into()));
        }
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| refuse("not a store URL: expected tcp://, etcd:// or reg://".into()))?;
        let scheme = match scheme {
            "tcp" => StoreScheme::Tcp,
            "etcd" => StoreScheme::Etcd,
            "reg" => StoreScheme::Reg,
            other => return Err(refuse(format!("the scheme {other:?} is not tcp://, etcd:// or reg://"))),
        };
        let (authority, instance) = match rest.split_once('#') {
            Some((_, "")) => return Err(refuse("the instance after '#' is empty".into())),
            Some(_) if scheme == StoreScheme::Tcp => {
                return Err(refuse(
                    "a tcp:// store takes no #instance (only etcd:// and reg:// do)".into(),
                ));
            }
            Some((authority, instance)) => (authority, Some(instance.to_string())),
            None => (rest, None),
        };
        let address = SocketAddr::from_str(authority).map_err(|_| {
            refuse(format!(
                "{authority:?} is not IP:PORT ([IPv6]:PORT for IPv6; MemFabric takes IP addresses, not \
                 host names)"
            ))
        })?;
        if address.port() == 0 {
            return Err(refuse("port 0 names no store".into()));
        }
        // No NUL byte inside (checked above), so this cannot fail.
        let text = CString::new(url).map_err(|_| refuse("a NUL byte".into()))?;
        Ok(StoreUrl {
            scheme,
            address,
            instance,
            text,
        })
    }

    /// The URL of MemFabric's own TCP store at `address`.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// let url = StoreUrl::tcp(([127, 0, 0, 1], 8570).into());
    /// assert_eq!(url.to_string(), "tcp://127.0.0.1:8570");
    /// ```
    pub fn tcp(address: SocketAddr) -> Self {
        let text = format!("tcp://{address}");
        StoreUrl {
            scheme: StoreScheme::Tcp,
            address,
            instance: None,
            // A socket address prints without NUL bytes.
            text: CString::new(text).unwrap_or_default(),
        }
    }

    /// The kind of store.
    ///
    /// ```
    /// use ascend::fabric::{StoreScheme, StoreUrl};
    /// assert_eq!(StoreUrl::parse("reg://10.1.2.3:9000")?.scheme(), StoreScheme::Reg);
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn scheme(&self) -> StoreScheme {
        self.scheme
    }

    /// The store's IP address and port.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// let url = StoreUrl::parse("tcp://[::1]:8570")?;
    /// assert_eq!(url.socket_addr(), "[::1]:8570".parse().unwrap());
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn socket_addr(&self) -> SocketAddr {
        self.address
    }

    /// The instance after `#`, which keeps clusters sharing one etcd or
    /// registry apart.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// assert_eq!(StoreUrl::parse("etcd://10.0.0.5:2379")?.instance(), None);
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn instance(&self) -> Option<&str> {
        self.instance.as_deref()
    }

    /// Whether the store is on this host (a loopback address: 127.0.0.0/8
    /// or `::1`), so that only local processes can reach it.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// assert!(StoreUrl::parse("tcp://127.0.0.2:8570")?.is_loopback());
    /// assert!(!StoreUrl::parse("tcp://0.0.0.0:8570")?.is_loopback()); // every interface
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn is_loopback(&self) -> bool {
        self.address.ip().is_loopback()
    }

    /// The URL as the C string MemFabric takes.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// let url = StoreUrl::parse("tcp://127.0.0.1:8570")?;
    /// assert_eq!(url.as_c_str().to_bytes(), b"tcp://127.0.0.1:8570");
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn as_c_str(&self) -> &CStr {
        &self.text
    }

    /// The URL as text.
    ///
    /// ```
    /// use ascend::fabric::StoreUrl;
    /// assert_eq!(StoreUrl::parse("tcp://127.0.0.1:8570")?.as_str(), "tcp://127.0.0.1:8570");
    /// # Ok::<(), ascend::fabric::FabricError>(())
    /// ```
    pub fn as_str(&self) -> &str {
        // Built from a `&str` (or a formatted address), so it is UTF-8.
        self.text.to_str().unwrap_or_default()
    }
}

impl FromStr for StoreUrl {
    type Err = FabricError;

    fn from_str(url: &str) -> Result<Self, FabricError> {
        StoreUrl::parse(url)
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str, says: &str) {
        match StoreUrl::parse(url) {
            Err(FabricError::InvalidArgument { method, reason }) => {
                assert_eq!(method, "StoreUrl::parse");
                assert!(reason.contains(says), "{url}: {reason}");
            }
            other => panic!("{url}: expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn each_form_the_library_takes_parses() {
        let v4 = StoreUrl::parse("tcp://192.168.1.7:8570").unwrap();
        assert_eq!(
            (v4.scheme(), v4.socket_addr().port(), v4.instance()),
            (StoreScheme::Tcp, 8570, None)
        );
        assert!(!v4.is_loopback());
        let v6 = StoreUrl::parse("tcp://[::1]:1").unwrap();
        assert!(v6.is_loopback());
        let etcd = StoreUrl::parse("etcd://10.0.0.1:2379#decode-0").unwrap();
        assert_eq!((etcd.scheme(), etcd.instance()), (StoreScheme::Etcd, Some("decode-0")));
        let reg = StoreUrl::parse("reg://[fe80::1]:9000").unwrap();
        assert_eq!(reg.scheme(), StoreScheme::Reg);
        assert_eq!(reg.to_string(), "reg://[fe80::1]:9000");
        assert_eq!(StoreUrl::tcp(v4.socket_addr()), v4);
    }

    #[test]
    fn malformed_urls_say_what_is_wrong() {
        refused("127.0.0.1:8570", "expected tcp://");
        refused("udp://127.0.0.1:8570", "\"udp\"");
        refused("tcp://localhost:8570", "not host names");
        refused("tcp://127.0.0.1", "not IP:PORT");
        refused("tcp://::1:8570", "not IP:PORT");
        refused("tcp://127.0.0.1:70000", "not IP:PORT");
        refused("tcp://127.0.0.1:0", "port 0");
        refused("tcp://127.0.0.1:8570#a", "takes no #instance");
        refused("etcd://127.0.0.1:2379#", "empty");
        refused("tcp://127.0.0.1:85 70", "no spaces");
        refused("tcp://127.0.0.1:8570\0", "NUL");
    }
}
