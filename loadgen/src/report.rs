//! Output: the versioned JSON document (docs/contracts.md section 6) and a wrk-like summary.

use crate::config::{KeepAlive, LoadMode};
use crate::errors::ErrorClass;
use crate::recorder::{RecordedBy, SeriesPoint, SIGNIFICANT_DIGITS};
use crate::runner::RunResult;
use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

pub const SCHEMA: &str = "stackbench-load/5";
pub const HISTOGRAM_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
    /// The I/O engine that ran: "uring" or "epoll".
    engine: &'static str,
}

#[derive(Serialize)]
struct ExpectJson {
    status: Option<u16>,
    body_length: Option<u64>,
    body_sha256: Option<String>,
    check_every: u64,
}

#[derive(Serialize)]
struct ConfigJson {
    url: String,
    method: String,
    mode: &'static str,
    connections: usize,
    threads: usize,
    duration_s: Option<f64>,
    requests: Option<u64>,
    rate: Option<f64>,
    keepalive: &'static str,
    pipeline: usize,
    timeout_ms: u64,
    warmup_s: f64,
    /// stackbench-load/5: which requests the recorded phase counts, "arrival" (a timed closed
    /// loop: every answer that arrives in it) or "start" (started or due in it)
    recorded_by: &'static str,
    headers: Vec<String>,
    expect: ExpectJson,
}

#[derive(Serialize)]
struct Requests {
    sent: u64,
    completed: u64,
    ok: u64,
    errors: u64,
    unanswered_at_end: u64,
    oldest_unanswered_us: u64,
}

#[derive(Serialize)]
struct Throughput {
    requests_per_s: f64,
    ok_per_s: f64,
    bytes_read: u64,
    bytes_per_s: f64,
}

/// Summary of one histogram, in microseconds.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub stdev: f64,
    pub max: u64,
    pub p50: u64,
    pub p75: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
}

impl Stats {
    pub fn of(h: &Histogram<u64>) -> Stats {
        if h.is_empty() {
            return Stats {
                count: 0,
                min: 0,
                mean: 0.0,
                stdev: 0.0,
                max: 0,
                p50: 0,
                p75: 0,
                p90: 0,
                p99: 0,
                p99_9: 0,
                p99_99: 0,
            };
        }
        let q = |quantile| h.value_at_quantile(quantile);
        Stats {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            stdev: h.stdev(),
            max: h.max(),
            p50: q(0.5),
            p75: q(0.75),
            p90: q(0.9),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
        }
    }
}

#[derive(Serialize)]
struct WaitJson {
    p50: u64,
    p99: u64,
    max: u64,
}

#[derive(Serialize)]
struct OpenLoopJson {
    target_rate: f64,
    achieved_rate: f64,
    sustained: bool,
    waited: u64,
    wait_us: WaitJson,
    scheduled: u64,
    unsent: u64,
}

#[derive(Serialize)]
struct HistogramJson {
    encoding: &'static str,
    unit: &'static str,
    lowest: u64,
    highest: u64,
    significant_digits: u8,
    data: String,
}

/// One second of the series. `histogram` is that second's latency histogram in the encoding
/// and bounds of the document's `histogram`; schema 2 added it, p90/max, `duration_s` and
/// `partial`.
#[derive(Serialize)]
struct SeriesJson {
    t_s: u64,
    completed: u64,
    errors: u64,
    p50_us: u64,
    p90_us: u64,
    p99_us: u64,
    max_us: u64,
    duration_s: f64,
    partial: bool,
    histogram: String,
}

#[derive(Serialize)]
struct CpuJson {
    user_s: f64,
    sys_s: f64,
}

#[derive(Serialize)]
struct LimitsJson {
    nofile_soft: u64,
    nofile_hard: u64,
    nofile_hard_before: u64,
    connections_opened: u64,
    source_addresses: usize,
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct Document {
    schema: &'static str,
    tool: Tool,
    config: ConfigJson,
    duration_s: f64,
    requests: Requests,
    errors: Map<String, Value>,
    throughput: Throughput,
    latency_us: Stats,
    connect_us: Stats,
    open_loop: Option<OpenLoopJson>,
    histogram: HistogramJson,
    timeseries: Vec<SeriesJson>,
    loader_cpu: CpuJson,
    limits: LimitsJson,
}

/// HdrHistogram V2 deflate encoding, base64: what `HdrHistogram.decode` in other languages reads.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn config_json(r: &RunResult) -> ConfigJson {
    let c = &r.config;
    let expect = &c.expect;
    let body_sha256 = expect
        .sha256
        .map(|d| hex(&d))
        .or_else(|| expect.body.as_ref().map(|b| hex(&Sha256::digest(b))));
    ConfigJson {
        url: c.target.url.clone(),
        method: c.method.clone(),
        mode: match c.mode {
            LoadMode::Closed => "closed",
            LoadMode::Open { .. } => "open",
        },
        connections: c.connections,
        threads: c.threads,
        duration_s: c.duration.map(|d| d.as_secs_f64()),
        requests: c.requests,
        rate: match c.mode {
            LoadMode::Open { rate } => Some(rate),
            LoadMode::Closed => None,
        },
        keepalive: match c.keepalive {
            KeepAlive::On => "on",
            KeepAlive::Off => "off",
        },
        pipeline: c.pipeline,
        timeout_ms: c.timeout.as_millis() as u64,
        warmup_s: c.warmup.as_secs_f64(),
        recorded_by: RecordedBy::of(c).name(),
        headers: c.headers.clone(),
        expect: ExpectJson {
            status: expect.status,
            body_length: expect
                .length
                .or(expect.body.as_ref().map(|b| b.len() as u64)),
            body_sha256,
            check_every: expect.check_every,
        },
    }
}

