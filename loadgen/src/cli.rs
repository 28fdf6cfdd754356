//! Command line → frozen `Config`. Every rejection names the flag at fault (exit code 2).

use crate::config::{Config, EngineChoice, Expect, KeepAlive, LoadMode, OutputFormat, Target};
use clap::Parser;
use std::fmt;
use std::net::ToSocketAddrs;
use std::time::Duration;

/// HTTP/1.1 load generator: closed loop (-c/-d/-n) or open loop (-R), free of coordinated omission.
#[derive(Parser, Debug)]
#[command(name = "stackbench-load", version, about)]
pub struct Args {
    /// Target URL, http://host[:port]/path
    pub url: String,
    /// Concurrent connections
    #[arg(short = 'c', long = "connections", default_value_t = 10)]
    pub connections: usize,
    /// Threads (default: one per core this process may use)
    #[arg(short = 't', long = "threads")]
    pub threads: Option<usize>,
    /// Recorded duration, e.g. 10s, 500ms, 2m (default 10s unless -n is given)
    #[arg(short = 'd', long = "duration")]
    pub duration: Option<String>,
    /// Total requests (closed loop)
    #[arg(short = 'n', long = "requests")]
    pub requests: Option<u64>,
    /// Open loop: requests per second, on one schedule; latency is measured from intended send times
    #[arg(short = 'R', long = "rate")]
    pub rate: Option<f64>,
    /// Close the connection after every response and reconnect for the next request
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,
    /// HTTP/1.1 pipelining depth per connection
    #[arg(long = "pipeline", default_value_t = 1)]
    pub pipeline: usize,
    /// Per request timeout (connect included); the connection is replaced
    #[arg(long = "timeout", default_value = "3s")]
    pub timeout: String,
    /// Load applied before recording starts
    #[arg(long = "warmup", default_value = "0s")]
    pub warmup: String,
    /// Extra header "Name: value" (repeatable)
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request method
    #[arg(short = 'm', long = "method", default_value = "GET")]
    pub method: String,
    /// Request body (Content-Length is added)
    #[arg(long = "body")]
    pub body: Option<String>,
    /// Exact expected status (default: any 2xx or 3xx)
    #[arg(long = "expect-status")]
    pub expect_status: Option<u16>,
    /// Exact expected response body
    #[arg(long = "expect-body")]
    pub expect_body: Option<String>,
    /// Expected body length in bytes
    #[arg(long = "expect-length")]
    pub expect_length: Option<u64>,
    /// Expected SHA-256 of the body (hex)
    #[arg(long = "expect-sha256")]
    pub expect_sha256: Option<String>,
    /// Check the body of one response in N (1 = every response)
    #[arg(long = "check-every", default_value_t = 1)]
    pub check_every: u64,
    /// I/O engine: io_uring where the kernel allows it (auto), or force epoll or uring
    #[arg(long = "engine", value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
    /// Print one JSON document (schema stackbench-load/5) instead of the human summary
    #[arg(long = "json")]
    pub json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineArg {
    Auto,
    Epoll,
    Uring,
}

impl From<EngineArg> for EngineChoice {
    fn from(arg: EngineArg) -> EngineChoice {
        match arg {
            EngineArg::Auto => EngineChoice::Auto,
            EngineArg::Epoll => EngineChoice::Epoll,
            EngineArg::Uring => EngineChoice::Uring,
        }
    }
}

/// A rejected command line: which flag, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    pub flag: &'static str,
    pub message: String,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}: {}", self.flag, self.message)
    }
}

impl std::error::Error for CliError {}

fn bad(flag: &'static str, message: impl Into<String>) -> CliError {
    CliError {
        flag,
        message: message.into(),
    }
}

/// Parses `10s`, `500ms`, `2m`, `1h`, `250us` or a plain number of seconds.
pub fn parse_duration(text: &str, flag: &'static str) -> Result<Duration, CliError> {
    let text = text.trim();
    let split = text
        .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        bad(
            flag,
            format!("'{text}' is not a duration (e.g. 10s, 500ms, 2m)"),
        )
    })?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(bad(
                flag,
                format!("unknown unit '{unit}' in '{text}' (use us, ms, s, m, h)"),
            ))
        }
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(bad(flag, format!("'{text}' is not a valid duration")));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses `http://host[:port][/path][?query]` and resolves the host once.
pub fn parse_url(url: &str) -> Result<Target, CliError> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return Err(bad(
            "URL",
            format!("'{url}': https is not supported, use http://"),
        ));
    }
    if !lower.starts_with("http://") {
        return Err(bad("URL", format!("'{url}' must start with http://")));
    }
    let rest = &url["http://".len()..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(bad(
            "URL",
            format!("'{url}' contains spaces or control characters"),
        ));
    }
    let (host, port) =
        split_host_port(authority).map_err(|m| bad("URL", format!("'{url}': {m}")))?;
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| bad("URL", format!("cannot resolve host '{host}': {e}")))?
        .next()
        .ok_or_else(|| bad("URL", format!("host '{host}' has no address")))?;
    Ok(Target {
        url: url.to_string(),
        host_header: authority.to_string(),
        addr,
        path,
    })
}

