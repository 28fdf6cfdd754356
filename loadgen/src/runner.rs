//! Runs a load test: splits connections (and the open-loop schedule) over threads, starts
//! them together, merges their recordings.

use crate::config::{Config, LoadMode};
use crate::engine::epoll::Epoll;
use crate::engine::uring::Uring;
use crate::engine::{self, Engine};
use crate::errors::ErrorClass;
use crate::recorder::Recorded;
use crate::request::RenderedRequest;
use crate::schedule::Schedule;
use crate::source;
use crate::sys::{raise_nofile_limit, CpuTime, NofileLimit};
use crate::worker::{Budget, Plan, ThreadResult, Unanswered, Worker};
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Barrier, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// File descriptors the loader needs besides its connections (std streams, epoll or io_uring, timerfd ...).
const FD_RESERVE: u64 = 32;
/// An open loop that leaves more than this share of its schedule unsent is "not sustained".
const UNSUSTAINED_SHARE: f64 = 0.01;

#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoopResult {
    pub target_rate: f64,
    pub achieved_rate: f64,
    pub sustained: bool,
    /// Requests whose intended time fell in the recorded phase.
    pub scheduled: u64,
    /// Of those, never sent for lack of a free connection.
    pub unsent: u64,
}

pub struct RunResult {
    pub config: Config,
    /// The I/O engine that ran.
    pub engine: Engine,
    /// Recorded phase, measured.
    pub duration: Duration,
    pub recorded: Recorded,
    pub open_loop: Option<OpenLoopResult>,
    pub unanswered: Unanswered,
    pub cpu: CpuTime,
    pub nofile: NofileLimit,
    /// Source addresses the connections were spread over (1: the kernel's choice).
    pub source_addresses: usize,
    pub warnings: Vec<String>,
}

/// The run could not happen at all (exit code 1).
#[derive(Debug)]
pub struct RunError(pub String);

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.0)
    }
}

impl std::error::Error for RunError {}

fn connections_of(config: &Config, thread_index: usize) -> usize {
    let (per, extra) = (
        config.connections / config.threads,
        config.connections % config.threads,
    );
    per + usize::from(thread_index < extra)
}

fn plan_for(
    config: &Config,
    thread_index: usize,
    origin: Instant,
    budget: Option<Arc<Budget>>,
    sources: Arc<[IpAddr]>,
) -> Plan {
    let record_start = origin + config.warmup;
    let end = config.duration.map(|d| record_start + d);
    let schedule = match config.mode {
        LoadMode::Closed => None,
        LoadMode::Open { rate } => {
            let span = config.warmup + config.duration.expect("open loop has a duration");
            Some(Schedule::new(
                origin,
                rate,
                config.threads,
                thread_index,
                span,
            ))
        }
    };
    Plan {
        connections: connections_of(config, thread_index),
        record_start,
        end,
        budget,
        schedule,
        sources,
    }
}

/// Descriptors the loader asks for when it may raise the hard limit: one socket per
/// connection, twice over (a replaced socket's close can still be on its way while the new
/// one opens), plus the reserve.
pub fn nofile_wanted(connections: usize) -> u64 {
    2 * connections as u64 + FD_RESERVE
}

fn check_nofile(config: &Config, warnings: &mut Vec<String>) -> NofileLimit {
    let limit = raise_nofile_limit(nofile_wanted(config.connections)).unwrap_or(NofileLimit {
        soft: 0,
        hard: 0,
        hard_before: 0,
    });
    let needed = config.connections as u64 + FD_RESERVE;
    if limit.soft < needed {
        warnings.push(format!(
            "-c {} needs about {needed} file descriptors but RLIMIT_NOFILE is {} (hard {}): \
             not every connection can be opened; raise the limit (ulimit -n) or lower -c",
            config.connections, limit.soft, limit.hard
        ));
    }
    limit
}

/// One thread's worker on the chosen engine.
fn work(
    engine: Engine,
    cfg: Arc<Config>,
    request: Arc<RenderedRequest>,
    plan: Plan,
) -> std::io::Result<ThreadResult> {
    match engine {
        Engine::Epoll => Worker::<Epoll>::new(cfg, request, plan)?.run(),
        Engine::Uring => Worker::<Uring>::new(cfg, request, plan)?.run(),
    }
}

