//! Clients for MariaDB (mysql_async), Redis (redis-rs) and memcached (async-memcached), honouring
//! DB_STRATEGY:
//! - `pool`: MariaDB through mysql_async's own pool (POOL_SIZE connections, prepared statements
//!   cached per connection); Redis through one shared `ConnectionManager`, the multiplexed,
//!   auto-reconnecting connection redis-rs recommends for async servers (a pool adds nothing there,
//!   so POOL_SIZE does not apply); memcached through a deadpool of POOL_SIZE connections, because an
//!   async-memcached client serves one request at a time.
//! - `per-request`: every request opens its own connection and closes it when done.
//!
//! Nothing connects at start-up: a missing or down service only fails the requests that need it.

use async_memcached::{AsciiProtocol, Client as MemcachedClient};
use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};
use redis::aio::ConnectionManager;
use tokio::sync::OnceCell;

use crate::config::{Config, DbConfig, DbStrategy};
use crate::reply::ServiceError;

fn unavailable(what: &str, err: impl std::fmt::Display) -> ServiceError {
    ServiceError::Unavailable(format!("{what}: {err}"))
}

fn failed(what: &str, err: impl std::fmt::Display) -> ServiceError {
    ServiceError::Failed(format!("{what}: {err}"))
}

fn mysql_opts(db: &DbConfig, pool_size: usize) -> Opts {
    // min = max: mysql_async keeps only `min` idle connections (with its default zero idle TTL),
    // so a lower min would close connections on return and reconnect on the next request.
    let constraints = PoolConstraints::new(pool_size, pool_size).expect("min <= max");
    let builder = OptsBuilder::default()
        .user(Some(&db.user))
        .pass(Some(&db.password))
        .db_name(Some(&db.name))
        .tcp_nodelay(true)
        // No COM_RESET_CONNECTION when a connection returns to the pool: this pool serves one
        // trusted application that leaves no session state behind, and a reset would also drop
        // the cached prepared statements (the setting TechEmpower's mysql_async entries use).
        .pool_opts(
            PoolOpts::default()
                .with_constraints(constraints)
                .with_reset_connection(false),
        );
    let builder = if db.socket.is_empty() {
        builder.ip_or_hostname(db.host.clone()).tcp_port(db.port)
    } else {
        builder.socket(Some(db.socket.clone()))
    };
    Opts::from(builder)
}

/// A MariaDB connection for one request: pooled (returned on drop) or private (closed on drop).
pub type MysqlConn = Conn;

pub struct Mysql {
    opts: Option<Opts>,
    pool: Option<Pool>,
}

impl Mysql {
    fn new(config: &Config) -> Mysql {
        let opts = config
            .db
            .as_ref()
            .map(|db| mysql_opts(db, config.pool_size));
        let pool = match (&opts, config.db_strategy) {
            (Some(opts), DbStrategy::Pool) => Some(Pool::new(opts.clone())), // connects lazily
            _ => None,
        };
        Mysql { opts, pool }
    }

    async fn conn(&self) -> Result<MysqlConn, ServiceError> {
        let Some(opts) = &self.opts else {
            return Err(ServiceError::Unavailable(
                "MariaDB is not configured: set DB_HOST/DB_PORT or DB_SOCKET".into(),
            ));
        };
        let conn = match &self.pool {
            Some(pool) => pool.get_conn().await,
            None => Conn::new(opts.clone()).await,
        };
        conn.map_err(|e| unavailable("MariaDB connect failed", e))
    }

    /// Runs `work` on a connection, then returns it to the pool or, per-request, closes it with
    /// a proper COM_QUIT.
    pub async fn with_conn<T>(
        &self,
        work: impl AsyncFnOnce(&mut MysqlConn) -> Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        let mut conn = self.conn().await?;
        let result = work(&mut conn).await;
        if self.pool.is_none() {
            let _ = conn.disconnect().await;
        }
        result
    }
}

pub async fn mysql_query<T: mysql_async::prelude::FromRow + Send + 'static>(
    conn: &mut MysqlConn,
    sql: &str,
) -> Result<Vec<T>, ServiceError> {
    conn.query(sql)
        .await
        .map_err(|e| failed(&format!("MariaDB query '{sql}' failed"), e))
}

pub struct Redis {
    client: Option<redis::Client>,
    strategy: DbStrategy,
    shared: OnceCell<ConnectionManager>,
}

