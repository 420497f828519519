//! Parsing a config store URL: `tcp://ip:port` or `tcp://[ip]:port`. The
//! software fabric's store listens on loopback only, so the address must be
//! a loopback address (`127.x.x.x`, `::1`) or `localhost`.

use super::result::{SoftResult, fail};
use crate::types::SMEM_INVALID_PARAM;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The socket address of `url`.
pub(crate) fn parse(url: &str) -> SoftResult<SocketAddr> {
    let bad = |why: &str| fail(SMEM_INVALID_PARAM, format!("store URL {url:?}: {why}"));
    let Some(rest) = url.strip_prefix("tcp://") else {
        return bad("the software fabric supports tcp://ip:port only");
    };
    let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
        let Some((host, port)) = bracketed.split_once("]:") else {
            return bad("expected tcp://[ip]:port");
        };
        (host, port)
    } else {
        let Some((host, port)) = rest.rsplit_once(':') else {
            return bad("expected tcp://ip:port");
        };
        (host, port)
    };
    let Ok(port) = port.parse::<u16>() else {
        return bad("the port is not a number in 0..=65535");
    };
    if port == 0 {
        return bad("the port is 0");
    }
    let ip = if host == "localhost" {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        match host.parse::<IpAddr>() {
            Ok(ip) => ip,
            Err(_) => return bad("the host is not an IP address"),
        }
    };
    if !ip.is_loopback() {
        return bad("the software fabric's store listens on loopback only (127.0.0.1 or ::1)");
    }
    Ok(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_bad_ones_are_invalid() {
        assert_eq!(parse("tcp://127.0.0.1:8570").unwrap().port(), 8570);
        assert!(parse("tcp://[::1]:9").unwrap().is_ipv6());
        assert_eq!(parse("tcp://localhost:5").unwrap().port(), 5);
        for bad in [
            "127.0.0.1:1",
            "tcp://127.0.0.1",
            "tcp://127.0.0.1:0",
            "tcp://10.0.0.1:5",
            "tcp://x:5",
        ] {
            assert_eq!(parse(bad).unwrap_err().code, SMEM_INVALID_PARAM, "{bad}");
        }
    }
}
