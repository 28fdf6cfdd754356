//! The io_uring engine: every socket operation is a ring entry and each loop turn is one
//! `io_uring_enter` that submits what the turn queued and waits for completions (with the
//! wake-up time as its timeout, so no timer is needed). Connect, send and close go through the
//! ring; receiving takes buffers from a ring shared by the thread's connections (`bufring`),
//! so an idle connection holds no read buffer: one multishot recv per keep-alive connection,
//! one single-shot recv at a time when every connection carries one response (then nothing is
//! armed once the response is in, and the socket is simply closed). Sends point at the
//! pre-rendered request bytes (no copy).

use super::bufring::BufRing;
use super::{source_of, Io};
use crate::conn::{Conn, Phase};
use crate::errors::{classify_connect, classify_read, classify_write, ErrorClass};
use crate::request::RenderedRequest;
use crate::source::open_socket;
use crate::worker::Worker;
use io_uring::types::{CancelBuilder, Fd, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, EnterFlags, IoUring, Probe};
use mio::net::TcpStream;
use socket2::SockAddr;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Operation kinds in the top bits of the low word of `user_data`.
const CONNECT: u64 = 0;
const SEND: u64 = 1;
const RECV: u64 = 2;
/// Shutdowns, cancels and closes: submitted with `CQE_SKIP_SUCCESS`, so they complete
/// silently unless they fail, and a failure needs no action. Not counted in `in_flight`.
const QUIET: u64 = 3;
const BUFFER_GROUP: u16 = 0;
/// One page per receive buffer: a buffer the kernel filled costs one page of memory.
const BUFFER_SIZE: u32 = 4096;
/// Most batches of completions one turn takes (each later batch is one non-waiting enter, 20
/// deferred completions or more): bounds a turn under a flood, as epoll's 1,024 events a wait
/// do, so the schedule and the timeouts still get their turn.
const MAX_BATCHES: usize = 64;
/// Closes queued before the next socket is opened submits them: at most this many
/// descriptors per thread wait for their close.
const CLOSE_BATCH: usize = 64;
/// How long dropping the engine waits for the ring to let go of its memory.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);

fn user_data(op: u64, index: usize, generation: u32) -> u64 {
    (u64::from(generation) << 32) | (op << 30) | index as u64
}

fn decode(user_data: u64) -> (u64, usize, u32) {
    let low = user_data & 0xffff_ffff;
    (
        (low >> 30),
        (low & 0x3fff_ffff) as usize,
        (user_data >> 32) as u32,
    )
}

/// Does this operation's last completion count in `in_flight`? (Quiet ones post a completion
/// only when they fail.)
fn counted(user_data: u64) -> bool {
    decode(user_data).0 != QUIET
}

fn os_error(result: i32) -> io::Error {
    io::Error::from_raw_os_error(-result)
}

pub struct Uring {
    ring: IoUring,
    buffers: BufRing,
    target: SockAddr,
    sources: Arc<[IpAddr]>,
    /// Closes queued since the last submit: their descriptors are still open.
    closes_queued: usize,
    /// Sends point into the request bytes: they must outlive every operation in the ring.
    _request: Arc<RenderedRequest>,
    /// Operations whose last completion has not arrived (drained before the memory goes).
    in_flight: usize,
    completions: Vec<(u64, i32, u32)>,
    /// Every connection carries one response (no keep-alive): receive with single-shot recvs.
    one_response: bool,
}