impl Redis {
    fn new(config: &Config) -> Result<Redis, String> {
        let client = match &config.redis {
            Some((host, port)) => {
                let mut info = format!("redis://{host}:{port}/")
                    .into_connection_info()
                    .map_err(|e| format!("REDIS_HOST/REDIS_PORT give an invalid address: {e}"))?;
                if let Some(password) = &config.redis_password {
                    let settings = info.redis_settings().clone().set_password(password);
                    info = info.set_redis_settings(settings);
                }
                Some(
                    redis::Client::open(info)
                        .map_err(|e| format!("cannot configure the Redis client: {e}"))?,
                )
            }
            None => None,
        };
        Ok(Redis {
            client,
            strategy: config.db_strategy,
            shared: OnceCell::new(),
        })
    }

    pub async fn get(&self, key: &str) -> Result<String, ServiceError> {
        let Some(client) = &self.client else {
            return Err(ServiceError::Unavailable(
                "Redis is not configured: set REDIS_HOST and REDIS_PORT".into(),
            ));
        };
        let value: Option<String> = match self.strategy {
            DbStrategy::Pool => {
                let shared = self
                    .shared
                    .get_or_try_init(|| ConnectionManager::new(client.clone()))
                    .await
                    .map_err(|e| unavailable("Redis connect failed", e))?;
                shared.clone().get(key).await
            }
            DbStrategy::PerRequest => {
                let mut conn = client
                    .get_multiplexed_async_connection()
                    .await
                    .map_err(|e| unavailable("Redis connect failed", e))?;
                conn.get(key).await // the connection closes when `conn` drops
            }
        }
        .map_err(|e| failed("Redis GET failed", e))?;
        value.ok_or_else(|| ServiceError::Failed(format!("Redis key '{key}' does not exist")))
    }
}

use redis::AsyncCommands as _;
use redis::IntoConnectionInfo as _;

struct MemcachedManager {
    dsn: String,
}

impl managed::Manager for MemcachedManager {
    type Type = MemcachedClient;
    type Error = async_memcached::Error;

    async fn create(&self) -> Result<MemcachedClient, async_memcached::Error> {
        MemcachedClient::new(&self.dsn).await
    }

    async fn recycle(
        &self,
        client: &mut MemcachedClient,
        _: &Metrics,
    ) -> RecycleResult<async_memcached::Error> {
        // A client whose last operation failed half-way has closed its connection; replace it.
        if client.is_closed() {
            return Err(RecycleError::message("memcached connection closed"));
        }
        Ok(())
    }
}

pub struct Memcached {
    dsn: Option<String>,
    pool: Option<managed::Pool<MemcachedManager>>,
}

impl Memcached {
    fn new(config: &Config) -> Result<Memcached, String> {
        let dsn = config
            .memcached
            .as_ref()
            .map(|(host, port)| format!("tcp://{host}:{port}"));
        let pool = match (&dsn, config.db_strategy) {
            (Some(dsn), DbStrategy::Pool) => Some(
                managed::Pool::builder(MemcachedManager { dsn: dsn.clone() })
                    .max_size(config.pool_size)
                    .build()
                    .map_err(|e| format!("cannot build the memcached pool: {e}"))?,
            ),
            _ => None,
        };
        Ok(Memcached { dsn, pool })
    }

    pub async fn get(&self, key: &str) -> Result<String, ServiceError> {
        let Some(dsn) = &self.dsn else {
            return Err(ServiceError::Unavailable(
                "memcached is not configured: set MEMCACHED_HOST and MEMCACHED_PORT".into(),
            ));
        };
        let value = match &self.pool {
            Some(pool) => {
                let mut client = pool
                    .get()
                    .await
                    .map_err(|e| unavailable("memcached connect failed", e))?;
                client.get(key).await
            }
            None => {
                let mut client = MemcachedClient::new(dsn)
                    .await
                    .map_err(|e| unavailable("memcached connect failed", e))?;
                client.get(key).await
            }
        }
        .map_err(|e| failed("memcached get failed", e))?;
        let data = value.and_then(|v| v.data);
        let data = data
            .ok_or_else(|| ServiceError::Failed(format!("memcached key '{key}' does not exist")))?;
        String::from_utf8(data).map_err(|e| failed("memcached value is not UTF-8", e))
    }
}

/// All data-service clients of the process.
pub struct Services {
    pub mysql: Mysql,
    pub redis: Redis,
    pub memcached: Memcached,
}

impl Services {
    /// Must be called inside the tokio runtime (the pools spawn their maintenance tasks).
    pub fn new(config: &Config) -> Result<Services, String> {
        Ok(Services {
            mysql: Mysql::new(config),
            redis: Redis::new(config)?,
            memcached: Memcached::new(config)?,
        })
    }
}