fn split_host_port(authority: &str) -> Result<(String, u16), String> {
    if authority.is_empty() {
        return Err("no host".into());
    }
    if authority.contains('@') {
        return Err("user info in URLs is not supported".into());
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let close = v6.find(']').ok_or("unclosed '[' in IPv6 host")?;
        let after = &v6[close + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err("garbage after IPv6 host".into()),
        };
        (v6[..close].to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        None => 80,
        Some(p) => p.parse::<u16>().map_err(|_| format!("bad port '{p}'"))?,
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok((host, port))
}

fn parse_sha256(hex: &str) -> Result<[u8; 32], CliError> {
    let flag = "--expect-sha256";
    if hex.len() != 64 {
        return Err(bad(flag, "needs 64 hex digits"));
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|_| bad(flag, format!("'{hex}' is not hex")))?;
    }
    Ok(out)
}

fn default_threads() -> usize {
    // Respects the CPU affinity mask, so `taskset -c 1 stackbench-load` gets one thread.
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn validate_headers(headers: &[String]) -> Result<(), CliError> {
    for header in headers {
        let valid = header
            .split_once(':')
            .is_some_and(|(name, _)| !name.trim().is_empty() && !name.contains(' '));
        if !valid || header.contains('\r') || header.contains('\n') {
            return Err(bad(
                "-H/--header",
                format!("'{header}' is not 'Name: value'"),
            ));
        }
    }
    Ok(())
}

fn load_mode(args: &Args, duration: Option<Duration>) -> Result<LoadMode, CliError> {
    let Some(rate) = args.rate else {
        return Ok(LoadMode::Closed);
    };
    if !(rate.is_finite() && rate > 0.0) {
        return Err(bad("-R/--rate", format!("{rate} is not a positive rate")));
    }
    if duration.is_none() {
        return Err(bad("-R/--rate", "an open-loop rate needs -d/--duration"));
    }
    if args.requests.is_some() {
        return Err(bad(
            "-n/--requests",
            "cannot be combined with -R/--rate (use -d)",
        ));
    }
    Ok(LoadMode::Open { rate })
}

fn expectations(args: &Args) -> Result<Expect, CliError> {
    if args.check_every == 0 {
        return Err(bad("--check-every", "must be at least 1"));
    }
    if let Some(status) = args.expect_status {
        if !(100..=999).contains(&status) {
            return Err(bad(
                "--expect-status",
                format!("{status} is not an HTTP status"),
            ));
        }
    }
    Ok(Expect {
        status: args.expect_status,
        body: args.expect_body.as_ref().map(|b| b.as_bytes().to_vec()),
        length: args.expect_length,
        sha256: args
            .expect_sha256
            .as_deref()
            .map(parse_sha256)
            .transpose()?,
        check_every: args.check_every,
    })
}

impl Args {
    /// Validates everything and freezes it into a `Config`.
    pub fn into_config(self) -> Result<Config, CliError> {
        let target = parse_url(&self.url)?;
        if self.connections == 0 {
            return Err(bad("-c/--connections", "must be at least 1"));
        }
        if self.threads == Some(0) {
            return Err(bad("-t/--threads", "must be at least 1"));
        }
        if self.requests == Some(0) {
            return Err(bad("-n/--requests", "must be at least 1"));
        }
        let duration = self
            .duration
            .as_deref()
            .map(|d| parse_duration(d, "-d/--duration"))
            .transpose()?;
        if duration == Some(Duration::ZERO) {
            return Err(bad("-d/--duration", "must be longer than zero"));
        }
        let timeout = parse_duration(&self.timeout, "--timeout")?;
        if timeout < Duration::from_millis(1) {
            return Err(bad("--timeout", "must be at least 1ms"));
        }
        let warmup = parse_duration(&self.warmup, "--warmup")?;
        if self.pipeline == 0 {
            return Err(bad("--pipeline", "must be at least 1"));
        }
        if self.pipeline > 1 && self.no_keepalive {
            return Err(bad(
                "--pipeline",
                "pipelining needs keep-alive (drop --no-keepalive)",
            ));
        }
        let method = self.method.to_ascii_uppercase();
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(bad(
                "-m/--method",
                format!("'{}' is not an HTTP method", self.method),
            ));
        }
        validate_headers(&self.headers)?;
        let mode = load_mode(&self, duration)?;
        let expect = expectations(&self)?;
        // Neither -d nor -n: run for 10 s, like wrk.
        let duration = match (duration, self.requests) {
            (None, None) => Some(Duration::from_secs(10)),
            (d, _) => d,
        };
        let threads = self
            .threads
            .unwrap_or_else(default_threads)
            .min(self.connections);
        Ok(Config {
            target,
            method,
            headers: self.headers,
            body: self.body.map(String::into_bytes),
            connections: self.connections,
            threads,
            duration,
            requests: self.requests,
            mode,
            keepalive: if self.no_keepalive {
                KeepAlive::Off
            } else {
                KeepAlive::On
            },
            pipeline: self.pipeline,
            timeout,
            warmup,
            expect,
            engine: self.engine.into(),
            output: if self.json {
                OutputFormat::Json
            } else {
                OutputFormat::Human
            },
        })
    }
}

/// Parses argv (without exiting) into a `Config`.
pub fn config_from_args<I, T>(argv: I) -> Result<Config, CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = Args::try_parse_from(argv).map_err(|e| bad("command line", e.to_string()))?;
    args.into_config()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &[&str]) -> Result<Config, CliError> {
        let mut argv = vec!["stackbench-load"];
        argv.extend_from_slice(extra);
        config_from_args(argv)
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(
            parse_duration("10s", "-d").unwrap(),
            Duration::from_secs(10)
        );
        assert_eq!(
            parse_duration("500ms", "-d").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_duration("2m", "-d").unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(
            parse_duration("1.5", "-d").unwrap(),
            Duration::from_millis(1500)
        );
        assert!(parse_duration("ten", "-d").is_err());
        assert!(parse_duration("5parsecs", "-d").is_err());
    }

    #[test]
    fn url_parts() {
        let t = parse_url("http://127.0.0.1:8080/data/10?x=1").unwrap();
        assert_eq!(t.addr.port(), 8080);
        assert_eq!(t.host_header, "127.0.0.1:8080");
        assert_eq!(t.path, "/data/10?x=1");
        let t = parse_url("http://127.0.0.1").unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (80, "/"));
        let t = parse_url("http://[::1]:81?q").unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (81, "/?q"));
    }

    #[test]
    fn bad_command_lines_name_the_flag() {
        let flag = |args: &[&str]| cfg(args).unwrap_err().flag;
        assert_eq!(flag(&["https://127.0.0.1/"]), "URL");
        assert_eq!(flag(&["not a url"]), "URL");
        assert_eq!(flag(&["http://127.0.0.1:99999/"]), "URL");
        assert_eq!(flag(&["-c", "0", "http://127.0.0.1/"]), "-c/--connections");
        assert_eq!(flag(&["-R", "100", "http://127.0.0.1/"]), "-R/--rate");
        assert_eq!(
            flag(&["-d", "1s", "-R", "0", "http://127.0.0.1/"]),
            "-R/--rate"
        );
        assert_eq!(flag(&["--timeout", "x", "http://127.0.0.1/"]), "--timeout");
        assert_eq!(flag(&["-H", "nocolon", "http://127.0.0.1/"]), "-H/--header");
        assert_eq!(
            flag(&["--pipeline", "4", "--no-keepalive", "http://127.0.0.1/"]),
            "--pipeline"
        );
        assert_eq!(
            flag(&["--expect-sha256", "abc", "http://127.0.0.1/"]),
            "--expect-sha256"
        );
    }

    #[test]
    fn defaults_and_modes() {
        let c = cfg(&["-t", "4", "-c", "2", "http://127.0.0.1:1/"]).unwrap();
        assert_eq!(c.threads, 2, "threads are capped at the connection count");
        assert_eq!(c.duration, Some(Duration::from_secs(10)));
        assert_eq!(c.mode, LoadMode::Closed);
        assert_eq!(c.keepalive, KeepAlive::On);
        let c = cfg(&[
            "-R",
            "50",
            "-d",
            "2s",
            "--no-keepalive",
            "http://127.0.0.1:1/",
        ])
        .unwrap();
        assert_eq!(c.mode, LoadMode::Open { rate: 50.0 });
        assert_eq!(c.keepalive, KeepAlive::Off);
        let c = cfg(&["-n", "5", "http://127.0.0.1:1/"]).unwrap();
        assert_eq!((c.duration, c.requests), (None, Some(5)));
    }
}
