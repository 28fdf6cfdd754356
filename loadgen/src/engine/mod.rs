//! The I/O engines under the worker: epoll (mio, readiness) and io_uring (completions).
//! The worker decides what to do; an engine only connects, sends, receives and closes.

mod bufring;
pub mod epoll;
pub mod uring;

use crate::config::EngineChoice;
use crate::conn::Conn;
use crate::errors::ErrorClass;
use crate::request::RenderedRequest;
use crate::worker::Worker;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

/// The engine a run uses, resolved once at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Epoll,
    Uring,
}

impl Engine {
    /// The name in the JSON document and the human summary.
    pub fn key(self) -> &'static str {
        match self {
            Engine::Epoll => "epoll",
            Engine::Uring => "uring",
        }
    }
}

/// Picks the engine: io_uring when the kernel allows it (probed: a kernel without it or a
/// seccomp filter refusing it falls back to epoll), or the forced one.
pub fn resolve(choice: EngineChoice) -> Result<Engine, String> {
    resolve_with(choice, uring::probe)
}

fn resolve_with(
    choice: EngineChoice,
    probe: impl FnOnce() -> io::Result<()>,
) -> Result<Engine, String> {
    match choice {
        EngineChoice::Epoll => Ok(Engine::Epoll),
        EngineChoice::Auto => Ok(probe().map_or(Engine::Epoll, |()| Engine::Uring)),
        EngineChoice::Uring => probe()
            .map(|()| Engine::Uring)
            .map_err(|e| format!("--engine uring: io_uring is not usable here ({e})")),
    }
}

/// What the worker needs from an engine. Each slot's socket lives in its `Conn`; the engine
/// reports back through the worker's `connected`, `ingest`, `on_eof`, `flush` and `fail`.
pub trait Io: Sized {
    /// `one_response`: every connection closes after one response (no keep-alive).
    /// `sources`: the source addresses slot `i` connects from (`sources[i % len]`), or none
    /// (the kernel chooses; `source::choose`).
    fn new(
        connections: usize,
        target: SocketAddr,
        sources: Arc<[IpAddr]>,
        req: Arc<RenderedRequest>,
        one_response: bool,
    ) -> io::Result<Self>;
    /// Starts connecting slot `index`; an error means the connect failed at once.
    fn connect(&mut self, conn: &mut Conn, index: usize) -> io::Result<()>;
    /// Writes (epoll) or queues (io_uring) the request bytes `conn` owes.
    fn flush(
        &mut self,
        conn: &mut Conn,
        index: usize,
        req: &RenderedRequest,
    ) -> Result<(), ErrorClass>;
    /// Closes slot `index`'s socket (if any); the worker then resets the slot.
    fn close(&mut self, conn: &mut Conn, index: usize);
    /// One loop turn: waits for events until `wake` (not at all when `busy`) and hands them
    /// to the worker.
    fn turn(worker: &mut Worker<Self>, wake: Instant, busy: bool) -> io::Result<()>;
}

/// The source address of slot `index`, if the run spreads its connections over several.
fn source_of(sources: &[IpAddr], index: usize) -> Option<IpAddr> {
    (!sources.is_empty()).then(|| sources[index % sources.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(code: i32) -> impl FnOnce() -> io::Result<()> {
        move || Err(io::Error::from_raw_os_error(code))
    }

    #[test]
    fn auto_falls_back_to_epoll_when_io_uring_is_refused() {
        let auto = EngineChoice::Auto;
        assert_eq!(resolve_with(auto, || Ok(())), Ok(Engine::Uring));
        assert_eq!(resolve_with(auto, refused(libc::ENOSYS)), Ok(Engine::Epoll));
        assert_eq!(resolve_with(auto, refused(libc::EPERM)), Ok(Engine::Epoll));
        let epoll = EngineChoice::Epoll;
        assert_eq!(resolve_with(epoll, || Ok(())), Ok(Engine::Epoll));
        let forced = resolve_with(EngineChoice::Uring, refused(libc::EPERM));
        assert!(forced.unwrap_err().contains("--engine uring"));
    }
}
