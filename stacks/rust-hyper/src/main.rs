//! rust-hyper: a stackbench stack on hyper 1.x and tokio's multi-thread runtime.
//!
//!   rust-hyper-server                               serve HTTP on HOST:PORT
//!   rust-hyper-server script WORKLOAD QUERY ITERS   run a workload's handler ITERS times in-process
//!                                                   and print the last body (contracts section 5)

mod config;
mod cpu;
mod data;
mod query;
mod reply;
mod routes;
mod server;
mod services;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use config::Config;
use routes::State;
use services::Services;

fn runtime(workers: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))
}

fn workload_path(workload: &str, query: &str) -> String {
    if workload == "data" {
        // The data workload takes n in the path; the script mode passes it as "n=N".
        return format!("/data/{}", query::param(query, "n").unwrap_or("0"));
    }
    format!("/{workload}")
}

async fn run_script(
    state: Arc<State>,
    workload: &str,
    query: &str,
    iterations: u64,
) -> Result<Vec<u8>, String> {
    let path = workload_path(workload, query);
    if !routes::is_known(&path) {
        return Err(format!("unknown workload '{workload}'"));
    }
    let mut reply = routes::handle(&state, &path, query).await;
    for _ in 1..iterations {
        reply = routes::handle(&state, &path, query).await;
    }
    if reply.status != 200 {
        return Err(format!(
            "workload {workload} answered {}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        ));
    }
    Ok(reply.body)
}

fn real_main(args: &[String]) -> Result<(), String> {
    let config = Config::from_env()?;
    let runtime = runtime(config.workers)?;
    let services = runtime.block_on(async { Services::new(&config) })?;
    let state = Arc::new(State { config, services });
    match args {
        [] => runtime.block_on(server::run(state))?,
        [mode, workload, query, iterations] if mode == "script" => {
            let iterations: u64 = iterations.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                format!("ITERATIONS must be a positive integer, got '{iterations}'")
            })?;
            let body = runtime.block_on(run_script(state, workload, query, iterations))?;
            std::io::stdout()
                .write_all(&body)
                .map_err(|e| format!("cannot write stdout: {e}"))?;
        }
        _ => return Err("usage: rust-hyper-server [script WORKLOAD QUERY ITERATIONS]".into()),
    }
    // Do not wait for idle keep-alive connections or pool maintenance tasks.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match real_main(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rust-hyper: {message}");
            ExitCode::FAILURE
        }
    }
}
