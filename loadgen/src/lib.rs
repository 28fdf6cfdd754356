//! stackbench-load: an HTTP/1.1 load generator, closed loop like wrk and open loop free of
//! coordinated omission, with machine-readable output.
//!
//! Flow: `cli` parses argv into a frozen `config::Config`; `runner::run` picks the I/O
//! `engine` (io_uring or epoll) and starts one `worker` loop per thread (each owning `conn`
//! slots, the `http` parser, `check`s and a `recorder`), following a shared `schedule` in open
//! loop; `report` prints the result.

pub mod backoff;
pub mod check;
pub mod cli;
pub mod config;
pub mod conn;
pub mod engine;
pub mod errors;
pub mod http;
pub mod recorder;
pub mod report;
pub mod request;
pub mod runner;
pub mod schedule;
pub mod source;
pub mod sys;
pub mod worker;

pub use config::Config;
pub use runner::{run, RunResult};