/// Runs the load test described by `config`.
pub fn run(config: &Config) -> Result<RunResult, RunError> {
    let engine = engine::resolve(config.engine).map_err(RunError)?;
    let mut warnings = Vec::new();
    let nofile = check_nofile(config, &mut warnings);
    let sources: Arc<[IpAddr]> =
        source::choose(config.target.addr, config.connections, config.timeout).into();
    let cfg = Arc::new(config.clone());
    let request = Arc::new(RenderedRequest::new(config));
    let budget = config.requests.map(|n| Arc::new(Budget::new(n)));
    let barrier = Arc::new(Barrier::new(config.threads));
    let origin = Arc::new(OnceLock::new());
    let cpu_before = CpuTime::now();
    let handles: Vec<_> = (0..config.threads)
        .map(|index| {
            let (cfg, request, budget) = (cfg.clone(), request.clone(), budget.clone());
            let sources = sources.clone();
            let (barrier, origin) = (barrier.clone(), origin.clone());
            thread::Builder::new()
                .name(format!("load-{index}"))
                .spawn(move || -> std::io::Result<ThreadResult> {
                    // Every thread starts from the same origin once all are ready.
                    barrier.wait();
                    let origin = *origin.get_or_init(Instant::now);
                    let plan = plan_for(&cfg, index, origin, budget, sources);
                    work(engine, cfg, request, plan)
                })
                .map_err(|e| RunError(format!("cannot start load thread: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let mut parts = Vec::with_capacity(handles.len());
    for handle in handles {
        let result = handle
            .join()
            .map_err(|_| RunError("a load thread panicked".into()))?
            .map_err(|e| RunError(format!("event loop failed: {e}")))?;
        parts.push(result);
    }
    let finished = Instant::now();
    let cpu = CpuTime::now().since(cpu_before);
    let origin = *origin.get().expect("threads set the origin");
    let duration = finished
        .saturating_duration_since(origin + config.warmup)
        .max(Duration::from_micros(1));
    let slots = parts
        .iter()
        .fold((0, 0), |acc, p| (acc.0 + p.slots.0, acc.1 + p.slots.1));
    let unanswered = parts
        .iter()
        .fold(Unanswered::default(), |acc, p| acc.merge(p.unanswered));
    let recorded = Recorded::merge(
        parts.into_iter().map(|p| p.recorded).collect(),
        config.histogram_highest_us(),
    );
    let open_loop = open_loop_result(config, &recorded, duration, slots, &mut warnings);
    connection_warnings(config, &recorded, &mut warnings);
    Ok(RunResult {
        config: config.clone(),
        engine,
        duration,
        recorded,
        open_loop,
        unanswered,
        cpu,
        nofile,
        source_addresses: sources.len().max(1),
        warnings,
    })
}

fn open_loop_result(
    config: &Config,
    recorded: &Recorded,
    duration: Duration,
    (scheduled, unsent): (u64, u64),
    warnings: &mut Vec<String>,
) -> Option<OpenLoopResult> {
    let LoadMode::Open { rate } = config.mode else {
        return None;
    };
    let sustained = unsent as f64 <= scheduled as f64 * UNSUSTAINED_SHARE;
    if !sustained {
        warnings.push(format!(
            "target rate {rate}/s not sustained: {unsent} of {scheduled} scheduled requests never \
             found a free connection (raise -c or lower -R)"
        ));
    }
    Some(OpenLoopResult {
        target_rate: rate,
        achieved_rate: recorded.counts.completed as f64 / duration.as_secs_f64(),
        sustained,
        scheduled,
        unsent,
    })
}

fn connection_warnings(config: &Config, recorded: &Recorded, warnings: &mut Vec<String>) {
    let exhausted = recorded.errors.get(ErrorClass::TooManyFiles)
        + recorded.errors.get(ErrorClass::AddressExhausted);
    let peak = recorded.counts.peak_open;
    if exhausted > 0 && peak < config.connections as u64 {
        warnings.push(format!(
            "only {peak} of the {} requested connections could be open at once \
             (too_many_files {}, address_exhausted {})",
            config.connections,
            recorded.errors.get(ErrorClass::TooManyFiles),
            recorded.errors.get(ErrorClass::AddressExhausted)
        ));
    }
}
