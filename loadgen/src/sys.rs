//! Thin wrappers over the few libc calls we need: file descriptor limit, CPU time, timerfd.

use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NofileLimit {
    pub soft: u64,
    pub hard: u64,
    /// The hard limit found at start: below `hard` when the loader raised it (privileged).
    pub hard_before: u64,
}

fn get_nofile() -> io::Result<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass; no other memory is touched.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(limit)
}

fn set_nofile(soft: u64, hard: u64) -> bool {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit only reads the struct we pass.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 }
}

/// The most descriptors a process may be allowed (`fs.nr_open`; 1,048,576 when unreadable,
/// the kernel's default).
fn nr_open() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20)
}

/// Raises RLIMIT_NOFILE's soft limit to the hard limit, and first the hard limit itself to
/// `wanted` (capped by `fs.nr_open`) when it is lower and the process may (CAP_SYS_RESOURCE,
/// e.g. root); an unprivileged process keeps its hard limit. Never lowers either limit.
pub fn raise_nofile_limit(wanted: u64) -> io::Result<NofileLimit> {
    let start = get_nofile()?;
    let hard_before = start.rlim_max;
    let mut hard = hard_before;
    let target = wanted.min(nr_open());
    if target > hard && set_nofile(target, target) {
        hard = target;
    }
    let mut soft = get_nofile()?.rlim_cur;
    if soft < hard && set_nofile(hard, hard) {
        soft = hard;
    }
    Ok(NofileLimit {
        soft,
        hard,
        hard_before,
    })
}

/// This process's CPU time so far (all threads).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTime {
    pub user: Duration,
    pub sys: Duration,
}

impl CpuTime {
    pub fn now() -> CpuTime {
        // SAFETY: rusage is plain data; getrusage fills it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a rusage struct.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        CpuTime {
            user: tv(usage.ru_utime),
            sys: tv(usage.ru_stime),
        }
    }

    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(earlier.user),
            sys: self.sys.saturating_sub(earlier.sys),
        }
    }
}

/// A monotonic timerfd: wakes the poll loop at microsecond precision (epoll's own timeout
/// has millisecond granularity, which would smear open-loop send times by up to 1 ms).
pub struct Timer {
    fd: OwnedFd,
    armed: Option<Instant>,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor we own.
        Ok(Timer {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed: None,
        })
    }

    /// Fires once at `deadline` (re-arming only when the deadline changes).
    pub fn arm(&mut self, deadline: Instant, now: Instant) -> io::Result<()> {
        if self.armed == Some(deadline) {
            return Ok(());
        }
        let wait = deadline
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1000));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_nsec: wait.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: valid fd and spec; old value not requested.
        if unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) }
            != 0
        {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(deadline);
        Ok(())
    }

    /// Consumes the expiration so the next one triggers a new edge.
    pub fn fired(&mut self) {
        let mut count = [0u8; 8];
        // SAFETY: reads at most 8 bytes into our buffer; EAGAIN is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
        self.armed = None;
    }
}

impl Source for Timer {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.fd.as_raw_fd()).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.fd.as_raw_fd()).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        SourceFd(&self.fd.as_raw_fd()).deregister(registry)
    }
}