/// Can this process use the io_uring engine? ENOSYS without io_uring, EPERM when a seccomp
/// filter or `kernel.io_uring_disabled` refuses it, Unsupported on kernels before 6.0
/// (multishot receive).
pub fn probe() -> io::Result<()> {
    if !kernel_at_least(6, 0) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "multishot receive needs Linux 6.0",
        ));
    }
    let ring = IoUring::new(8)?;
    let mut probe = Probe::new();
    ring.submitter().register_probe(&mut probe)?;
    let needed = [
        opcode::Connect::CODE,
        opcode::Send::CODE,
        opcode::RecvMulti::CODE,
        opcode::Close::CODE,
        opcode::AsyncCancel::CODE,
    ];
    if !needed.iter().all(|code| probe.is_supported(*code)) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the kernel lacks an io_uring operation the engine needs",
        ));
    }
    drop(BufRing::new(
        &ring.submitter(),
        1,
        BUFFER_SIZE,
        BUFFER_GROUP,
    )?);
    Ok(())
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: utsname is plain data; uname fills it.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a utsname struct.
    if unsafe { libc::uname(&mut name) } != 0 {
        return false;
    }
    let release: String = name
        .release
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8 as char)
        .collect();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// A ring sized for `connections`: a deferred, single-issuer ring where the kernel has it
/// (completions are then posted only when the loop asks), a plain one otherwise.
fn build_ring(connections: usize) -> io::Result<IoUring> {
    let entries = (connections * 2).next_power_of_two().clamp(64, 4096) as u32;
    let mut builder = IoUring::builder();
    builder.setup_cqsize(entries * 4);
    let tuned = builder
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries);
    tuned.or_else(|_| IoUring::builder().setup_cqsize(entries * 4).build(entries))
}

impl Io for Uring {
    fn new(
        connections: usize,
        target: SocketAddr,
        sources: Arc<[IpAddr]>,
        request: Arc<RenderedRequest>,
        one_response: bool,
    ) -> io::Result<Self> {
        let ring = build_ring(connections)?;
        // Enough buffers for every connection of the thread to receive in the same turn, up to
        // 4096 (16 MiB of address space, resident only once used).
        let count = connections.next_power_of_two().clamp(64, 4096) as u16;
        let buffers = BufRing::new(&ring.submitter(), count, BUFFER_SIZE, BUFFER_GROUP)?;
        Ok(Uring {
            ring,
            buffers,
            target: SockAddr::from(target),
            sources,
            closes_queued: 0,
            _request: request,
            in_flight: 0,
            completions: Vec::new(),
            one_response,
        })
    }

    fn connect(&mut self, conn: &mut Conn, index: usize) -> io::Result<()> {
        // Closes queued go first once there are a batch of them: until they are submitted
        // their descriptors stay open, and a wave of timeouts would otherwise hold twice the
        // connections' descriptors (each replaced socket's beside its replacement's). A batch,
        // not each one: without keep-alive every response's close precedes a connect, and a
        // submit each time would be one more system call per request.
        if self.closes_queued >= CLOSE_BATCH {
            self.submit_queued();
        }
        let target = self.target.as_socket().expect("an IP target");
        // A blocking socket: io_uring waits for it itself and never blocks the thread.
        let socket = open_socket(target, source_of(&self.sources, index), false)?;
        socket.set_tcp_nodelay(true)?;
        let entry = opcode::Connect::new(
            Fd(socket.as_raw_fd()),
            self.target.as_ptr().cast(),
            self.target.len(),
        )
        .build()
        .user_data(user_data(CONNECT, index, conn.generation));
        // Held as a mio stream only to own the descriptor: this engine does no I/O through it.
        conn.stream = Some(TcpStream::from_std(socket.into()));
        self.push(&entry);
        Ok(())
    }

