//! The frozen, typed run configuration. Built once from the command line (see `cli`);
//! nothing after that reads argv or the environment.

use std::net::SocketAddr;
use std::time::Duration;

/// Closed loop: each connection sends its next request when the previous one is answered.
/// Open loop: requests follow a fixed schedule at `rate` per second, whatever the server does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadMode {
    Closed,
    Open { rate: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepAlive {
    /// Connections are reused for many requests.
    On,
    /// The client closes after every response and connects anew for the next request.
    Off,
}

/// The I/O engine asked for on the command line (`--engine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineChoice {
    /// io_uring where the kernel allows it, epoll otherwise.
    Auto,
    Epoll,
    Uring,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Human,
    Json,
}

/// Where requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub url: String,
    /// Value of the Host header (`host[:port]` as written in the URL).
    pub host_header: String,
    pub addr: SocketAddr,
    /// Path plus query, starting with `/`.
    pub path: String,
}

/// What every (sampled) response must look like to count as `ok`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// Exact status; `None` accepts any 2xx or 3xx (as wrk does).
    pub status: Option<u16>,
    pub body: Option<Vec<u8>>,
    pub length: Option<u64>,
    pub sha256: Option<[u8; 32]>,
    /// Body checks run on one response in `check_every` (1 = all).
    pub check_every: u64,
}

impl Expect {
    pub fn status_ok(&self, status: u16) -> bool {
        match self.status {
            Some(wanted) => status == wanted,
            None => (200..400).contains(&status),
        }
    }

    pub fn checks_body(&self) -> bool {
        self.body.is_some() || self.length.is_some() || self.sha256.is_some()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub target: Target,
    pub method: String,
    /// Extra request headers, each `Name: value`.
    pub headers: Vec<String>,
    pub body: Option<Vec<u8>>,
    pub connections: usize,
    pub threads: usize,
    /// Recorded phase length; `None` when only `requests` bounds the run.
    pub duration: Option<Duration>,
    /// Total request attempts in the recorded phase (closed loop only).
    pub requests: Option<u64>,
    pub mode: LoadMode,
    pub keepalive: KeepAlive,
    pub pipeline: usize,
    pub timeout: Duration,
    pub warmup: Duration,
    pub expect: Expect,
    pub engine: EngineChoice,
    pub output: OutputFormat,
}

impl Config {
    /// Largest latency the histograms hold. Closed loop latencies are bounded by the timeout;
    /// open loop latencies also include time queued behind a busy connection, at most the run.
    pub fn histogram_highest_us(&self) -> u64 {
        let timeout = self.timeout.as_micros() as u64;
        let queued = match self.mode {
            LoadMode::Closed => 0,
            LoadMode::Open { .. } => {
                (self.warmup + self.duration.unwrap_or_default()).as_micros() as u64
            }
        };
        (timeout + queued).max(2)
    }

    pub fn is_head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }
}
