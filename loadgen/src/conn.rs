//! One client connection slot: its socket, the requests assigned to it and the parser state.
//! A slot outlives its sockets: with keep-alive off, or after an error, it connects anew.
//! It owns no read buffer: bytes are parsed where they arrived, only a split head is kept.

use crate::backoff::Backoff;
use crate::check::BodyCheck;
use crate::config::Expect;
use crate::http::{Carry, ResponseParser};
use mio::net::TcpStream;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// Largest response head (unconsumed bytes kept across reads) before a protocol error.
pub const MAX_HEAD: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No socket; the next assigned request opens one.
    Idle,
    Connecting {
        since: Instant,
    },
    Open,
}

pub struct Conn {
    pub stream: Option<TcpStream>,
    pub phase: Phase,
    /// Bumped whenever the socket changes, so events for a closed socket are ignored.
    pub generation: u32,
    /// Start time (closed loop) or intended send time (open loop) of each assigned request, oldest first.
    pub inflight: VecDeque<Instant>,
    /// Bytes of assigned requests not yet written.
    pub write_pending: usize,
    /// When the oldest request times out.
    pub deadline: Option<Instant>,
    /// Open loop: listed among connections that can take a request.
    pub listed_idle: bool,
    /// Connect back-off; while `waiting` the slot is in the retry queue and takes no requests.
    pub backoff: Backoff,
    pub waiting: bool,
    /// io_uring engine: a send of this socket is in the ring (at most one at a time).
    pub sending: bool,
    /// io_uring engine: a receive of this socket is armed.
    pub receiving: bool,
    pub carry: Carry,
    pub parser: ResponseParser,
    pub check: BodyCheck,
}

impl Conn {
    pub fn new(pipeline: usize, expect: Arc<Expect>) -> Conn {
        Conn {
            stream: None,
            phase: Phase::Idle,
            generation: 0,
            inflight: VecDeque::with_capacity(pipeline),
            write_pending: 0,
            deadline: None,
            listed_idle: false,
            backoff: Backoff::default(),
            waiting: false,
            sending: false,
            receiving: false,
            carry: Carry::default(),
            parser: ResponseParser::default(),
            check: BodyCheck::new(expect),
        }
    }

    /// Can take one more request now (not waiting out a connect back-off).
    pub fn has_capacity(&self, pipeline: usize) -> bool {
        !self.waiting && self.inflight.len() < pipeline
    }

    /// Some bytes of a response are buffered or parsed but the response is not complete.
    pub fn response_started(&self) -> bool {
        !self.carry.is_empty() || self.parser.in_body()
    }

    /// Drops the socket; assigned requests stay (the caller decides their fate) and will be
    /// written again in full on the next socket.
    pub fn drop_socket(&mut self, request_len: usize) {
        self.stream = None;
        self.phase = Phase::Idle;
        self.generation = self.generation.wrapping_add(1);
        self.sending = false;
        self.receiving = false;
        self.carry = Carry::default();
        self.parser.reset();
        self.write_pending = self.inflight.len() * request_len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot (304 bytes, plus a 16-byte in-flight deque per pipelined request on the heap)
    /// is all a connection costs in user space on the epoll engine, and all but the shared
    /// buffer pool on io_uring (README "Memory per connection"): keep it from growing unnoticed.
    #[test]
    fn a_connection_slot_stays_small() {
        let size = std::mem::size_of::<Conn>();
        assert!(size <= 320, "Conn is {size} bytes");
    }
}
