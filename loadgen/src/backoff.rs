//! Connect back-off: a connection whose connect failed waits before it connects again, so a
//! refused or dead port costs the loader little CPU instead of a busy loop of failed connects.
//!
//! Per connection the wait doubles from `FIRST` up to `CAP` and is forgotten after a connect
//! succeeds. Waiting connections sit in a `RetryQueue` (a min-heap on their retry time, sized
//! once for all of the thread's connections, so queueing never allocates).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// Wait after the first failed connect: short, so one transient failure costs almost nothing.
pub const FIRST: Duration = Duration::from_millis(1);
/// Longest wait: a server coming back is noticed within this much per connection.
pub const CAP: Duration = Duration::from_millis(100);

/// One connection's back-off state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backoff {
    /// The wait used after the last failure; zero while connects succeed.
    delay: Duration,
}

impl Backoff {
    /// A connect failed: the wait before the next attempt (1 ms, 2 ms, 4 ms, ... at most `CAP`).
    pub fn on_failure(&mut self) -> Duration {
        self.delay = if self.delay.is_zero() {
            FIRST
        } else {
            (self.delay * 2).min(CAP)
        };
        self.delay
    }

    /// A connect succeeded: the next failure starts again from `FIRST`.
    pub fn on_success(&mut self) {
        self.delay = Duration::ZERO;
    }
}

/// Connections waiting to connect again, earliest first.
pub struct RetryQueue {
    heap: BinaryHeap<Reverse<(Instant, usize)>>,
}

impl RetryQueue {
    /// Room for `connections` entries: each connection waits at most once at a time.
    pub fn with_capacity(connections: usize) -> RetryQueue {
        RetryQueue {
            heap: BinaryHeap::with_capacity(connections),
        }
    }

    pub fn push(&mut self, at: Instant, index: usize) {
        self.heap.push(Reverse((at, index)));
    }

    /// When the earliest waiting connection may connect again.
    pub fn next_time(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Takes one connection whose wait is over at `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<usize> {
        match self.heap.peek() {
            Some(Reverse((at, _))) if *at <= now => self.heap.pop().map(|Reverse((_, i))| i),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap_and_reset_after_success() {
        let mut b = Backoff::default();
        let waits: Vec<u64> = (0..9).map(|_| b.on_failure().as_millis() as u64).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 100, 100]);
        b.on_success();
        assert_eq!(b.on_failure(), FIRST);
    }

    #[test]
    fn queue_releases_connections_in_time_order_only_when_due() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut q = RetryQueue::with_capacity(3);
        q.push(t0 + ms(20), 7);
        q.push(t0 + ms(5), 2);
        q.push(t0 + ms(10), 4);
        assert_eq!(q.next_time(), Some(t0 + ms(5)));
        assert_eq!(q.pop_due(t0), None);
        assert_eq!(q.pop_due(t0 + ms(12)), Some(2));
        assert_eq!(q.pop_due(t0 + ms(12)), Some(4));
        assert_eq!(q.pop_due(t0 + ms(12)), None);
        assert_eq!(q.next_time(), Some(t0 + ms(20)));
        assert_eq!(q.pop_due(t0 + ms(20)), Some(7));
        assert!(q.is_empty());
        assert_eq!(q.next_time(), None);
    }
}
