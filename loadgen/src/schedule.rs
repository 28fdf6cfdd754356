//! Open-loop schedule: one global sequence of intended send times, slot g at `origin + g / rate`.
//! Thread k of T owns slots k, k+T, k+2T, ... so the threads together follow the one schedule.

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Schedule {
    origin: Instant,
    rate: f64,
    stride: u64,
    offset: u64,
    /// Next slot of this thread not yet dispatched (local index j).
    next: u64,
    /// Number of slots of this thread within the span.
    total: u64,
    /// Local slots below this index found no free connection at some earlier pass.
    waited_upto: u64,
}

impl Schedule {
    pub fn new(
        origin: Instant,
        rate: f64,
        threads: usize,
        thread_index: usize,
        span: Duration,
    ) -> Self {
        let global = (span.as_secs_f64() * rate).ceil() as u64;
        let (stride, offset) = (threads as u64, thread_index as u64);
        let total = if global > offset {
            (global - offset).div_ceil(stride)
        } else {
            0
        };
        Self {
            origin,
            rate,
            stride,
            offset,
            next: 0,
            total,
            waited_upto: 0,
        }
    }

    pub fn time_of(&self, local: u64) -> Instant {
        let global = self.offset + local * self.stride;
        self.origin + Duration::from_secs_f64(global as f64 / self.rate)
    }

    /// The next undispatched slot's intended time, if any remain.
    pub fn next_time(&self) -> Option<Instant> {
        (self.next < self.total).then(|| self.time_of(self.next))
    }

    /// The next slot if it is due at `now`: (intended time, whether it had to wait for a connection).
    pub fn due(&self, now: Instant) -> Option<(Instant, bool)> {
        let time = self.next_time()?;
        (time <= now).then_some((time, self.next < self.waited_upto))
    }

    /// The slot returned by `due` was dispatched.
    pub fn advance(&mut self) {
        self.next += 1;
    }

    /// No connection was free for the due slots: every slot due at `now` counts as waited.
    pub fn mark_waiting(&mut self, now: Instant) {
        self.waited_upto = self.waited_upto.max(self.due_count(now));
    }

    /// How many of this thread's slots are due at `now`.
    pub fn due_count(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.origin).as_secs_f64();
        let global_due = (elapsed * self.rate).floor() as u64 + 1;
        let local = if global_due > self.offset {
            (global_due - self.offset).div_ceil(self.stride)
        } else {
            0
        };
        local.min(self.total)
    }

    pub fn is_exhausted(&self) -> bool {
        self.next >= self.total
    }

    /// Slots never dispatched.
    pub fn undispatched(&self) -> u64 {
        self.total - self.next
    }

    /// Local index of the first slot intended at or after `t`.
    pub fn first_at_or_after(&self, t: Instant) -> u64 {
        let (mut low, mut high) = (0, self.total);
        while low < high {
            let mid = low + (high - low) / 2;
            if self.time_of(mid) < t {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    /// (slots intended at or after `t`, those of them never dispatched).
    pub fn recorded_slots(&self, t: Instant) -> (u64, u64) {
        let first = self.first_at_or_after(t);
        (self.total - first, self.total - self.next.max(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_share_one_schedule() {
        let origin = Instant::now();
        let span = Duration::from_secs(1);
        let a = Schedule::new(origin, 10.0, 3, 0, span);
        let b = Schedule::new(origin, 10.0, 3, 1, span);
        let c = Schedule::new(origin, 10.0, 3, 2, span);
        assert_eq!(a.total + b.total + c.total, 10);
        assert_eq!((a.total, b.total, c.total), (4, 3, 3));
        assert_eq!(b.time_of(1), origin + Duration::from_millis(400));
    }

    #[test]
    fn due_slots_and_waiting() {
        let origin = Instant::now();
        let mut s = Schedule::new(origin, 1000.0, 1, 0, Duration::from_secs(1));
        let now = origin + Duration::from_micros(2500);
        assert_eq!(s.due_count(now), 3);
        assert_eq!(s.due(now), Some((origin, false)));
        s.mark_waiting(now);
        assert_eq!(s.due(now), Some((origin, true)));
        s.advance();
        s.advance();
        s.advance();
        assert_eq!(s.due(now), None);
        let later = origin + Duration::from_millis(4);
        assert_eq!(s.due(later).map(|d| d.1), Some(false));
        assert_eq!(s.undispatched(), 997);
        assert_eq!(
            s.recorded_slots(origin + Duration::from_micros(1500)),
            (998, 997)
        );
    }
}