    fn flush(
        &mut self,
        conn: &mut Conn,
        index: usize,
        req: &RenderedRequest,
    ) -> Result<(), ErrorClass> {
        // One send at a time per socket keeps the bytes in order; its completion sends the rest.
        if conn.sending || conn.write_pending == 0 || conn.phase != Phase::Open {
            return Ok(());
        }
        let Some(stream) = conn.stream.as_ref() else {
            return Ok(());
        };
        let slice = req.pending_slice(conn.write_pending);
        let entry = opcode::Send::new(Fd(stream.as_raw_fd()), slice.as_ptr(), slice.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(user_data(SEND, index, conn.generation));
        self.push(&entry);
        conn.sending = true;
        Ok(())
    }

    fn close(&mut self, conn: &mut Conn, index: usize) {
        let Some(stream) = conn.stream.take() else {
            return;
        };
        let fd = stream.into_raw_fd();
        // Operations in flight hold the socket, so they must end for the socket to go; the
        // descriptor goes with the close, whatever still holds the socket. Nothing is linked:
        // on a deferred-task-run ring the second step of a chain waits for a task-work pass,
        // and under a wave of timeouts thousands of such closes waited seconds, each holding
        // its descriptor (a run of 8,000 connections held 15,000 and failed with EMFILE).
        // - A receive or send armed on an open socket: a direct shutdown ends it at once
        //   (EOF). Not the ring's shutdown, which the kernel always hands to an io-wq worker
        //   thread (a fifth of the loader's CPU when it ended every connection).
        // - A connect in progress: cancelled by its user_data (a hash lookup; a shutdown does
        //   not end it). The cancel names no descriptor, and the close after it in the same
        //   submission runs once the cancel has.
        // Without keep-alive the response's receive has usually completed: a plain close.
        match conn.phase {
            Phase::Open if !conn.receiving && !conn.sending => {}
            Phase::Open => {
                // SAFETY: `fd` is our open socket until the close below is submitted.
                unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
            }
            _ => self.push(&quiet(
                opcode::AsyncCancel::new(user_data(CONNECT, index, conn.generation)).build(),
            )),
        }
        self.push(&quiet(opcode::Close::new(Fd(fd)).build()));
        self.closes_queued += 1;
    }

    fn turn(w: &mut Worker<Self>, wake: Instant, busy: bool) -> io::Result<()> {
        let wait = if busy {
            Duration::ZERO
        } else {
            wake.saturating_duration_since(Instant::now())
        };
        w.io.enter(wait)?;
        // Everything the kernel holds is taken before the worker dispatches again: a wait
        // woken by a response hands over only that one, whatever else has arrived, and a
        // call that does not sleep at most 20 (`run_deferred`); a response left in the
        // kernel keeps its connection busy, so due requests would wait for a
        // connection that is in fact free (open loop: far more `waited` than epoll), and the
        // response would be timestamped a turn late.
        // Each batch is timestamped when it is taken, not with the wait's instant: taking the
        // next batch also submits what the previous one queued (a closed loop's next request,
        // started at this turn's time), and a fast server on loopback answers it within the
        // drain. With one instant per turn such a request measured 0 µs: a loader-bound level
        // without keep-alive recorded most of its latencies as 1 µs (p50 1 µs, p99 54 ms).
        let mut batch = std::mem::take(&mut w.io.completions);
        for _ in 0..MAX_BATCHES {
            if !w.io.next_batch(&mut batch)? {
                break;
            }
            let now = Instant::now();
            for &(data, result, flags) in &batch {
                on_completion(w, data, result, flags, now);
            }
        }
        batch.clear();
        w.io.completions = batch;
        Ok(())
    }
}

impl Uring {
    /// Submits what is queued without waiting (the closes among it release their descriptors).
    fn submit_queued(&mut self) {
        let _ = self.ring.submit();
        self.closes_queued = 0;
    }

    /// Queues an operation, submitting first when the queue is full.
    fn push(&mut self, entry: &squeue::Entry) {
        self.push_chain(std::slice::from_ref(entry));
    }

    /// Queues operations in one piece, submitting first when they do not fit: a linked chain
    /// split across two submissions would be cut (the kernel ends a chain with its submission).
    fn push_chain(&mut self, entries: &[squeue::Entry]) {
        // SAFETY: every pointer in our entries (request bytes, target address, buffer ring)
        // stays valid until the ring is drained in `drop`.
        let pushed = unsafe { self.ring.submission().push_multiple(entries) };
        if pushed.is_err() {
            self.submit_queued();
            // SAFETY: as above.
            unsafe { self.ring.submission().push_multiple(entries) }
                .expect("the submission queue has room after a submit");
        }
        self.in_flight += entries
            .iter()
            .filter(|e| counted(e.get_user_data()))
            .count();
    }

