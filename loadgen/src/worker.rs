//! One thread's load loop: the per-connection state machine (idle → connecting → open →
//! reading responses → reuse, reconnect or fail), the open-loop dispatch, timeouts and
//! back-off. The I/O under it is an engine (`engine::Io`: epoll or io_uring), so both engines
//! share every decision and differ only in how bytes move.

use crate::backoff::RetryQueue;
use crate::config::{Config, KeepAlive};
use crate::conn::{Conn, Phase, MAX_HEAD};
use crate::engine::Io;
use crate::errors::{classify_connect, ErrorClass};
use crate::http::Step;
use crate::recorder::{Recorded, RecordedBy, Recorder};
use crate::request::RenderedRequest;
use crate::schedule::Schedule;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests left for `-n`, shared by all threads.
pub struct Budget(AtomicU64);

impl Budget {
    pub fn new(requests: u64) -> Budget {
        Budget(AtomicU64::new(requests))
    }

    /// Takes up to `wanted` requests; returns how many were granted.
    /// Every request of the budget was handed out.
    fn spent(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }

    fn take(&self, wanted: u64) -> u64 {
        let mut granted = 0;
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                granted = left.min(wanted);
                Some(left - granted)
            });
        granted
    }
}

/// What one thread does.
pub struct Plan {
    pub connections: usize,
    pub record_start: Instant,
    /// Closed loop: stop time (with -d). Open loop: end of the schedule.
    pub end: Option<Instant>,
    pub budget: Option<Arc<Budget>>,
    pub schedule: Option<Schedule>,
    /// Source addresses the connections spread over (`source::choose`), or none.
    pub sources: Arc<[IpAddr]>,
}

pub struct ThreadResult {
    pub recorded: Recorded,
    /// Open loop: (slots in the recorded phase, of which never dispatched).
    pub slots: (u64, u64),
    /// Requests still waiting for an answer when the run ended, and the oldest one's age.
    pub unanswered: Unanswered,
}

/// What the end of a run leaves unanswered. A closed loop drops these requests; their count
/// and age show a server that starves connections (e.g. a prefork pool smaller than the
/// connection count) which the latency of the answered requests alone would hide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unanswered {
    pub count: u64,
    pub oldest: Duration,
}

impl Unanswered {
    pub fn merge(self, other: Unanswered) -> Unanswered {
        Unanswered {
            count: self.count + other.count,
            oldest: self.oldest.max(other.oldest),
        }
    }
}

enum Loop {
    Closed {
        budget: Option<Arc<Budget>>,
        exhausted: bool,
    },
    Open {
        schedule: Schedule,
        /// Connections that may take a request (lazily pruned), most recently freed last.
        idle: Vec<usize>,
        /// A due request found no free connection: wake on completions, not on slot times.
        starved: bool,
    },
}

pub struct Worker<E: Io> {
    cfg: Arc<Config>,
    req: Arc<RenderedRequest>,
    pub(crate) io: E,
    pub(crate) conns: Vec<Conn>,
    rec: Recorder,
    mode: Loop,
    /// Connections that failed and need a refill (closed loop) or to be offered again (open loop).
    deferred: Vec<usize>,
    deferred_spare: Vec<usize>,
    /// Connections waiting out a connect back-off.
    retry: RetryQueue,
    inflight_total: usize,
    record_start: Instant,
    end: Option<Instant>,
    next_scan: Instant,
    scan_every: Duration,
    responses: u64,
}

impl<E: Io> Worker<E> {
    pub fn new(cfg: Arc<Config>, req: Arc<RenderedRequest>, plan: Plan) -> io::Result<Self> {
        let expect = Arc::new(cfg.expect.clone());
        let mut conns: Vec<Conn> = (0..plan.connections)
            .map(|_| Conn::new(cfg.pipeline, expect.clone()))
            .collect();
        conns.iter_mut().for_each(|c| c.check.begin(true));
        let (mode, deferred) = match plan.schedule {
            Some(schedule) => {
                conns.iter_mut().for_each(|c| c.listed_idle = true);
                let idle = (0..plan.connections).rev().collect();
                (
                    Loop::Open {
                        schedule,
                        idle,
                        starved: false,
                    },
                    Vec::new(),
                )
            }
            None => {
                let closed = Loop::Closed {
                    budget: plan.budget,
                    exhausted: false,
                };
                (closed, (0..plan.connections).collect())
            }
        };
        let scan_every =
            (cfg.timeout / 8).clamp(Duration::from_millis(1), Duration::from_millis(10));
        let now = Instant::now();
        Ok(Worker {
            rec: Recorder::new(
                plan.record_start,
                RecordedBy::of(&cfg),
                cfg.histogram_highest_us(),
            ),
            io: E::new(
                plan.connections,
                cfg.target.addr,
                plan.sources,
                req.clone(),
                cfg.keepalive == KeepAlive::Off,
            )?,
            conns,
            mode,
            deferred,
            deferred_spare: Vec::new(),
            retry: RetryQueue::with_capacity(plan.connections),
            inflight_total: 0,
            record_start: plan.record_start,
            end: plan.end,
            next_scan: now + scan_every,
            scan_every,
            responses: 0,
            cfg,
            req,
        })
    }

