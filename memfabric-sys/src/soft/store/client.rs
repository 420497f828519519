//! A rank's connection to the store: connect (retrying until the init
//! timeout, for the server may not be up yet), then one request and its
//! answer at a time, each bounded by a timeout. The connection stays open
//! while the rank is in the world; dropping it without [`StoreClient::leave`]
//! is what the store sees when a rank dies.

use super::protocol::{Answer, RankState};
use super::rank_page::RankPage;
use crate::soft::core::result::{SoftResult, fail};
use crate::types::{SMEM_ERROR, SMEM_TIMEOUT};
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// An open connection.
#[derive(Debug)]
pub(crate) struct StoreClient {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    timeout: Duration,
}

impl StoreClient {
    /// Connects to `address`, retrying until `timeout` has passed; each
    /// later request waits up to `timeout` for its answer.
    pub(crate) fn connect(address: SocketAddr, timeout: Duration) -> SoftResult<Self> {
        let deadline = Instant::now() + timeout;
        let stream = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match TcpStream::connect_timeout(&address, left.max(Duration::from_millis(10))) {
                Ok(stream) => break stream,
                Err(error) if Instant::now() >= deadline => {
                    return fail(
                        SMEM_TIMEOUT,
                        format!("no config store answered at {address} within {timeout:?}: {error}"),
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let setup = stream
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
            .and_then(|()| stream.set_nodelay(true))
            .and_then(|()| stream.try_clone());
        match setup {
            Ok(writer) => Ok(Self {
                reader: BufReader::new(stream),
                writer,
                timeout,
            }),
            Err(error) => fail(
                SMEM_ERROR,
                format!("cannot set up the connection to {address}: {error}"),
            ),
        }
    }

    /// Sends `request` and returns the answer.
    pub(crate) fn request(&mut self, request: &str) -> SoftResult<Answer> {
        if let Err(error) = self.writer.write_all(format!("{request}\n").as_bytes()) {
            return fail(SMEM_ERROR, format!("the config store connection failed: {error}"));
        }
        let mut line = Vec::new();
        match self.reader.read_until(b'\n', &mut line) {
            Ok(_) if line.ends_with(b"\n") => Ok(Answer::parse(&String::from_utf8_lossy(&line[..line.len() - 1]))),
            Ok(_) => fail(SMEM_ERROR, "the config store closed the connection"),
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => fail(
                SMEM_TIMEOUT,
                format!("the config store did not answer within {:?}", self.timeout),
            ),
            Err(error) => fail(SMEM_ERROR, format!("the config store connection failed: {error}")),
        }
    }

    /// `request`, with `ERR` and unexpected answers as errors; the text
    /// after `OK`, or `None` for `NONE`.
    pub(crate) fn call(&mut self, request: &str) -> SoftResult<Option<String>> {
        match self.request(request)? {
            Answer::Ok(rest) => Ok(Some(rest)),
            Answer::None => Ok(None),
            Answer::Err(code, message) => fail(code, format!("config store: {message}")),
        }
    }

    /// Joins a world of `world_size`, as `rank` or auto-ranked; the rank.
    pub(crate) fn hello(&mut self, world_size: u32, rank: Option<u32>) -> SoftResult<u32> {
        let wanted = rank.map_or_else(|| "auto".to_string(), |rank| rank.to_string());
        let pid = std::process::id();
        let answer = self.call(&format!("HELLO {pid} {world_size} {wanted}"))?;
        match answer.as_deref().map(str::parse::<u32>) {
            Some(Ok(rank)) => Ok(rank),
            _ => fail(SMEM_ERROR, format!("config store: unexpected HELLO answer {answer:?}")),
        }
    }

    /// The store's page of rank states, mapped (`None` when the store has
    /// none).
    pub(crate) fn rank_page(&mut self) -> SoftResult<Option<RankPage>> {
        let Some(answer) = self.call("PAGE")? else {
            return Ok(None);
        };
        match answer.split_once(' ').map(|(pid, fd)| (pid.parse(), fd.parse())) {
            Some((Ok(pid), Ok(fd))) => RankPage::open(pid, fd).map(Some),
            _ => fail(SMEM_ERROR, format!("config store: unexpected PAGE answer {answer:?}")),
        }
    }

    /// Publishes `value` under `key`.
    pub(crate) fn put(&mut self, key: &str, value: &str) -> SoftResult {
        self.call(&format!("PUT {key} {value}")).map(drop)
    }

    /// The value under `key`, if any.
    pub(crate) fn get(&mut self, key: &str) -> SoftResult<Option<String>> {
        self.call(&format!("GET {key}"))
    }

    /// What the store knows of `rank`.
    pub(crate) fn rank_state(&mut self, rank: u32) -> SoftResult<RankState> {
        let answer = self.call(&format!("RANK {rank}"))?;
        match answer.as_deref().and_then(RankState::parse) {
            Some(state) => Ok(state),
            None => fail(SMEM_ERROR, format!("config store: unexpected RANK answer {answer:?}")),
        }
    }

    /// Leaves the world and closes the connection.
    pub(crate) fn leave(mut self) -> SoftResult {
        self.call("LEAVE").map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::super::server::StoreServer;
    use super::*;

    #[test]
    fn a_client_joins_publishes_and_a_closed_connection_is_a_death() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let server = StoreServer::start(address, None).unwrap();
        assert_eq!(server.address(), address);
        let timeout = Duration::from_secs(5);
        let mut first = StoreClient::connect(address, timeout).unwrap();
        let mut second = StoreClient::connect(address, timeout).unwrap();
        assert_eq!(first.hello(2, None).unwrap(), 0);
        assert_eq!(second.hello(2, None).unwrap(), 1);
        first.put("bm/1/0", "dram 1 2 3").unwrap();
        assert_eq!(second.get("bm/1/0").unwrap().as_deref(), Some("dram 1 2 3"));
        assert_eq!(second.get("bm/1/1").unwrap(), None);
        drop(first);
        let deadline = Instant::now() + timeout;
        while second.rank_state(0).unwrap() != RankState::Dead {
            assert!(Instant::now() < deadline, "the store never saw rank 0 die");
            std::thread::sleep(Duration::from_millis(10));
        }
        second.leave().unwrap();
        assert!(StoreServer::start(address, None).is_err(), "the port is still served");
        server.stop();
        assert!(std::net::TcpListener::bind(address).is_ok(), "the port was not freed");
    }
}
