//! The endpoint table, shared by the HTTP server and the script mode.

use std::path::Path;
use std::sync::Arc;

use crate::config::Config;
use crate::reply::Reply;
use crate::services::Services;
use crate::{cpu, data};

pub struct State {
    pub config: Config,
    pub services: Services,
}

/// Runs blocking file I/O on tokio's blocking pool. std::fs calls on a runtime worker would stall
/// every connection scheduled on that worker for the duration of the loop; one hop per request
/// (not tokio::fs's one hop per open/read/close) keeps the blocking API the contract asks for at
/// the lowest hand-off cost.
async fn blocking_file_work(
    state: &Arc<State>,
    query: &str,
    work: fn(&str, &Path) -> Reply,
) -> Reply {
    let (state, query) = (Arc::clone(state), query.to_owned());
    tokio::task::spawn_blocking(move || work(&query, &state.config.fixtures_dir))
        .await
        .unwrap_or_else(|e| Reply::error(500, format!("file workload task failed: {e}")))
}

fn data_reply(outcome: Result<Reply, crate::reply::ServiceError>) -> Reply {
    outcome.unwrap_or_else(Reply::from)
}

/// Whether `path` is served at all (so the script mode can reject unknown workloads).
pub fn is_known(path: &str) -> bool {
    path.starts_with("/data/")
        || matches!(
            path,
            "/hello"
                | "/concat"
                | "/add"
                | "/array"
                | "/assoc"
                | "/readfile"
                | "/sha256"
                | "/json"
                | "/plaintext"
                | "/db-report"
                | "/mysql-row"
                | "/redis-get"
                | "/memcache-get"
                | "/db"
                | "/queries"
                | "/fortunes"
                | "/updates"
        )
}

/// Serves one request. In-memory CPU loops run inline on the worker (as in every event-loop
/// stack); file I/O goes to the blocking pool; data services are awaited asynchronously.
pub async fn handle(state: &Arc<State>, path: &str, query: &str) -> Reply {
    let services = &state.services;
    match path {
        "/hello" => cpu::hello(),
        "/concat" => cpu::concat(query),
        "/add" => cpu::add(query),
        "/array" => cpu::array(query),
        "/assoc" => cpu::assoc(query),
        "/readfile" => blocking_file_work(state, query, cpu::readfile).await,
        "/sha256" => blocking_file_work(state, query, cpu::sha256).await,
        "/json" => cpu::tfb_json(),
        "/plaintext" => cpu::tfb_plaintext(),
        "/db-report" => data_reply(data::db_report(services).await),
        "/mysql-row" => data_reply(data::mysql_row(services).await),
        "/redis-get" => data_reply(data::redis_get(services).await),
        "/memcache-get" => data_reply(data::memcache_get(services).await),
        "/db" => data_reply(data::tfb_db(services).await),
        "/queries" => data_reply(data::tfb_queries(services, query).await),
        "/fortunes" => data_reply(data::tfb_fortunes(services).await),
        "/updates" => data_reply(data::tfb_updates(services, query).await),
        _ => match path.strip_prefix("/data/") {
            Some(n) => cpu::data(n),
            None => Reply::error(404, "no such endpoint"),
        },
    }
}
