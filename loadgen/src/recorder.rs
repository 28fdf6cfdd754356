//! Per-thread recording: HdrHistograms plus counters plus a per-second series. Nothing is kept
//! per request; each thread's recorder is merged once at the end.
//!
//! The per-second series: each thread records the current second into one histogram, which it
//! snapshots as sparse (value, count) pairs and resets when the next second starts (one small
//! allocation per second, none per request). At the end the snapshots of all threads are merged
//! second by second into full histograms (one reused), whose percentiles and encoding go into
//! the series; merging those histograms over any window gives that window's exact percentiles.
//!
//! Which requests the recorded phase counts (`RecordedBy`):
//! - a timed closed loop (`-d`) counts every answer (or failure) that arrives in it, whenever
//!   its request started: throughput is what the server delivered in the phase, and the
//!   warm-up leaves the phase steady from its first second. Counting only requests started in
//!   it would leave its first seconds empty wherever latency is long (7,000 clients at 2,000
//!   req/s wait 3.5 s: the first 3.5 s of a 10-s level held no answer, and the level's req/s
//!   read 35% low);
//! - an open loop counts the requests whose intended send time is in it (its latency runs
//!   from that time: coordinated omission), and a closed loop of `-n` requests those started
//!   in it (exactly n of them), so a warm-up request is never counted there.

use crate::config::{Config, LoadMode};
use crate::errors::{ErrorClass, ErrorCounts};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

pub const SIGNIFICANT_DIGITS: u8 = 3;

pub fn new_histogram(highest_us: u64) -> Histogram<u64> {
    Histogram::new_with_bounds(1, highest_us.max(2), SIGNIFICANT_DIGITS)
        .expect("histogram bounds 1..highest with 3 digits are valid")
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Request attempts started.
    pub sent: u64,
    /// Responses fully received, any status.
    pub completed: u64,
    /// Completed responses that passed the status and body checks.
    pub ok: u64,
    pub bytes_read: u64,
    /// Open loop: slots whose intended time fell in the recorded phase.
    pub scheduled: u64,
    /// Open loop: requests that found no free connection at their intended time.
    pub waited: u64,
    /// Successful TCP connects.
    pub connects: u64,
    /// Most connections open at once (summed over threads).
    pub peak_open: u64,
}

impl Counts {
    fn merge(&mut self, other: &Counts) {
        self.sent += other.sent;
        self.completed += other.completed;
        self.ok += other.ok;
        self.bytes_read += other.bytes_read;
        self.scheduled += other.scheduled;
        self.waited += other.waited;
        self.connects += other.connects;
        self.peak_open += other.peak_open;
    }
}

/// One second of one thread: counts plus the latency histogram as sparse (value, count) pairs.
#[derive(Clone, Debug)]
struct SecondSample {
    index: u64,
    completed: u64,
    errors: u64,
    values: Vec<(u64, u64)>,
}

/// One point of the merged per-second time series (`t_s` counts from 1). Second `t_s` covers
/// `[t_s - 1, t_s)` seconds after the start of the recorded phase, by completion time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesPoint {
    pub t_s: u64,
    pub completed: u64,
    pub errors: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// How much of this second lies in the recorded phase: 1 s except for the last one.
    pub duration: Duration,
    /// The run ended inside this second: never plot it or use it as a full second.
    pub partial: bool,
}

struct Series {
    index: u64,
    hist: Histogram<u64>,
    completed: u64,
    errors: u64,
    done: Vec<SecondSample>,
}

impl Series {
    fn new(highest_us: u64) -> Self {
        Self {
            index: 0,
            hist: new_histogram(highest_us),
            completed: 0,
            errors: 0,
            done: Vec::new(),
        }
    }

    /// Moves to second `index`, closing the current one. Allocates once per second, not per request.
    fn at(&mut self, index: u64) {
        if index > self.index {
            self.flush();
            self.index = index;
        }
    }

    fn flush(&mut self) {
        if self.completed == 0 && self.errors == 0 {
            return;
        }
        let values = self
            .hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        self.done.push(SecondSample {
            index: self.index,
            completed: self.completed,
            errors: self.errors,
            values,
        });
        self.hist.reset();
        self.completed = 0;
        self.errors = 0;
    }
}