fn open_loop_json(r: &RunResult) -> Option<OpenLoopJson> {
    let o = r.open_loop.as_ref()?;
    let wait = &r.recorded.wait;
    let q = |quantile| {
        if wait.is_empty() {
            0
        } else {
            wait.value_at_quantile(quantile)
        }
    };
    Some(OpenLoopJson {
        target_rate: o.target_rate,
        achieved_rate: o.achieved_rate,
        sustained: o.sustained,
        waited: r.recorded.counts.waited,
        wait_us: WaitJson {
            p50: q(0.5),
            p99: q(0.99),
            max: wait.max(),
        },
        scheduled: o.scheduled,
        unsent: o.unsent,
    })
}

fn series_json(r: &RunResult) -> Vec<SeriesJson> {
    let highest = r.config.histogram_highest_us();
    r.recorded
        .each_second(highest, r.duration, |p: SeriesPoint, hist| SeriesJson {
            t_s: p.t_s,
            completed: p.completed,
            errors: p.errors,
            p50_us: p.p50_us,
            p90_us: p.p90_us,
            p99_us: p.p99_us,
            max_us: p.max_us,
            duration_s: p.duration.as_secs_f64(),
            partial: p.partial,
            histogram: encode_histogram(hist),
        })
}

/// The JSON document (schema `stackbench-load/5`).
pub fn json(r: &RunResult) -> Value {
    let rec = &r.recorded;
    let secs = r.duration.as_secs_f64();
    let highest = r.config.histogram_highest_us();
    let errors = ErrorClass::ALL
        .iter()
        .map(|c| (c.key().to_string(), Value::from(rec.errors.get(*c))))
        .collect();
    let doc = Document {
        schema: SCHEMA,
        tool: Tool {
            name: "stackbench-load",
            version: env!("CARGO_PKG_VERSION"),
            engine: r.engine.key(),
        },
        config: config_json(r),
        duration_s: secs,
        requests: Requests {
            sent: rec.counts.sent,
            completed: rec.counts.completed,
            ok: rec.counts.ok,
            errors: rec.errors.total(),
            unanswered_at_end: r.unanswered.count,
            oldest_unanswered_us: r.unanswered.oldest.as_micros() as u64,
        },
        errors,
        throughput: Throughput {
            requests_per_s: rec.counts.completed as f64 / secs,
            ok_per_s: rec.counts.ok as f64 / secs,
            bytes_read: rec.counts.bytes_read,
            bytes_per_s: rec.counts.bytes_read as f64 / secs,
        },
        latency_us: Stats::of(&rec.latency),
        connect_us: Stats::of(&rec.connect),
        open_loop: open_loop_json(r),
        histogram: HistogramJson {
            encoding: HISTOGRAM_ENCODING,
            unit: "us",
            lowest: 1,
            highest,
            significant_digits: SIGNIFICANT_DIGITS,
            data: encode_histogram(&rec.latency),
        },
        timeseries: series_json(r),
        loader_cpu: CpuJson {
            user_s: r.cpu.user.as_secs_f64(),
            sys_s: r.cpu.sys.as_secs_f64(),
        },
        limits: LimitsJson {
            nofile_soft: r.nofile.soft,
            nofile_hard: r.nofile.hard,
            nofile_hard_before: r.nofile.hard_before,
            connections_opened: rec.counts.peak_open,
            source_addresses: r.source_addresses,
            warnings: r.warnings.clone(),
        },
    };
    serde_json::to_value(doc).expect("the document serializes")
}

/// Microseconds as wrk prints them: 850us, 1.25ms, 2.10s.
pub fn human_us(us: impl Into<f64>) -> String {
    let us = us.into();
    if us < 1000.0 {
        format!("{us:.0}us")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2}{}", UNITS[unit])
}