    /// Replaces `batch` with the next completions of this turn: first those the wait
    /// returned (`batch` comes in empty), then, each time it comes back full, whatever more
    /// the kernel runs without waiting. False when there are none.
    fn next_batch(&mut self, batch: &mut Vec<(u64, i32, u32)>) -> io::Result<bool> {
        if !batch.is_empty() {
            batch.clear();
            self.run_deferred()?;
        }
        batch.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        Ok(!batch.is_empty())
    }

    /// Submits what is queued and runs the kernel's deferred completions, never waiting.
    ///
    /// On a deferred-task-run ring a socket's readiness only queues work, which runs inside
    /// `io_uring_enter`, and not all of it (measured on Linux 6.18): a wait that slept runs,
    /// once woken, only as many items as it waits for (`min_complete`: one), and a call that
    /// does not sleep at most 20 (the kernel's `IO_LOCAL_TW_DEFAULT_MAX`) when it asks for
    /// fewer. So after a wait, more responses can sit in the kernel, already received. With `min_complete` 0
    /// (and no timeout) the call runs the next batch and returns at once; with a timeout it
    /// would sleep on an expired timer (about 30 µs) whenever nothing is left.
    fn run_deferred(&mut self) -> io::Result<()> {
        let to_submit = self.ring.submission().len() as u32;
        self.closes_queued = 0; // submitted by this call
        let getevents = EnterFlags::GETEVENTS.bits();
        // SAFETY: no argument pointer is passed; the call only submits queued entries (whose
        // pointers stay valid, see `push_chain`) and reaps.
        let entered = unsafe {
            self.ring
                .submitter()
                .enter::<libc::sigset_t>(to_submit, 0, getevents, None)
        };
        match entered {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Submits the turn's operations and waits up to `wait` for at least one completion: one
    /// system call per loop turn (plus `run_deferred` when it returned some).
    fn enter(&mut self, wait: Duration) -> io::Result<()> {
        let timeout = Timespec::from(wait);
        let args = SubmitArgs::new().timespec(&timeout);
        self.closes_queued = 0; // submitted by this call
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

impl Drop for Uring {
    /// Operations still in the ring may point at the request bytes and the buffers: wait for
    /// their last completions before that memory is freed. The sockets were shut down, so
    /// they end on their own; a cancel of everything left (which scans the ring's requests
    /// once per request cancelled) is the fallback.
    fn drop(&mut self) {
        self.drain(Instant::now() + DRAIN_LIMIT / 4);
        if self.in_flight > 0 {
            self.push(&quiet(
                opcode::AsyncCancel2::new(CancelBuilder::any()).build(),
            ));
            self.drain(Instant::now() + DRAIN_LIMIT);
        }
        let _ = self.ring.submitter().unregister_buf_ring(BUFFER_GROUP);
    }
}

impl Uring {
    /// Submits and reaps until no operation is left in the ring or `deadline` passed.
    fn drain(&mut self, deadline: Instant) {
        while self.in_flight > 0 && Instant::now() < deadline {
            if self.enter(Duration::from_millis(10)).is_err() {
                return;
            }
            let finished = self
                .ring
                .completion()
                .filter(|c| !cqueue::more(c.flags()) && counted(c.user_data()))
                .count();
            self.in_flight -= finished;
        }
    }
}

/// An operation whose success needs no completion (close, shutdown, cancel).
fn quiet(entry: squeue::Entry) -> squeue::Entry {
    entry
        .flags(squeue::Flags::SKIP_SUCCESS)
        .user_data(user_data(QUIET, 0, 0))
}

fn on_completion(w: &mut Worker<Uring>, data: u64, result: i32, flags: u32, now: Instant) {
    if !cqueue::more(flags) && counted(data) {
        w.io.in_flight -= 1;
    }
    let (op, index, generation) = decode(data);
    let buffer = cqueue::buffer_select(flags);
    if op == QUIET || !w.is_current(index, generation) {
        // A late completion for a socket already closed: only its buffer matters.
        if let Some(id) = buffer {
            w.io.buffers.give_back(id);
        }
        return;
    }
    match op {
        CONNECT => on_connect(w, index, result, now),
        SEND => on_send(w, index, result, now),
        _ => on_recv(w, index, result, flags, buffer, now),
    }
}

fn on_connect(w: &mut Worker<Uring>, index: usize, result: i32, now: Instant) {
    if result < 0 {
        return w.fail(index, classify_connect(&os_error(result)), now);
    }
    w.connected(index, now);
    arm_recv(w, index);
    w.flush(index);
}

fn on_send(w: &mut Worker<Uring>, index: usize, result: i32, now: Instant) {
    w.conns[index].sending = false;
    match result {
        r if r < 0 => w.fail(index, classify_write(&os_error(r)), now),
        0 => w.fail(index, ErrorClass::Write, now),
        sent => {
            w.conns[index].write_pending -= sent as usize;
            w.flush(index);
        }
    }
}

fn on_recv(
    w: &mut Worker<Uring>,
    index: usize,
    result: i32,
    flags: u32,
    buffer: Option<u16>,
    now: Instant,
) {
    if !cqueue::more(flags) {
        w.conns[index].receiving = false;
    }
    if result > 0 {
        let id = buffer.expect("a receive with bytes names its buffer");
        // SAFETY: the completion handed us buffer `id`; it goes back right after parsing.
        let data = unsafe { w.io.buffers.data(id, result as usize) };
        let open = w.ingest(index, data, now);
        w.io.buffers.give_back(id);
        if open && !w.conns[index].receiving {
            // The response is not complete yet (single-shot), or the kernel ended the
            // multishot (e.g. a full completion queue).
            arm_recv(w, index);
        }
        return;
    }
    if let Some(id) = buffer {
        w.io.buffers.give_back(id);
    }
    match result {
        0 => w.on_eof(index, now),
        r if -r == libc::ENOBUFS => arm_recv(w, index), // every buffer was busy: they are back now
        r => w.fail(index, classify_read(&os_error(r)), now),
    }
}

/// With keep-alive, one multishot receive per open connection: it stays armed across
/// responses. With one response per connection, a single-shot receive (armed again only while
/// the response is incomplete), so nothing is left armed when the connection closes.
fn arm_recv(w: &mut Worker<Uring>, index: usize) {
    let conn = &mut w.conns[index];
    let Some(stream) = conn.stream.as_ref() else {
        return;
    };
    let entry = recv_entry(Fd(stream.as_raw_fd()), w.io.one_response);
    conn.receiving = true;
    w.io.push(&entry.user_data(user_data(RECV, index, conn.generation)));
}

fn recv_entry(fd: Fd, one_response: bool) -> squeue::Entry {
    if one_response {
        // Length 0: as much as the selected buffer holds.
        opcode::Recv::new(fd, std::ptr::null_mut(), 0)
            .buf_group(BUFFER_GROUP)
            .build()
            .flags(squeue::Flags::BUFFER_SELECT)
    } else {
        opcode::RecvMulti::new(fd, BUFFER_GROUP).build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::config_from_args;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream as StdStream};

    const CONNECTIONS: usize = 100;
    const RESPONSE: &[u8] = b"HTTP/1.1 204 X\r\n\r\n";

    /// A ring with a multishot receive armed on each of `CONNECTIONS` loopback connections,
    /// and the (client, server) pairs.
    fn armed_receives() -> (Uring, Vec<(StdStream, StdStream)>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap();
        let config = config_from_args(["stackbench-load", &format!("http://{target}/")]).unwrap();
        let request = Arc::new(RenderedRequest::new(&config));
        let mut io = Uring::new(CONNECTIONS, target, Arc::from([]), request, false).unwrap();
        let mut pairs = Vec::new();
        for index in 0..CONNECTIONS {
            let client = StdStream::connect(target).unwrap();
            let (server, _) = listener.accept().unwrap();
            let recv = recv_entry(Fd(client.as_raw_fd()), false);
            io.push(&recv.user_data(user_data(RECV, index, 0)));
            pairs.push((client, server));
        }
        io.enter(Duration::ZERO).unwrap(); // arms every receive
        (io, pairs)
    }

    fn bytes_waiting(stream: &StdStream) -> libc::c_int {
        let mut waiting: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int for a valid socket.
        unsafe { libc::ioctl(stream.as_raw_fd(), libc::FIONREAD, &mut waiting) };
        waiting
    }

    /// Blocks until every one of `clients` holds its response. The receives run only inside
    /// io_uring_enter, so the bytes wait in the sockets meanwhile.
    fn wait_for_responses<'a>(clients: impl Iterator<Item = &'a StdStream> + Clone) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while clients.clone().any(|client| bytes_waiting(client) == 0) {
            assert!(Instant::now() < deadline, "the responses never arrived");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Takes `batch` and every further batch of the turn (`next_batch`): the indices of the
    /// connections whose response they handed over.
    fn rest_of_turn(io: &mut Uring, batch: &mut Vec<(u64, i32, u32)>) -> Vec<usize> {
        let mut answered = Vec::new();
        loop {
            for &(data, result, flags) in batch.iter() {
                let (op, index, _) = decode(data);
                assert_eq!((op, result), (RECV, RESPONSE.len() as i32));
                answered.push(index);
                io.buffers.give_back(cqueue::buffer_select(flags).unwrap());
            }
            if !io.next_batch(batch).unwrap() {
                return answered;
            }
        }
    }

    /// Responses that reached their sockets while the loop was busy are all handed over by the
    /// next turn: one io_uring_enter that does not sleep runs at most 20 receives on a
    /// deferred-task-run ring (Linux 6.18 here), and the rest kept their connections busy for
    /// another turn (open loop: requests counted as waiting for a connection that was free).
    #[test]
    fn one_turn_takes_every_response_already_received() {
        if probe().is_err() {
            return eprintln!("io_uring not usable here: nothing to test");
        }
        let (mut io, mut pairs) = armed_receives();
        for (_, server) in &mut pairs {
            server.write_all(RESPONSE).unwrap();
        }
        wait_for_responses(pairs.iter().map(|(client, _)| client));

        io.enter(Duration::from_secs(1)).unwrap();
        let answered = rest_of_turn(&mut io, &mut Vec::new());
        assert_eq!(answered.len(), CONNECTIONS);
        drop(pairs); // ends the receives, so dropping the ring does not wait
    }

    /// The same when the loop was asleep in its wait: woken by the first response, the kernel
    /// runs only as many receives as the wait asked for (one), whatever else has arrived; the
    /// turn takes the rest before the worker dispatches.
    #[test]
    fn a_woken_turn_takes_every_response_already_received() {
        if probe().is_err() {
            return eprintln!("io_uring not usable here: nothing to test");
        }
        let (mut io, pairs) = armed_receives();
        let (clients, mut servers): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20)); // the loop is asleep by then
            for server in &mut servers {
                server.write_all(RESPONSE).unwrap();
            }
            servers
        });
        io.enter(Duration::from_secs(5)).unwrap();
        let mut batch = Vec::new();
        assert!(io.next_batch(&mut batch).unwrap(), "woken with nothing");
        let servers = writer.join().unwrap();
        // Whatever the wake-up handed over, every other response is in its socket now.
        let first: Vec<usize> = batch.iter().map(|c| decode(c.0).1).collect();
        let pending = clients
            .iter()
            .enumerate()
            .filter(|(i, _)| !first.contains(i));
        wait_for_responses(pending.map(|(_, client)| client));

        let mut answered = rest_of_turn(&mut io, &mut batch);
        answered.sort_unstable();
        assert_eq!(answered, (0..CONNECTIONS).collect::<Vec<_>>());
        drop((clients, servers));
    }
}