/// What puts a request into the recorded phase (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordedBy {
    /// Its answer or failure arrived at or after `record_start` (a timed closed loop).
    Arrival,
    /// It started (closed loop of n requests) or was due (open loop) at or after it.
    Start,
}

impl RecordedBy {
    /// A timed closed loop counts by arrival; an open loop and a closed loop of n requests by
    /// start (the module's doc).
    pub fn of(config: &Config) -> RecordedBy {
        match (config.mode, config.requests) {
            (LoadMode::Closed, None) => RecordedBy::Arrival,
            _ => RecordedBy::Start,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RecordedBy::Arrival => "arrival",
            RecordedBy::Start => "start",
        }
    }
}

pub struct Recorder {
    record_start: Instant,
    recorded_by: RecordedBy,
    pub latency: Histogram<u64>,
    pub connect: Histogram<u64>,
    pub wait: Histogram<u64>,
    pub counts: Counts,
    pub errors: ErrorCounts,
    open_now: u64,
    series: Series,
}

impl Recorder {
    pub fn new(record_start: Instant, recorded_by: RecordedBy, highest_us: u64) -> Self {
        Self {
            record_start,
            recorded_by,
            latency: new_histogram(highest_us),
            connect: new_histogram(highest_us),
            wait: new_histogram(highest_us),
            counts: Counts::default(),
            errors: ErrorCounts::default(),
            open_now: 0,
            series: Series::new(highest_us),
        }
    }

    pub fn is_recorded(&self, start: Instant) -> bool {
        start >= self.record_start
    }

    /// Whether an answer or failure arriving at `now` for a request started (or due) at
    /// `start` belongs to the recorded phase.
    fn counts(&self, start: Instant, now: Instant) -> bool {
        match self.recorded_by {
            RecordedBy::Arrival => now >= self.record_start,
            RecordedBy::Start => start >= self.record_start,
        }
    }

    fn second_of(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.record_start).as_secs()
    }

    pub fn sent(&mut self, start: Instant) {
        if self.is_recorded(start) {
            self.counts.sent += 1;
        }
    }

    /// A full response arrived for a request started (or intended) at `start`.
    /// `failure` is `Some(Status | BodyMismatch)` when it did not pass the checks.
    pub fn completed(&mut self, start: Instant, now: Instant, failure: Option<ErrorClass>) {
        if !self.counts(start, now) {
            return;
        }
        let latency = micros(now.saturating_duration_since(start));
        self.latency.saturating_record(latency);
        self.counts.completed += 1;
        let second = self.second_of(now);
        self.series.at(second);
        self.series.completed += 1;
        self.series.hist.saturating_record(latency);
        match failure {
            None => self.counts.ok += 1,
            Some(class) => {
                self.errors.add(class, 1);
                self.series.errors += 1;
            }
        }
    }

    /// A request attempt failed without a complete response.
    pub fn failed(&mut self, start: Instant, now: Instant, class: ErrorClass) {
        if !self.counts(start, now) {
            return;
        }
        self.errors.add(class, 1);
        let second = self.second_of(now);
        self.series.at(second);
        self.series.errors += 1;
    }

    pub fn connected(&mut self, connect_start: Instant, now: Instant) {
        self.open_now += 1;
        self.counts.peak_open = self.counts.peak_open.max(self.open_now);
        if self.is_recorded(connect_start) {
            self.counts.connects += 1;
            self.connect
                .saturating_record(micros(now.saturating_duration_since(connect_start)));
        }
    }

    pub fn closed(&mut self) {
        self.open_now = self.open_now.saturating_sub(1);
    }

    pub fn scheduled(&mut self, intended: Instant) {
        if self.is_recorded(intended) {
            self.counts.scheduled += 1;
        }
    }

    /// Open loop: a request waited for a free connection from `intended` until `dispatched`.
    pub fn waited(&mut self, intended: Instant, dispatched: Instant) {
        if self.is_recorded(intended) {
            self.counts.waited += 1;
            self.wait
                .saturating_record(micros(dispatched.saturating_duration_since(intended)));
        }
    }

    pub fn bytes_read(&mut self, n: usize, now: Instant) {
        if self.is_recorded(now) {
            self.counts.bytes_read += n as u64;
        }
    }

    pub fn finish(mut self) -> Recorded {
        self.series.flush();
        Recorded {
            latency: self.latency,
            connect: self.connect,
            wait: self.wait,
            counts: self.counts,
            errors: self.errors,
            seconds: self.series.done,
        }
    }
}

