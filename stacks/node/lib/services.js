'use strict';

// MariaDB, Redis and memcached clients according to DB_STRATEGY:
//   pool         one long-lived client per service and process: a MariaDB pool of POOL_SIZE
//                connections; one ioredis and one memjs connection, which pipeline all
//                concurrent requests (the Node way: a single multiplexed connection per process);
//   per-request  a fresh connection opened for the request and closed afterwards.
// Nothing connects at startup, so the server runs without any service configured.
// MariaDB is reached through MYSQL_DRIVER's driver (mariadb.js), mysql2 or node-mysql.
const Redis = require('ioredis');
const memjs = require('memjs');
const { mariadbDriver } = require('./mariadb');
const { unavailable } = require('./errors');

function redisOptions(redis, perRequest) {
  return {
    host: redis.host,
    port: redis.port,
    // Sent as AUTH on connect (ioredis skips it when undefined).
    password: redis.password || undefined,
    lazyConnect: true,
    // Fail a request quickly when Redis is down instead of queueing it for ~20 reconnects.
    maxRetriesPerRequest: 1,
    // A per-request connection neither reconnects nor runs the INFO "ready check", which only
    // matters for long-lived clients that must wait for Redis to finish loading after a restart.
    ...(perRequest ? { retryStrategy: () => null, enableReadyCheck: false } : {}),
  };
}

function memcachedClient(mc) {
  // memjs logs every socket error itself; failures surface as rejected gets instead.
  return memjs.Client.create(`${mc.host}:${mc.port}`, { retries: 1, logger: { log() {} } });
}

class Services {
  constructor(config) {
    this.config = config;
    this.pooled = config.dbStrategy === 'pool';
    this.dbPool = null;
    this.redisClient = null;
    this.memcached = null;
  }

  // Runs fn(db) where db has mysql2's promise query(), whichever the driver; resolves to
  // fn's result.
  async withDB(fn) {
    const { db } = this.config;
    if (!db.host && !db.socket) throw unavailable('MariaDB is not configured: set DB_HOST/DB_PORT or DB_SOCKET');
    const driver = mariadbDriver(this.config.mysqlDriver);
    if (this.pooled) {
      this.dbPool ??= driver.createPool(db, this.config.poolSize);
      return fn(this.dbPool);
    }
    const conn = await driver.connect(db);
    try {
      return await fn(conn);
    } finally {
      conn.end().catch(() => conn.destroy());
    }
  }

  async withRedis(fn) {
    const { redis } = this.config;
    if (!redis.host) throw unavailable('Redis is not configured: set REDIS_HOST/REDIS_PORT');
    if (this.pooled) {
      this.redisClient ??= new Redis(redisOptions(redis, false));
      return fn(this.redisClient);
    }
    const client = new Redis(redisOptions(redis, true));
    try {
      return await fn(client);
    } finally {
      client.disconnect();
    }
  }

  async withMemcached(fn) {
    const { memcached } = this.config;
    if (!memcached.host) throw unavailable('memcached is not configured: set MEMCACHED_HOST/MEMCACHED_PORT');
    if (this.pooled) {
      this.memcached ??= memcachedClient(memcached);
      return fn(this.memcached);
    }
    const client = memcachedClient(memcached);
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  async close() {
    if (this.dbPool) await this.dbPool.end().catch(() => {});
    if (this.redisClient) this.redisClient.disconnect();
    if (this.memcached) this.memcached.close();
  }
}

module.exports = { Services };
