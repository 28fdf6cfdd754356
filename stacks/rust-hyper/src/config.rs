//! Everything the process learns from its environment (docs/contracts.md sections 3 and 4),
//! read once at start-up.

use std::env;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbStrategy {
    PerRequest,
    Pool,
}

#[derive(Clone, Debug)]
pub struct DbConfig {
    pub host: String,
    pub port: u16,
    pub socket: String,
    pub user: String,
    pub password: String,
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub host: String,
    pub port: u16,
    pub workers: usize,
    pub fixtures_dir: PathBuf,
    pub db_strategy: DbStrategy,
    pub pool_size: usize,
    /// None when neither DB_HOST nor DB_SOCKET is set: data requests then answer 503.
    pub db: Option<DbConfig>,
    pub redis: Option<(String, u16)>,
    /// REDIS_PASSWORD: sent as AUTH on every new Redis connection; None: no AUTH.
    pub redis_password: Option<String>,
    pub memcached: Option<(String, u16)>,
}

fn var(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.is_empty())
}

fn number<T: std::str::FromStr>(name: &str, fallback: T) -> Result<T, String> {
    match var(name) {
        None => Ok(fallback),
        Some(raw) => raw
            .parse()
            .map_err(|_| format!("environment variable {name}='{raw}' is not a valid number")),
    }
}

fn address(host_var: &str, port_var: &str) -> Result<Option<(String, u16)>, String> {
    match (var(host_var), var(port_var)) {
        (Some(host), Some(_)) => Ok(Some((host, number(port_var, 0)?))),
        _ => Ok(None),
    }
}

fn db_strategy() -> Result<DbStrategy, String> {
    match var("DB_STRATEGY").as_deref() {
        None | Some("pool") => Ok(DbStrategy::Pool),
        Some("per-request") => Ok(DbStrategy::PerRequest),
        Some(other) => Err(format!(
            "environment variable DB_STRATEGY='{other}' must be 'pool' or 'per-request'"
        )),
    }
}

fn db_config() -> Result<Option<DbConfig>, String> {
    let (host, socket) = (var("DB_HOST"), var("DB_SOCKET"));
    if host.is_none() && socket.is_none() {
        return Ok(None);
    }
    Ok(Some(DbConfig {
        host: host.unwrap_or_else(|| "127.0.0.1".into()),
        port: number("DB_PORT", 3306)?,
        socket: socket.unwrap_or_default(),
        user: var("DB_USER").unwrap_or_default(),
        password: var("DB_PASSWORD").unwrap_or_default(),
        name: var("DB_NAME").unwrap_or_else(|| "stackbench".into()),
    }))
}

impl Config {
    pub fn from_env() -> Result<Config, String> {
        let fixtures_dir =
            var("FIXTURES_DIR").ok_or("environment variable FIXTURES_DIR is not set")?;
        let workers: usize = number("WORKERS", 1)?;
        let pool_size: usize = number("POOL_SIZE", 16)?;
        if workers == 0 || pool_size == 0 {
            return Err("WORKERS and POOL_SIZE must be at least 1".into());
        }
        Ok(Config {
            host: var("HOST").unwrap_or_else(|| "127.0.0.1".into()),
            port: number("PORT", 8080)?,
            workers,
            fixtures_dir: PathBuf::from(fixtures_dir),
            db_strategy: db_strategy()?,
            pool_size,
            db: db_config()?,
            redis: address("REDIS_HOST", "REDIS_PORT")?,
            redis_password: var("REDIS_PASSWORD"),
            memcached: address("MEMCACHED_HOST", "MEMCACHED_PORT")?,
        })
    }
}
