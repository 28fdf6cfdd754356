<?php
declare(strict_types=1);

namespace Stackbench;

/**
 * Opens connections with the standard PHP clients: mysqli (mysqlnd), phpredis, and the
 * Memcached extension (libmemcached). `$persistent` selects PHP's own pooling: mysqli's
 * `p:` hosts, Redis::pconnect and a persistent Memcached id keep one connection per
 * worker process alive across requests.
 */
final class ConnectionFactory
{
    private const CONNECT_TIMEOUT_S = 2;

    public function __construct(private readonly ServiceConfig $config)
    {
    }

    public function mysql(bool $persistent): \mysqli
    {
        $c = $this->config;
        $c->requireMysql();
        // TCP when DB_HOST is given (the transport every stack shares); the unix socket otherwise.
        $host = $c->dbHost ?? 'localhost';
        $socket = $c->dbHost === null ? $c->dbSocket : null;
        $where = $socket ?? "$host:" . ($c->dbPort ?? 3306);
        $db = mysqli_init();
        // The charset travels in the handshake, so no extra SET NAMES round trip per connection.
        $db->options(MYSQLI_SET_CHARSET_NAME, 'utf8mb4');
        $db->options(MYSQLI_OPT_CONNECT_TIMEOUT, self::CONNECT_TIMEOUT_S);
        try {
            $db->real_connect(
                ($persistent ? 'p:' : '') . $host,
                $c->dbUser,
                $c->dbPassword,
                $c->dbName,
                $c->dbPort ?? 3306,
                $socket,
            );
        } catch (\mysqli_sql_exception $e) {
            throw new ServiceUnavailable("MariaDB at $where is unavailable: " . $e->getMessage(), 0, $e);
        }
        return $db;
    }

    public function redis(bool $persistent): \Redis
    {
        $c = $this->config;
        $c->requireRedis();
        $redis = new \Redis();
        // With a password in the connect context, phpredis sends AUTH when it opens the
        // connection (and, for a reused persistent one, in the same round trip as its
        // liveness check), not as an extra round trip per request.
        $context = $c->redisPassword === null ? null : ['auth' => $c->redisPassword];
        try {
            $ok = $persistent
                ? $redis->pconnect($c->redisHost, $c->redisPort, self::CONNECT_TIMEOUT_S, null, 0, 0, $context)
                : $redis->connect($c->redisHost, $c->redisPort, self::CONNECT_TIMEOUT_S, null, 0, 0, $context);
        } catch (\RedisException $e) {
            throw new ServiceUnavailable("Redis at {$c->redisHost}:{$c->redisPort} is unavailable: "
                . $e->getMessage(), 0, $e);
        }
        if (!$ok) {
            throw new ServiceUnavailable("Redis at {$c->redisHost}:{$c->redisPort} is unavailable");
        }
        return $redis;
    }

    public function memcached(bool $persistent): \Memcached
    {
        $c = $this->config;
        $c->requireMemcached();
        $persistentId = $persistent ? "stackbench-{$c->memcachedHost}:{$c->memcachedPort}" : null;
        $memcached = new \Memcached($persistentId);
        // A persistent instance keeps its server list across requests: configure it only once.
        if ($memcached->getServerList() === []) {
            $memcached->setOptions([
                \Memcached::OPT_CONNECT_TIMEOUT => self::CONNECT_TIMEOUT_S * 1000,
                // Request/response traffic: do not let Nagle hold back the small GET packets.
                \Memcached::OPT_TCP_NODELAY => true,
            ]);
            $memcached->addServer($c->memcachedHost, $c->memcachedPort);
        }
        return $memcached;
    }
}