/// A thread's finished recording, or the merge of all threads'.
pub struct Recorded {
    pub latency: Histogram<u64>,
    pub connect: Histogram<u64>,
    pub wait: Histogram<u64>,
    pub counts: Counts,
    pub errors: ErrorCounts,
    seconds: Vec<SecondSample>,
}

impl Recorded {
    /// Merges per-thread recordings (histograms have the same bounds, so `add` cannot fail).
    pub fn merge(parts: Vec<Recorded>, highest_us: u64) -> Recorded {
        let mut total = Recorder::new(Instant::now(), RecordedBy::Start, highest_us).finish();
        for part in parts {
            total
                .latency
                .add(&part.latency)
                .expect("same histogram bounds");
            total
                .connect
                .add(&part.connect)
                .expect("same histogram bounds");
            total.wait.add(&part.wait).expect("same histogram bounds");
            total.counts.merge(&part.counts);
            total.errors.merge(&part.errors);
            total.seconds.extend(part.seconds);
        }
        total
    }

    /// The per-second series of a recorded phase that lasted `duration`: every second it
    /// touched (quiet ones included, so a stall at the end shows), the last one marked partial.
    pub fn series(&self, highest_us: u64, duration: Duration) -> Vec<SeriesPoint> {
        self.each_second(highest_us, duration, |point, _| point)
    }