fn describe_run(r: &RunResult) -> String {
    let c = &r.config;
    let what = match (c.duration, c.requests) {
        (Some(d), _) => format!("{:.3}s", d.as_secs_f64()),
        (None, Some(n)) => format!("{n} requests"),
        (None, None) => String::new(),
    };
    let mode = match c.mode {
        LoadMode::Closed => "closed loop".to_string(),
        LoadMode::Open { rate } => format!("open loop at {rate} req/s"),
    };
    let keepalive = match c.keepalive {
        KeepAlive::On => "keep-alive",
        KeepAlive::Off => "no keep-alive",
    };
    let mut out = format!("Running {what} test @ {}\n", c.target.url);
    let _ = writeln!(
        out,
        "  {} threads and {} connections, {mode}, {keepalive}, pipeline {}, timeout {}ms, engine {}",
        c.threads,
        c.connections,
        c.pipeline,
        c.timeout.as_millis(),
        r.engine.key()
    );
    out
}

fn describe_latency(out: &mut String, label: &str, s: &Stats) {
    let _ = writeln!(
        out,
        "  {label:<9} mean {:>9}  stdev {:>9}  max {:>9}  ({} samples)",
        human_us(s.mean),
        human_us(s.stdev),
        human_us(s.max as f64),
        s.count
    );
}

/// The wrk-like human summary.
pub fn human(r: &RunResult) -> String {
    let rec = &r.recorded;
    let secs = r.duration.as_secs_f64();
    let latency = Stats::of(&rec.latency);
    let mut out = describe_run(r);
    describe_latency(&mut out, "Latency", &latency);
    out.push_str("  Latency distribution\n");
    let rows = [
        ("50%", latency.p50),
        ("75%", latency.p75),
        ("90%", latency.p90),
        ("99%", latency.p99),
        ("99.9%", latency.p99_9),
        ("max", latency.max),
    ];
    for (label, value) in rows {
        let _ = writeln!(out, "  {label:>7}  {:>9}", human_us(value as f64));
    }
    let connect = Stats::of(&rec.connect);
    if connect.count > 0 {
        describe_latency(&mut out, "Connect", &connect);
    }
    if r.unanswered.count > 0 {
        let _ = writeln!(
            out,
            "  Unanswered at the end: {} requests, oldest waiting {}",
            r.unanswered.count,
            human_us(r.unanswered.oldest.as_micros() as f64)
        );
    }
    if let Some(o) = &r.open_loop {
        let wait = &rec.wait;
        let _ = writeln!(
            out,
            "  Open loop: target {:.1}/s, achieved {:.1}/s, {}; {} requests waited for a connection (p50 {}, p99 {}, max {})",
            o.target_rate,
            o.achieved_rate,
            if o.sustained { "sustained" } else { "NOT sustained" },
            rec.counts.waited,
            human_us(if wait.is_empty() { 0.0 } else { wait.value_at_quantile(0.5) as f64 }),
            human_us(if wait.is_empty() { 0.0 } else { wait.value_at_quantile(0.99) as f64 }),
            human_us(wait.max() as f64),
        );
    }
    let _ = writeln!(
        out,
        "  {} requests in {secs:.2}s, {} read (sent {}, ok {})",
        rec.counts.completed,
        human_bytes(rec.counts.bytes_read as f64),
        rec.counts.sent,
        rec.counts.ok
    );
    let errors: Vec<String> = ErrorClass::ALL
        .iter()
        .filter(|c| rec.errors.get(**c) > 0)
        .map(|c| format!("{} {}", c.key(), rec.errors.get(*c)))
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(out, "  Errors: {}", errors.join(", "));
    }
    let _ = writeln!(
        out,
        "Requests/sec: {:>12.2}",
        rec.counts.completed as f64 / secs
    );
    let _ = writeln!(
        out,
        "Transfer/sec: {:>12}",
        human_bytes(rec.counts.bytes_read as f64 / secs)
    );
    let _ = writeln!(
        out,
        "Loader CPU:   user {:.2}s, sys {:.2}s",
        r.cpu.user.as_secs_f64(),
        r.cpu.sys.as_secs_f64()
    );
    if r.source_addresses > 1 {
        let _ = writeln!(
            out,
            "Connections from {} source addresses (loopback ports)",
            r.source_addresses
        );
    }
    if r.nofile.hard > r.nofile.hard_before {
        let _ = writeln!(
            out,
            "RLIMIT_NOFILE hard limit raised from {} to {}",
            r.nofile.hard_before, r.nofile.hard
        );
    }
    for warning in &r.warnings {
        let _ = writeln!(out, "Warning: {warning}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::new_histogram;

    #[test]
    fn human_units() {
        assert_eq!(human_us(850), "850us");
        assert_eq!(human_us(1250), "1.25ms");
        assert_eq!(human_us(2_100_000), "2.10s");
        assert_eq!(human_bytes(2048.0), "2.00KB");
    }

    #[test]
    fn histogram_encoding_round_trips() {
        use hdrhistogram::serialization::Deserializer;
        let mut h = new_histogram(3_000_000);
        for v in [1, 10, 100, 1000, 2_500_000] {
            h.record(v).unwrap();
        }
        let text = encode_histogram(&h);
        assert!(text.starts_with("HISTFAAA"), "{text}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap();
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(back, h);
        assert_eq!(Stats::of(&back).p50, h.value_at_quantile(0.5));
    }
}
