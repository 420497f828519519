//! The store's TCP server: a listener thread accepting on loopback and one
//! thread per connection, all polling a stop flag (every
//! [`POLL`]), so that [`StoreServer::stop`] ends them all and has closed
//! the listening socket (the port is free) when it returns.

use super::state::StoreState;
use crate::soft::core::result::{SoftResult, fail};
use crate::types::SMEM_ERROR;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the server's threads look at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// A running store.
#[derive(Debug)]
pub(crate) struct StoreServer {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StoreServer {
    /// Binds `address` and starts serving. `owner_pid`: the process whose
    /// auto-ranked join gets rank 0 (`None` for a standalone store).
    ///
    /// Fails with `SMEM_ERROR` when the port is taken (as the real library
    /// does for a busy port).
    pub(crate) fn start(address: SocketAddr, owner_pid: Option<u32>) -> SoftResult<Self> {
        let listener = match TcpListener::bind(address) {
            Ok(listener) => listener,
            Err(error) => return fail(SMEM_ERROR, format!("cannot listen on {address}: {error}")),
        };
        if let Err(error) = listener.set_nonblocking(true) {
            return fail(SMEM_ERROR, format!("cannot poll the store's socket: {error}"));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let state = Arc::new(Mutex::new(StoreState::new(owner_pid)));
        let thread = std::thread::Builder::new()
            .name("memfabric-soft-store".into())
            .spawn(move || serve(listener, flag, state));
        match thread {
            Ok(thread) => {
                log::info!("software config store listening on {address}");
                Ok(Self {
                    address,
                    stop,
                    thread: Some(thread),
                })
            }
            Err(error) => fail(SMEM_ERROR, format!("cannot start the store's thread: {error}")),
        }
    }

    /// The address served.
    #[cfg(test)]
    pub(crate) fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops every thread and closes every socket before returning.
    pub(crate) fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                log::error!("the software config store's thread panicked");
            }
            log::info!("software config store on {} stopped", self.address);
        }
    }
}

impl Drop for StoreServer {
    fn drop(&mut self) {
        self.halt();
    }
}

fn serve(listener: TcpListener, stop: Arc<AtomicBool>, state: Arc<Mutex<StoreState>>) {
    let mut connections: Vec<JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let (stop, state) = (Arc::clone(&stop), Arc::clone(&state));
                match std::thread::Builder::new()
                    .name("memfabric-soft-store-conn".into())
                    .spawn(move || connection(stream, stop, state))
                {
                    Ok(thread) => connections.push(thread),
                    Err(error) => log::error!("config store: cannot serve {peer}: {error}"),
                }
                connections.retain(|thread| !thread.is_finished());
            }
            Err(error) if error.kind() == ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(error) => {
                log::warn!("config store: accept failed: {error}");
                std::thread::sleep(POLL);
            }
        }
    }
    drop(listener);
    for thread in connections {
        let _ = thread.join();
    }
}

fn connection(stream: TcpStream, stop: Arc<AtomicBool>, state: Arc<Mutex<StoreState>>) {
    let setup = stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_read_timeout(Some(POLL)))
        .and_then(|()| stream.set_nodelay(true))
        .and_then(|()| stream.try_clone());
    let mut writer = match setup {
        Ok(writer) => writer,
        Err(error) => {
            log::warn!("config store: cannot set up a connection: {error}");
            return;
        }
    };
    let mut reader = BufReader::new(stream);
    let mut rank: Option<u32> = None;
    let mut line = Vec::new();
    let closed_cleanly = loop {
        if stop.load(Ordering::Acquire) {
            break true;
        }
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break false,
            Ok(_) if line.ends_with(b"\n") => {
                let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
                line.clear();
                let answer = {
                    let mut state = state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    state.handle(&text, &mut rank)
                };
                if writer.write_all(answer.line().as_bytes()).is_err() {
                    break false;
                }
                if text == "LEAVE" {
                    break true;
                }
            }
            Ok(_) => break false,
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break false,
        }
    };
    if let (false, Some(rank)) = (closed_cleanly, rank) {
        state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).died(rank);
    }
    let _ = writer.shutdown(std::net::Shutdown::Both);
}
