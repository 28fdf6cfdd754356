//! The epoll engine: one mio poll per thread (edge-triggered, READ+WRITE registered once per
//! socket), a timerfd for microsecond wake-ups, and one read buffer per thread: a connection
//! is read only when ready and its bytes are parsed in that buffer.

use super::{source_of, Io};
use crate::conn::{Conn, Phase, MAX_HEAD};
use crate::errors::{classify_connect, classify_read, classify_write, ErrorClass};
use crate::request::RenderedRequest;
use crate::source::open_socket;
use crate::sys::Timer;
use crate::worker::Worker;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TIMER: Token = Token(usize::MAX);
const EVENTS: usize = 1024;

fn token(index: usize, generation: u32) -> Token {
    Token(((generation as usize) << 32) | index)
}

fn untoken(token: Token) -> (usize, u32) {
    (token.0 & 0xffff_ffff, (token.0 >> 32) as u32)
}

pub struct Epoll {
    poll: Poll,
    timer: Timer,
    events: Events,
    target: SocketAddr,
    sources: Arc<[IpAddr]>,
    /// The thread's read buffer: holds at least one response head; bodies stream through it.
    buf: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Readiness {
    readable: bool,
    writable: bool,
    /// The peer closed its side (or the socket errored): read on until EOF.
    peer_closed: bool,
}

impl Io for Epoll {
    fn new(
        _connections: usize,
        target: SocketAddr,
        sources: Arc<[IpAddr]>,
        _req: Arc<RenderedRequest>,
        _one_response: bool,
    ) -> io::Result<Self> {
        let poll = Poll::new()?;
        let mut timer = Timer::new()?;
        poll.registry()
            .register(&mut timer, TIMER, Interest::READABLE)?;
        Ok(Epoll {
            poll,
            timer,
            events: Events::with_capacity(EVENTS),
            target,
            sources,
            buf: vec![0; MAX_HEAD],
        })
    }

    fn connect(&mut self, conn: &mut Conn, index: usize) -> io::Result<()> {
        let mut stream = match source_of(&self.sources, index) {
            None => TcpStream::connect(self.target)?,
            Some(source) => {
                let socket = open_socket(self.target, Some(source), true)?;
                match socket.connect(&self.target.into()) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
                    Err(e) => return Err(e),
                }
                TcpStream::from_std(socket.into())
            }
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        self.poll
            .registry()
            .register(&mut stream, token(index, conn.generation), interest)?;
        conn.stream = Some(stream);
        Ok(())
    }

    fn flush(
        &mut self,
        conn: &mut Conn,
        _index: usize,
        req: &RenderedRequest,
    ) -> Result<(), ErrorClass> {
        let Some(stream) = conn.stream.as_mut() else {
            return Ok(());
        };
        while conn.write_pending > 0 {
            let slice = req.pending_slice(conn.write_pending);
            match stream.write(slice) {
                Ok(0) => return Err(ErrorClass::Write),
                Ok(n) => {
                    conn.write_pending -= n;
                    if n < slice.len() {
                        break; // socket buffer full: wait for the writable edge
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(classify_write(&e)),
            }
        }
        Ok(())
    }

    fn close(&mut self, conn: &mut Conn, _index: usize) {
        conn.stream = None; // closing the socket also removes it from the epoll set
    }

    fn turn(w: &mut Worker<Self>, wake: Instant, busy: bool) -> io::Result<()> {
        w.io.timer.arm(wake, Instant::now())?;
        let timeout = busy.then_some(Duration::ZERO);
        // The events are taken out while the worker handles them (no allocation: capacity 0).
        let mut events = std::mem::replace(&mut w.io.events, Events::with_capacity(0));
        let polled = w.io.poll.poll(&mut events, timeout);
        let now = Instant::now();
        if polled.is_ok() {
            for event in events.iter() {
                if event.token() == TIMER {
                    w.io.timer.fired();
                    continue;
                }
                let (index, generation) = untoken(event.token());
                if !w.is_current(index, generation) {
                    continue; // event for a socket already replaced
                }
                let readiness = Readiness {
                    readable: event.is_readable() || event.is_read_closed() || event.is_error(),
                    writable: event.is_writable() || event.is_error(),
                    peer_closed: event.is_read_closed() || event.is_error(),
                };
                on_event(w, index, readiness, now);
            }
        }
        w.io.events = events;
        match polled {
            Err(e) if e.kind() != ErrorKind::Interrupted => Err(e),
            _ => Ok(()),
        }
    }
}

fn on_event(w: &mut Worker<Epoll>, index: usize, readiness: Readiness, now: Instant) {
    let mut writable = readiness.writable;
    if let Phase::Connecting { .. } = w.conns[index].phase {
        if !finish_connect(w, index, now) {
            return;
        }
        writable = true;
    }
    if w.conns[index].phase != Phase::Open {
        return;
    }
    if writable && w.conns[index].write_pending > 0 && !w.flush(index) {
        return;
    }
    if readiness.readable {
        let mut buf = std::mem::take(&mut w.io.buf);
        read(w, index, &mut buf, readiness.peer_closed, now);
        w.io.buf = buf;
    }
}

/// Returns true when the connection is now established.
fn finish_connect(w: &mut Worker<Epoll>, index: usize, now: Instant) -> bool {
    let stream = w.conns[index]
        .stream
        .as_ref()
        .expect("connecting slot has a socket");
    let status = match stream.take_error() {
        Ok(Some(e)) | Err(e) => Err(e),
        Ok(None) => stream.peer_addr().map(|_| ()),
    };
    match status {
        Ok(()) => {
            let _ = stream.set_nodelay(true);
            w.connected(index, now);
            true
        }
        Err(e) if e.kind() == ErrorKind::NotConnected => false, // still in progress
        Err(e) => {
            w.fail(index, classify_connect(&e), now);
            false
        }
    }
}

/// Reads until the socket is drained. With edge-triggered readiness a short read proves the
/// socket empty, unless the peer already closed (then no new edge would announce the EOF).
fn read(w: &mut Worker<Epoll>, index: usize, buf: &mut [u8], peer_closed: bool, now: Instant) {
    loop {
        let stream = w.conns[index]
            .stream
            .as_mut()
            .expect("open connection has a socket");
        match stream.read(buf) {
            Ok(0) => return w.on_eof(index, now),
            Ok(n) => {
                if !w.ingest(index, &buf[..n], now) {
                    return;
                }
                if n < buf.len() && !peer_closed {
                    return; // short read: drained, the next edge will come
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return w.fail(index, classify_read(&e), now),
        }
    }
}
