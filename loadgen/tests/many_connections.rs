//! 10,000 connections held against a server that accepts every connection and never answers,
//! without keep-alive and with the timeout firing on every request: the loader (a separate
//! process, with its own descriptor limit) must open all of them at once, and neither run out
//! of descriptors (a close queued behind a timed-out socket's receive held its descriptor for
//! seconds on io_uring) nor of ports (each closed socket keeps its port for a while; loopback
//! runs spread over several source addresses). Both engines.

use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, Socket, Type};
use std::collections::HashMap;
use std::io::{ErrorKind, Read};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

const CONNECTIONS: usize = 10_000;

/// Accepts everything at once, reads and drops every byte, never answers; closes a connection
/// when its client does. One thread only accepts (so that a burst of connects never waits in
/// a full accept queue, whose overflow the kernel drops and the client retries a second
/// later), another reads every connection on one epoll: 10,000 connections are easy.
struct SilentServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl SilentServer {
    fn start() -> SilentServer {
        // The largest accept queue the kernel allows (net.core.somaxconn).
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        socket
            .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
            .unwrap();
        socket.listen(65_535).unwrap();
        let listener = std::net::TcpListener::from(socket);
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let poll = Poll::new().unwrap();
        let registry = poll.registry().try_clone().unwrap();
        let (handover, taken) = mpsc::channel::<(usize, TcpStream)>();
        let flag = stop.clone();
        let acceptor = thread::spawn(move || {
            for (key, stream) in listener.incoming().enumerate() {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                stream.set_nonblocking(true).unwrap();
                let stream = TcpStream::from_std(stream);
                let fd = stream.as_raw_fd();
                // Handed over before it is registered, so the reader knows every socket an
                // event can name.
                if handover.send((key, stream)).is_err() {
                    return;
                }
                let _ = registry.register(&mut SourceFd(&fd), Token(key), Interest::READABLE);
            }
        });
        let flag = stop.clone();
        let reader = thread::spawn(move || read_and_drop(poll, &taken, &flag));
        SilentServer {
            addr,
            stop,
            threads: vec![acceptor, reader],
        }
    }
}

/// Reads every byte of every connection handed over, until the client closes.
fn read_and_drop(mut poll: Poll, taken: &mpsc::Receiver<(usize, TcpStream)>, stop: &AtomicBool) {
    let mut conns: HashMap<usize, TcpStream> = HashMap::new();
    let mut events = Events::with_capacity(1024);
    let mut sink = [0u8; 4096];
    while !stop.load(Ordering::SeqCst) {
        let _ = poll.poll(&mut events, Some(Duration::from_millis(50)));
        conns.extend(taken.try_iter());
        for event in &events {
            let key = event.token().0;
            let Some(stream) = conns.get_mut(&key) else {
                continue;
            };
            let closed = loop {
                match stream.read(&mut sink) {
                    Ok(0) => break true,
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                    Err(_) => break true,
                }
            };
            if closed {
                conns.remove(&key);
            }
        }
    }
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(self.addr); // wakes the acceptor
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Raises this process's soft descriptor limit to its hard limit; false when the hard limit
/// cannot hold the server's 10,000 connections (nothing to test on such a machine).
fn room_for_the_server() -> bool {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read or write only the struct we pass.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    limit.rlim_max >= CONNECTIONS as u64 + 1_000
}

fn hold_ten_thousand(engine: &str) {
    let server = SilentServer::start();
    let url = format!("http://{}/", server.addr);
    let connections = CONNECTIONS.to_string();
    let args = [
        "-c",
        &connections,
        "--no-keepalive",
        "--timeout",
        "3s",
        "-d",
        "5s",
        "--engine",
        engine,
        "--json",
        &url,
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench-load"))
        .args(args)
        .output()
        .expect("the loader runs");
    drop(server);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{engine}: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let errors = &doc["errors"];
    let limits = &doc["limits"];
    let count = |class: &str| errors[class].as_u64().unwrap_or(0);
    assert_eq!(count("too_many_files"), 0, "{engine}: {errors} {limits}");
    assert_eq!(count("address_exhausted"), 0, "{engine}: {errors} {limits}");
    assert!(
        count("timeout") > 0,
        "{engine}: the timeout never fired: {errors}"
    );
    assert_eq!(doc["requests"]["completed"], 0, "{engine}: nothing answers");
    assert_eq!(
        limits["connections_opened"].as_u64(),
        Some(CONNECTIONS as u64),
        "{engine}: {errors} {limits}"
    );
    assert!(
        limits["source_addresses"].as_u64().unwrap() > 1,
        "{engine}: 10,000 connections with a 3-s timeout can exhaust one address's ports: {limits}"
    );
}

#[test]
fn ten_thousand_connections_held_against_a_silent_server() {
    if !room_for_the_server() {
        return eprintln!("RLIMIT_NOFILE too low for a 10,000-connection server: nothing to test");
    }
    let mut engines = vec!["epoll"];
    if stackbench_load::engine::uring::probe().is_ok() {
        engines.push("uring");
    }
    for engine in engines {
        hold_ten_thousand(engine);
    }
}