    pub fn run(mut self) -> io::Result<ThreadResult> {
        loop {
            let now = Instant::now();
            if self.finished(now) {
                break;
            }
            if now >= self.next_scan {
                self.expire(now);
                self.next_scan = now + self.scan_every;
            }
            self.service_deferred(now);
            self.service_retries(now);
            self.dispatch(now);
            let wake = self.next_wake(now);
            // Deferred connections are served on the next pass without waiting.
            let busy = !self.deferred.is_empty();
            E::turn(&mut self, wake, busy)?;
        }
        Ok(self.finish())
    }

    /// Events for a socket that was replaced since are dropped.
    pub(crate) fn is_current(&self, index: usize, generation: u32) -> bool {
        self.conns
            .get(index)
            .is_some_and(|c| c.generation == generation)
    }

    fn finish(mut self) -> ThreadResult {
        let slots = match &self.mode {
            Loop::Open { schedule, .. } => schedule.recorded_slots(self.record_start),
            Loop::Closed { .. } => (0, 0),
        };
        let now = Instant::now();
        let unanswered = self.conns.iter().fold(Unanswered::default(), |acc, conn| {
            let oldest = conn.inflight.front().map_or(Duration::ZERO, |start| {
                now.saturating_duration_since(*start)
            });
            acc.merge(Unanswered {
                count: conn.inflight.len() as u64,
                oldest,
            })
        });
        for index in 0..self.conns.len() {
            self.io.close(&mut self.conns[index], index);
        }
        ThreadResult {
            recorded: self.rec.finish(),
            slots,
            unanswered,
        }
    }

    fn finished(&self, now: Instant) -> bool {
        match &self.mode {
            Loop::Closed { exhausted, budget } => {
                // A spent budget ends the thread even while some of its connections wait out a
                // connect back-off: they would claim nothing when they woke.
                let spent = *exhausted || budget.as_ref().is_some_and(|b| b.spent());
                self.end.is_some_and(|end| now >= end)
                    || (spent && self.inflight_total == 0 && self.deferred.is_empty())
            }
            Loop::Open { .. } => {
                // After the schedule ends, wait (at most one timeout) for answers still in flight,
                // so a stall at the very end is not hidden.
                let end = self.end.expect("open loop has a schedule end");
                (now >= end && self.inflight_total == 0) || now >= end + self.cfg.timeout
            }
        }
    }

    fn next_wake(&self, now: Instant) -> Instant {
        let mut wake = self.next_scan;
        let mut consider = |t: Instant| {
            if t > now && t < wake {
                wake = t;
            }
        };
        if let Some(t) = self.retry.next_time() {
            consider(t);
        }
        if let Some(end) = self.end {
            consider(end);
            if matches!(self.mode, Loop::Open { .. }) {
                consider(end + self.cfg.timeout);
            }
        }
        if let Loop::Open {
            schedule,
            starved: false,
            ..
        } = &self.mode
        {
            if self.end.is_none_or(|end| now < end) {
                if let Some(t) = schedule.next_time() {
                    consider(t);
                }
            }
        }
        wake
    }

    /// Serves the connections deferred so far; ones that fail again wait for the next pass
    /// (a connect that fails at once must not spin here past the end of the run).
    fn service_deferred(&mut self, now: Instant) {
        std::mem::swap(&mut self.deferred, &mut self.deferred_spare);
        let mut batch = std::mem::take(&mut self.deferred_spare);
        for index in batch.drain(..) {
            self.after_free(index, now);
        }
        self.deferred_spare = batch; // keeps its capacity: no allocation per pass
    }

    /// Connections whose connect back-off is over take work again; one that fails at once is
    /// queued again with a later time, so this cannot spin.
    fn service_retries(&mut self, now: Instant) {
        while let Some(index) = self.retry.pop_due(now) {
            self.conns[index].waiting = false;
            self.after_free(index, now);
        }
    }

