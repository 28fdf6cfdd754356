'use strict';

// Everything the orchestrator passes (contracts sections 3 and 4), read once at startup.
// Command-line flags exist because a manifest can pass template values as arguments only:
//   --listen-socket PATH   listen on a unix socket instead of HOST:PORT (node-nginx)
//   --host H, --port N     listen on H:N instead of HOST:PORT, which are nginx's address in
//                          node-nginx with upstream = tcp
//   --cluster-workers N    fork N workers with the cluster module (node-cluster)

const { DRIVERS } = require('./mariadb');

function positiveInt(name, raw, fallback) {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`${name} must be a positive integer, got "${raw}"`);
  }
  return n;
}

function flagValue(argv, flag) {
  const i = argv.indexOf(flag);
  if (i === -1) return undefined;
  if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
  return argv[i + 1];
}

function loadConfig(env = process.env, argv = []) {
  const dbStrategy = env.DB_STRATEGY || 'pool';
  if (dbStrategy !== 'pool' && dbStrategy !== 'per-request') {
    throw new Error(`DB_STRATEGY must be "pool" or "per-request", got "${dbStrategy}"`);
  }
  const assocImpl = env.ASSOC_IMPL || 'map';
  if (assocImpl !== 'map' && assocImpl !== 'object') {
    throw new Error(`ASSOC_IMPL must be "map" or "object", got "${assocImpl}"`);
  }
  const mysqlDriver = env.MYSQL_DRIVER || 'mysql2';
  if (!DRIVERS.includes(mysqlDriver)) {
    throw new Error(`MYSQL_DRIVER must be one of ${DRIVERS.map((d) => `"${d}"`).join(', ')}, got "${mysqlDriver}"`);
  }
  if (!env.FIXTURES_DIR) {
    throw new Error('FIXTURES_DIR is not set (it must hold demo.txt and random-64k.bin)');
  }
  return {
    host: flagValue(argv, '--host') || env.HOST || '127.0.0.1',
    port: flagValue(argv, '--port') || env.PORT,
    listenSocket: flagValue(argv, '--listen-socket') || env.LISTEN_SOCKET || '',
    clusterWorkers: positiveInt('--cluster-workers', flagValue(argv, '--cluster-workers') || env.CLUSTER_WORKERS, 0),
    fixturesDir: env.FIXTURES_DIR,
    dbStrategy,
    // The assoc workload's container: a Map (the default) or a plain object as in the
    // php-node-micro article.
    assocImpl,
    // The MariaDB driver: mysql2 (the default) or mysql (node-mysql, as the db-html-report
    // article).
    mysqlDriver,
    // mysql2's own default connectionLimit.
    poolSize: positiveInt('POOL_SIZE', env.POOL_SIZE, 10),
    // The listen backlog, Node's own default unless the stack's backlog parameter says more.
    backlog: positiveInt('BACKLOG', env.BACKLOG, 511),
    db: {
      host: env.DB_HOST || '',
      port: Number(env.DB_PORT || 3306),
      socket: env.DB_SOCKET || '',
      user: env.DB_USER || '',
      password: env.DB_PASSWORD || '',
      database: env.DB_NAME || 'stackbench',
    },
    // REDIS_PASSWORD: the per-run requirepass of the Redis stackbench starts (empty: no AUTH).
    redis: { host: env.REDIS_HOST || '', port: Number(env.REDIS_PORT || 6379), password: env.REDIS_PASSWORD || '' },
    memcached: { host: env.MEMCACHED_HOST || '', port: Number(env.MEMCACHED_PORT || 11211) },
  };
}

module.exports = { loadConfig };
