//! Source addresses toward a loopback target. Each TCP connection needs a free local port for
//! its (source address, target) pair, and one source address offers only the ports of
//! `ip_local_port_range` (28,232 by default). A closed client socket keeps its port after the
//! close: in FIN_WAIT until the server closes its side (at most `tcp_fin_timeout`, 60 s, for
//! an orphan), then in TIME_WAIT. Against a server that never answers or closes, every timeout
//! leaves one such orphan, so 10,000 connections with a 3-s timeout hold up to 10,000 × (1 +
//! 60/3) ports, and connects fail with EADDRNOTAVAIL (`address_exhausted`) long before that.
//! Every address of 127.0.0.0/8 is local, so a loopback target can be reached from several:
//! each socket binds its source address with `IP_BIND_ADDRESS_NO_PORT`, which leaves the port
//! to `connect`, chosen per 4-tuple as without a bind. Requests still go only to the target.

use socket2::{Domain, SockAddr, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Most source addresses used (64 × 28,232 ports: 1.8 million).
pub const MAX_SOURCES: usize = 64;

/// The kernel settings that decide how many ports a run holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortLimits {
    /// Ports of `ip_local_port_range` (per source address and target).
    pub ports: u64,
    /// `tcp_fin_timeout`: how long an orphaned socket may wait in FIN_WAIT2.
    pub fin_timeout: Duration,
    /// `tcp_max_orphans`: beyond it the kernel resets orphans, which frees their ports.
    pub max_orphans: u64,
}

fn read_proc(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

impl PortLimits {
    /// This machine's settings (the kernel's defaults where one cannot be read).
    pub fn read() -> PortLimits {
        let ports = read_proc("/proc/sys/net/ipv4/ip_local_port_range")
            .and_then(|s| {
                let mut it = s.split_whitespace().map(|p| p.parse::<u64>().ok());
                let (lo, hi) = (it.next()??, it.next()??);
                (hi >= lo).then_some(hi - lo + 1)
            })
            .unwrap_or(28_232);
        let number = |path: &str, default: u64| {
            read_proc(path)
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(default)
        };
        PortLimits {
            ports,
            fin_timeout: Duration::from_secs(number("/proc/sys/net/ipv4/tcp_fin_timeout", 60)),
            max_orphans: number("/proc/sys/net/ipv4/tcp_max_orphans", 65_536),
        }
    }
}

/// Ports `connections` may hold at once toward one target in the worst case: every connection
/// open, plus the orphans of connections closed on a timeout within the last `fin_timeout`
/// whose server never closed its side (one per connection per `timeout`), as many as the
/// kernel keeps.
pub fn ports_needed(connections: usize, timeout: Duration, limits: PortLimits) -> u64 {
    let c = connections as u64;
    let per_connection = limits.fin_timeout.as_micros() / timeout.as_micros().max(1);
    let orphans = (c.saturating_mul(per_connection as u64)).min(limits.max_orphans);
    c + orphans
}

/// How many source addresses keep `ports_needed` within the port range (at least one).
pub fn sources_needed(connections: usize, timeout: Duration, limits: PortLimits) -> usize {
    let needed = ports_needed(connections, timeout, limits);
    (needed.div_ceil(limits.ports.max(1)) as usize).clamp(1, MAX_SOURCES)
}

/// The source addresses for a run: none (let the kernel choose, as without this) unless the
/// target is on IPv4 loopback and one address could run out of ports; then 127.0.0.1,
/// 127.0.0.2, ... as many as needed, each checked by a bind (an address the machine refuses
/// is left out).
pub fn choose(target: SocketAddr, connections: usize, timeout: Duration) -> Vec<IpAddr> {
    let IpAddr::V4(ip) = target.ip() else {
        return Vec::new();
    };
    if !ip.is_loopback() {
        return Vec::new();
    }
    let count = sources_needed(connections, timeout, PortLimits::read());
    if count == 1 {
        return Vec::new();
    }
    (1..=count as u32)
        .map(|n| IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::LOCALHOST) - 1 + n)))
        .filter(|source| open_socket(target, Some(*source), true).is_ok())
        .collect()
}

/// A TCP socket toward `target` (not yet connected), bound to `source` if one is given, with
/// the port left to `connect`. `nonblocking` for the epoll engine; io_uring waits itself.
pub fn open_socket(
    target: SocketAddr,
    source: Option<IpAddr>,
    nonblocking: bool,
) -> io::Result<Socket> {
    let kind = if nonblocking {
        Type::STREAM.nonblocking().cloexec()
    } else {
        Type::STREAM.cloexec()
    };
    let socket = Socket::new(Domain::for_address(target), kind, None)?;
    if let Some(source) = source {
        let on: libc::c_int = 1;
        // SAFETY: a valid socket and a pointer to one int of the size we pass.
        let set = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if set != 0 {
            return Err(io::Error::last_os_error());
        }
        let IpAddr::V4(v4) = source else {
            return Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
        };
        socket.bind(&SockAddr::from(SocketAddrV4::new(v4, 0)))?;
    }
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: PortLimits = PortLimits {
        ports: 28_232,
        fin_timeout: Duration::from_secs(60),
        max_orphans: 131_072,
    };

    #[test]
    fn one_source_while_the_ports_suffice() {
        // 1,000 connections, 3 s: 1,000 open + 1,000 × 20 orphans = 21,000 ports.
        assert_eq!(ports_needed(1_000, Duration::from_secs(3), LIMITS), 21_000);
        assert_eq!(sources_needed(1_000, Duration::from_secs(3), LIMITS), 1);
        assert_eq!(sources_needed(100, Duration::from_secs(3), LIMITS), 1);
    }

    #[test]
    fn more_sources_when_timeouts_leave_orphans() {
        // 10,000 connections, 3 s: 10,000 + min(200,000, 131,072) = 141,072 → 5 × 28,232.
        assert_eq!(
            ports_needed(10_000, Duration::from_secs(3), LIMITS),
            141_072
        );
        assert_eq!(sources_needed(10_000, Duration::from_secs(3), LIMITS), 5);
        // A timeout longer than tcp_fin_timeout leaves no orphan behind per timeout period.
        assert_eq!(sources_needed(20_000, Duration::from_secs(120), LIMITS), 1);
        assert_eq!(sources_needed(30_000, Duration::from_secs(120), LIMITS), 2);
    }

    #[test]
    fn the_count_is_bounded() {
        let tiny = PortLimits { ports: 1, ..LIMITS };
        assert_eq!(
            sources_needed(10_000, Duration::from_secs(3), tiny),
            MAX_SOURCES
        );
    }

    #[test]
    fn only_ipv4_loopback_targets_get_sources() {
        let timeout = Duration::from_secs(1);
        let remote: SocketAddr = "192.0.2.1:80".parse().unwrap();
        assert!(choose(remote, 100_000, timeout).is_empty());
        let v6: SocketAddr = "[::1]:80".parse().unwrap();
        assert!(choose(v6, 100_000, timeout).is_empty());
        let loopback: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert!(choose(loopback, 10, timeout).is_empty());
        let many = choose(loopback, 100_000, timeout);
        assert!(many.len() > 1, "{many:?}");
        assert_eq!(many[0], IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(many[1], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)));
    }

    #[test]
    fn a_bound_socket_connects_from_its_source() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap();
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
        let socket = open_socket(target, Some(source), false).unwrap();
        socket.connect(&SockAddr::from(target)).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), source);
        assert_ne!(peer.port(), 0);
    }
}