    /// A connection can take work again.
    fn after_free(&mut self, index: usize, now: Instant) {
        match &mut self.mode {
            Loop::Closed { .. } => self.refill(index, now),
            Loop::Open { idle, .. } => {
                let conn = &mut self.conns[index];
                if conn.has_capacity(self.cfg.pipeline) && !conn.listed_idle {
                    conn.listed_idle = true;
                    idle.push(index);
                }
            }
        }
    }

    /// Closed loop: keep the connection's pipeline full while the budget lasts.
    fn refill(&mut self, index: usize, now: Instant) {
        let wanted = (self.cfg.pipeline - self.conns[index].inflight.len()) as u64;
        if wanted == 0 || self.conns[index].waiting {
            return;
        }
        let granted = self.claim(wanted, now);
        for _ in 0..granted {
            self.assign(index, now, now);
        }
        if self.conns[index].phase == Phase::Open {
            self.flush(index);
        }
    }

    /// Takes requests from the `-n` budget (warm-up requests are free).
    fn claim(&mut self, wanted: u64, now: Instant) -> u64 {
        let Loop::Closed { budget, exhausted } = &mut self.mode else {
            return 0;
        };
        match budget {
            Some(budget) if now >= self.record_start => {
                let granted = budget.take(wanted);
                *exhausted |= granted < wanted;
                granted
            }
            _ => wanted,
        }
    }

    /// Open loop: sends every due request that finds a free connection.
    fn dispatch(&mut self, now: Instant) {
        if self.end.is_some_and(|end| now >= end) {
            return;
        }
        while let Some((index, intended)) = self.next_due(now) {
            self.assign(index, intended, now);
            if self.conns[index].phase == Phase::Open {
                self.flush(index);
            }
        }
    }

    fn next_due(&mut self, now: Instant) -> Option<(usize, Instant)> {
        let Loop::Open {
            schedule,
            idle,
            starved,
        } = &mut self.mode
        else {
            return None;
        };
        *starved = false;
        let (intended, waited) = schedule.due(now)?;
        while let Some(&index) = idle.last() {
            if self.conns[index].has_capacity(self.cfg.pipeline) {
                schedule.advance();
                if waited {
                    self.rec.waited(intended, now);
                }
                return Some((index, intended));
            }
            idle.pop();
            self.conns[index].listed_idle = false;
        }
        schedule.mark_waiting(now);
        *starved = true;
        None
    }

    /// Gives a request (started or intended at `start`) to a connection, connecting if needed.
    fn assign(&mut self, index: usize, start: Instant, now: Instant) {
        let conn = &mut self.conns[index];
        conn.inflight.push_back(start);
        conn.write_pending += self.req.len();
        if conn.inflight.len() == 1 {
            conn.deadline = Some(now + self.cfg.timeout);
        }
        self.inflight_total += 1;
        self.rec.sent(start);
        if conn.phase == Phase::Idle {
            self.connect(index, now);
        }
    }

    fn connect(&mut self, index: usize, now: Instant) {
        // Connect time starts at this very call: many connects in one loop pass take a while.
        let since = Instant::now();
        let conn = &mut self.conns[index];
        match self.io.connect(conn, index) {
            Ok(()) => conn.phase = Phase::Connecting { since },
            Err(e) => self.fail(index, classify_connect(&e), now),
        }
    }

    /// The engine saw the connect succeed: the connection is open.
    pub(crate) fn connected(&mut self, index: usize, now: Instant) {
        let conn = &mut self.conns[index];
        let Phase::Connecting { since } = conn.phase else {
            return;
        };
        conn.phase = Phase::Open;
        conn.backoff.on_success();
        // Closed loop with keep-alive: like wrk, a request's latency starts when it can be
        // written; the one-off connect is reported separately. Without keep-alive (and in
        // the open loop) the connect stays part of the latency.
        if self.cfg.keepalive == KeepAlive::On && matches!(self.mode, Loop::Closed { .. }) {
            for start in conn
                .inflight
                .iter_mut()
                .filter(|s| **s >= self.record_start)
            {
                *start = now;
            }
        }
        self.rec.connected(since, now);
    }

    /// Writes (or queues) what is owed; false if the connection failed.
    pub(crate) fn flush(&mut self, index: usize) -> bool {
        match self.io.flush(&mut self.conns[index], index, &self.req) {
            Ok(()) => true,
            Err(class) => {
                self.fail(index, class, Instant::now());
                false
            }
        }
    }

    /// Bytes arrived on an open connection: parses every response they complete and keeps an
    /// unfinished head. False if the connection was closed meanwhile.
    pub(crate) fn ingest(&mut self, index: usize, data: &[u8], now: Instant) -> bool {
        self.rec.bytes_read(data.len(), now);
        let mut carry = std::mem::take(&mut self.conns[index].carry);
        if !carry.feed(data, |bytes| self.process(index, bytes, now)) {
            return false;
        }
        if carry.len() >= MAX_HEAD {
            self.fail(index, ErrorClass::Protocol, now); // a response head larger than we keep
            return false;
        }
        self.conns[index].carry = carry;
        true
    }

