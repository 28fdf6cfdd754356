//! Small thread-per-connection HTTP servers for the tests, built on std::net. They count
//! accepts and requests and can misbehave in the ways a loader must survive.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub enum Behavior {
    /// `Content-Length` response with this status and body.
    Fixed { status: u16, body: &'static str },
    /// Chunked response: the body in pieces.
    Chunked(&'static [&'static str]),
    /// Reads requests, never answers.
    Silent,
    /// Sends the head and part of the body, then closes.
    CloseMidResponse,
    /// Answers with bytes that are not HTTP.
    Malformed,
    /// Like `Fixed` 200 "ok", but answers nothing during the last `stall` of every `period`.
    Stall { period: Duration, stall: Duration },
    /// Like `Fixed` 200 "ok", after a delay.
    Slow(Duration),
    /// `Fixed` 200 with this body, written in three pieces (inside the head, at the end of
    /// the head, inside the body) this far apart, so the client reads it in several pieces.
    Trickle { body: &'static str, pause: Duration },
}

#[derive(Default)]
pub struct Counters {
    pub accepts: AtomicU64,
    pub requests: AtomicU64,
    /// Most requests found already buffered when one was read (pipelining shows as > 1).
    pub max_batch: AtomicU64,
}

pub struct TestServer {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub fn start(behavior: Behavior) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
        Self::serve_on(listener, behavior)
    }

    fn serve_on(listener: TcpListener, behavior: Behavior) -> TestServer {
        let addr = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counters.clone(), stop.clone());
        let started = Instant::now();
        thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                c.accepts.fetch_add(1, Ordering::SeqCst);
                let (c, s, b) = (c.clone(), s.clone(), behavior.clone());
                thread::spawn(move || serve(stream, &b, &c, &s, started));
            }
        });
        TestServer {
            addr,
            counters,
            stop,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn accepts(&self) -> u64 {
        self.counters.accepts.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop
    }
}

/// A free loopback port with nothing listening on it.
pub fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// A loopback port that refuses connections (bound, not listening: no other socket can take
/// it meanwhile) until `listen` turns it into a server.
pub struct ReservedPort {
    fd: OwnedFd,
    pub addr: SocketAddr,
}

impl ReservedPort {
    pub fn new() -> ReservedPort {
        // SAFETY: plain socket calls on a descriptor this function owns; results are checked.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let fd = OwnedFd::from_raw_fd(fd);
            let mut sin: libc::sockaddr_in = std::mem::zeroed();
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let sa = std::ptr::addr_of_mut!(sin).cast::<libc::sockaddr>();
            assert_eq!(libc::bind(fd.as_raw_fd(), sa, len), 0, "bind");
            let mut len = len;
            assert_eq!(libc::getsockname(fd.as_raw_fd(), sa, &mut len), 0);
            let port = u16::from_be(sin.sin_port);
            ReservedPort {
                fd,
                addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            }
        }
    }

    pub fn listen(self, behavior: Behavior) -> TestServer {
        // SAFETY: a valid bound socket; listen's result is checked.
        assert_eq!(
            unsafe { libc::listen(self.fd.as_raw_fd(), 128) },
            0,
            "listen"
        );
        TestServer::serve_on(TcpListener::from(self.fd), behavior)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn content_length(head: &[u8]) -> usize {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    text.lines()
        .find_map(|l| {
            l.strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0)
}

/// Splits complete requests off the front of `buf`; returns how many.
fn take_requests(buf: &mut Vec<u8>) -> u64 {
    let mut count = 0;
    while let Some(end) = find(buf, b"\r\n\r\n") {
        let total = end + 4 + content_length(&buf[..end]);
        if buf.len() < total {
            break;
        }
        buf.drain(..total);
        count += 1;
    }
    count
}

fn serve(
    mut stream: TcpStream,
    behavior: &Behavior,
    c: &Counters,
    stop: &AtomicBool,
    started: Instant,
) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    while !stop.load(Ordering::SeqCst) {
        let n = match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let batch = take_requests(&mut buf);
        c.requests.fetch_add(batch, Ordering::SeqCst);
        c.max_batch.fetch_max(batch, Ordering::SeqCst);
        for _ in 0..batch {
            // The server deliberately ignores `Connection: close`: the client must close itself.
            if !respond(&mut stream, behavior, started) {
                return;
            }
        }
    }
}

fn fixed(status: u16, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nContent-Type: text/plain\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Writes one response; false to close the connection.
fn respond(stream: &mut TcpStream, behavior: &Behavior, started: Instant) -> bool {
    let bytes = match behavior {
        Behavior::Fixed { status, body } => fixed(*status, body),
        Behavior::Chunked(pieces) => {
            let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            for piece in pieces.iter() {
                out.extend_from_slice(format!("{:x}\r\n{piece}\r\n", piece.len()).as_bytes());
            }
            out.extend_from_slice(b"0\r\n\r\n");
            out
        }
        Behavior::Silent => return true,
        Behavior::CloseMidResponse => {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b");
            return false;
        }
        Behavior::Malformed => b"this is not http\r\n\r\n".to_vec(),
        Behavior::Stall { period, stall } => {
            let phase =
                Duration::from_nanos((started.elapsed().as_nanos() % period.as_nanos()) as u64);
            let stall_from = *period - *stall;
            if phase >= stall_from {
                thread::sleep(*period - phase);
            }
            fixed(200, "ok")
        }
        Behavior::Slow(delay) => {
            thread::sleep(*delay);
            fixed(200, "ok")
        }
        Behavior::Trickle { body, pause } => {
            let bytes = fixed(200, body);
            let head_end = find(&bytes, b"\r\n\r\n").expect("a head") + 4;
            for piece in [&bytes[..10], &bytes[10..head_end], &bytes[head_end..]] {
                if stream.write_all(piece).is_err() {
                    return false;
                }
                thread::sleep(*pause);
            }
            return true;
        }
    };
    stream.write_all(&bytes).is_ok()
}