    /// Calls `each` with every second's point and its merged latency histogram, in order. One
    /// histogram is reused for all seconds: nothing of that size is kept per second.
    pub fn each_second<T>(
        &self,
        highest_us: u64,
        duration: Duration,
        mut each: impl FnMut(SeriesPoint, &Histogram<u64>) -> T,
    ) -> Vec<T> {
        let touched = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
        let last_event = self.seconds.iter().map(|s| s.index + 1).max().unwrap_or(0);
        let mut samples: Vec<&SecondSample> = self.seconds.iter().collect();
        samples.sort_by_key(|s| s.index);
        let mut samples = samples.into_iter().peekable();
        let mut hist = new_histogram(highest_us);
        (0..touched.max(last_event))
            .map(|index| {
                hist.reset();
                let (mut completed, mut errors) = (0, 0);
                while let Some(sample) = samples.next_if(|s| s.index == index) {
                    completed += sample.completed;
                    errors += sample.errors;
                    for &(value, count) in &sample.values {
                        hist.saturating_record_n(value, count);
                    }
                }
                let quantile = |q| {
                    if hist.is_empty() {
                        0
                    } else {
                        hist.value_at_quantile(q)
                    }
                };
                let covered = duration
                    .saturating_sub(Duration::from_secs(index))
                    .min(Duration::from_secs(1));
                let point = SeriesPoint {
                    t_s: index + 1,
                    completed,
                    errors,
                    p50_us: quantile(0.5),
                    p90_us: quantile(0.9),
                    p99_us: quantile(0.99),
                    max_us: hist.max(),
                    duration: covered,
                    partial: covered < Duration::from_secs(1),
                };
                each(point, &hist)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_closed_loop_counts_what_arrives_in_the_phase() {
        let t0 = Instant::now();
        let start = t0 + Duration::from_secs(1);
        let mut r = Recorder::new(start, RecordedBy::Arrival, 10_000_000);
        // answered (or failed) before the phase: not counted
        r.completed(t0, start - Duration::from_millis(1), None);
        r.failed(t0, start - Duration::from_millis(1), ErrorClass::Timeout);
        // started in the warm-up, failed or answered inside the phase: counted
        r.failed(t0, start, ErrorClass::Timeout);
        r.completed(t0, start + Duration::from_secs(1), None); // latency 2 s
        assert_eq!((r.counts.completed, r.counts.ok), (1, 1));
        assert_eq!(r.errors.get(ErrorClass::Timeout), 1);
        assert_eq!(r.latency.max(), r.latency.highest_equivalent(2_000_000));
        let series = Recorded::merge(vec![r.finish()], 10_000_000)
            .series(10_000_000, Duration::from_secs(2));
        assert_eq!((series[1].completed, series[0].errors), (1, 1));
    }

    #[test]
    fn warmup_requests_are_not_recorded() {
        let t0 = Instant::now();
        let start = t0 + Duration::from_secs(1);
        let mut r = Recorder::new(start, RecordedBy::Start, 1_000_000);
        r.completed(t0, start + Duration::from_millis(5), None);
        r.failed(t0, start, ErrorClass::Timeout);
        assert_eq!(r.counts.completed, 0);
        assert_eq!(r.errors.total(), 0);
        r.completed(
            start,
            start + Duration::from_millis(5),
            Some(ErrorClass::Status),
        );
        assert_eq!((r.counts.completed, r.counts.ok), (1, 0));
        assert_eq!(r.errors.get(ErrorClass::Status), 1);
    }

    #[test]
    fn series_merges_threads_per_second() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut a = Recorder::new(start, RecordedBy::Start, 1_000_000);
        let mut b = Recorder::new(start, RecordedBy::Start, 1_000_000);
        a.completed(start, start + ms(10), None);
        b.completed(start, start + ms(30), None);
        a.completed(start + ms(2000), start + ms(2100), None);
        b.failed(start + ms(2000), start + ms(2500), ErrorClass::Read);
        let merged = Recorded::merge(vec![a.finish(), b.finish()], 1_000_000);
        let series = merged.series(1_000_000, ms(2600));
        assert_eq!(series.len(), 3);
        assert_eq!(
            (series[0].t_s, series[0].completed, series[0].errors),
            (1, 2, 0)
        );
        assert_eq!(series[0].p99_us, merged.latency.highest_equivalent(30_000));
        assert_eq!(series[0].max_us, merged.latency.highest_equivalent(30_000));
        assert_eq!(series[0].p50_us, merged.latency.highest_equivalent(10_000));
        assert_eq!((series[1].completed, series[1].p50_us), (0, 0));
        assert_eq!((series[2].completed, series[2].errors), (1, 1));
        assert_eq!(merged.latency.len(), 3);
        let full: Vec<(bool, Duration)> = series.iter().map(|p| (p.partial, p.duration)).collect();
        assert_eq!(
            full,
            [
                (false, ms(1000)),
                (false, ms(1000)),
                (true, ms(600)) // the run ended 0.6 s into its third second
            ]
        );
    }

    #[test]
    fn series_covers_every_second_of_the_run_even_quiet_ones() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(start, RecordedBy::Start, 1_000_000);
        r.completed(start, start + ms(100), None);
        let series = r.finish().series(1_000_000, ms(4000));
        let completed: Vec<u64> = series.iter().map(|p| p.completed).collect();
        assert_eq!(completed, [1, 0, 0, 0], "a stall until the end still shows");
        assert!(
            series.iter().all(|p| !p.partial),
            "exactly 4 s: no partial second"
        );
        let empty = Recorder::new(start, RecordedBy::Start, 1_000_000).finish();
        let series = empty.series(1_000_000, ms(1500));
        assert_eq!(series.len(), 2);
        assert!(series[1].partial && series[1].duration == ms(500));
    }

    #[test]
    fn per_second_histograms_merge_into_the_total() {
        let start = Instant::now();
        let us = Duration::from_micros;
        let mut threads: Vec<Recorder> = (0..2)
            .map(|_| Recorder::new(start, RecordedBy::Start, 1_000_000))
            .collect();
        // 3 s of completions with latencies that differ by thread and second.
        for i in 0..3000u64 {
            let thread = &mut threads[(i % 2) as usize];
            let done = start + us(i * 1000 + 500);
            let latency = us(50 + (i * 37) % 5000 + (i / 1000) * 10_000);
            thread.completed(done - latency.min(us(i * 1000 + 500)), done, None);
        }
        let merged = Recorded::merge(
            threads.into_iter().map(Recorder::finish).collect(),
            1_000_000,
        );
        let mut sum = new_histogram(1_000_000);
        let counts = merged.each_second(1_000_000, us(3_000_100), |point, hist| {
            sum.add(hist).unwrap();
            assert_eq!(hist.len(), point.completed);
            assert_eq!(point.p90_us, hist.value_at_quantile(0.9));
            point.completed
        });
        assert_eq!(counts, [1000, 1000, 1000, 0]);
        assert_eq!(
            sum, merged.latency,
            "the seconds hold exactly the total's recordings"
        );
    }
}