    /// Parses the responses in `bytes`: how many bytes were consumed, or `None` if the
    /// connection was closed meanwhile.
    fn process(&mut self, index: usize, bytes: &[u8], now: Instant) -> Option<usize> {
        let head_request = self.cfg.is_head();
        let mut pos = 0;
        while pos < bytes.len() {
            let conn = &mut self.conns[index];
            if conn.inflight.is_empty() {
                self.fail(index, ErrorClass::Protocol, now); // bytes nobody asked for
                return None;
            }
            match conn
                .parser
                .advance(&bytes[pos..], head_request, &mut conn.check)
            {
                Err(_) => {
                    self.fail(index, ErrorClass::Protocol, now);
                    return None;
                }
                Ok(Step::NeedMore { consumed }) => return Some(pos + consumed),
                Ok(Step::Done { consumed }) => {
                    pos += consumed;
                    if !self.complete(index, now, false) {
                        return None;
                    }
                }
            }
        }
        Some(pos)
    }

    fn sampled(&mut self) -> bool {
        self.responses += 1;
        self.responses.is_multiple_of(self.cfg.expect.check_every)
    }

    /// A full response arrived; true if the connection stays open for more.
    fn complete(&mut self, index: usize, now: Instant, at_eof: bool) -> bool {
        let sampled = self.sampled();
        let conn = &mut self.conns[index];
        let start = conn
            .inflight
            .pop_front()
            .expect("a response answers an assigned request");
        self.inflight_total -= 1;
        let head = conn.parser.head();
        let body_ok = conn.check.finish();
        conn.parser.reset();
        conn.check.begin(sampled);
        conn.deadline = (!conn.inflight.is_empty()).then(|| now + self.cfg.timeout);
        let failure = if !self.cfg.expect.status_ok(head.status) {
            Some(ErrorClass::Status)
        } else if !body_ok {
            Some(ErrorClass::BodyMismatch)
        } else {
            None
        };
        self.rec.completed(start, now, failure);
        let reuse = !at_eof && !head.close && self.cfg.keepalive == KeepAlive::On;
        if !reuse {
            self.close(index);
            if !self.conns[index].inflight.is_empty() {
                // The server closed with pipelined requests unanswered: send them again.
                self.connect(index, now);
            }
        }
        self.after_free(index, now);
        reuse && self.conns[index].phase == Phase::Open
    }

    /// The peer closed its side.
    pub(crate) fn on_eof(&mut self, index: usize, now: Instant) {
        let conn = &self.conns[index];
        if !conn.inflight.is_empty() && conn.parser.ends_at_eof() {
            self.complete(index, now, true);
        } else if conn.inflight.is_empty() && !conn.response_started() {
            self.close(index); // an idle keep-alive connection closed by the server
        } else {
            self.fail(index, ErrorClass::Read, now); // closed before or during a response
        }
    }

    /// Every request on the connection failed with `class`; the socket is replaced, after a
    /// back-off when the failure was the connect itself (refused, unreachable, out of ports or
    /// file descriptors, or timed out before the connection was established).
    pub(crate) fn fail(&mut self, index: usize, class: ErrorClass, now: Instant) {
        let conn = &mut self.conns[index];
        let connect_failed = conn.phase != Phase::Open;
        let failed = conn.inflight.len();
        for start in conn.inflight.drain(..) {
            self.rec.failed(start, now, class);
        }
        self.inflight_total -= failed;
        conn.deadline = None;
        self.close(index);
        let conn = &mut self.conns[index];
        if !connect_failed {
            self.deferred.push(index);
        } else if !conn.waiting {
            conn.waiting = true;
            // From the present, not the pass's `now`: a long pass must not eat the wait.
            let delay = conn.backoff.on_failure();
            self.retry.push(Instant::now() + delay, index);
        }
    }

    fn close(&mut self, index: usize) {
        let conn = &mut self.conns[index];
        if conn.phase == Phase::Open {
            self.rec.closed();
        }
        self.io.close(conn, index);
        conn.drop_socket(self.req.len());
        let sampled = self.responses.is_multiple_of(self.cfg.expect.check_every);
        conn.check.begin(sampled);
    }

    fn expire(&mut self, now: Instant) {
        for index in 0..self.conns.len() {
            if self.conns[index].deadline.is_some_and(|d| d <= now) {
                self.fail(index, ErrorClass::Timeout, now);
            }
        }
    }
}
