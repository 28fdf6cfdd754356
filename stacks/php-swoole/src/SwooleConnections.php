<?php
declare(strict_types=1);

namespace Stackbench\Swoole;

use Stackbench\ConnectionFactory;
use Stackbench\Connections;
use Stackbench\DbStrategy;
use Stackbench\ServiceConfig;
use Stackbench\ServiceUnavailable;
use Swoole\ConnectionPool;

/**
 * Connections for one Swoole worker process, shared by all its coroutines.
 *
 * mysqli (mysqlnd) and phpredis talk through PHP streams, which the server's hook_flags
 * (SWOOLE_HOOK_TCP | SWOOLE_HOOK_UNIX) turn into coroutine sockets: a coroutine waiting
 * for MariaDB or Redis yields and the worker serves other requests meanwhile.
 * libmemcached does its own socket I/O, which Swoole cannot hook, so a memcached get
 * blocks the worker for its loopback round trip (there is no coroutine memcached client
 * in Swoole; this is what Swoole applications using ext-memcached get).
 *
 * `pool`: Swoole\ConnectionPool (a Channel of connections, created lazily up to
 * POOL_SIZE per service per worker), the standard Swoole pattern. PHP's persistent
 * connections cannot be used here: they assume one request at a time per process.
 * `per-request`: a fresh connection for every request, closed afterwards.
 */
final class SwooleConnections implements Connections
{
    /** How long a coroutine waits for a free pooled connection before answering 503. */
    private const POOL_WAIT_S = 5.0;

    private ?ConnectionFactory $factory = null;
    private bool $pooled = false;
    private int $poolSize = 1;
    /** @var array<string, ConnectionPool> by service */
    private array $pools = [];

    public function withMysql(callable $work): mixed
    {
        return $this->lend('mysql', static fn (ConnectionFactory $f) => $f->mysql(false),
            static fn (\mysqli $db) => $db->close(), $work);
    }

    public function withRedis(callable $work): mixed
    {
        return $this->lend('redis', static fn (ConnectionFactory $f) => $f->redis(false),
            static fn (\Redis $redis) => $redis->close(), $work);
    }

    public function withMemcached(callable $work): mixed
    {
        return $this->lend('memcached', static fn (ConnectionFactory $f) => $f->memcached(false),
            static fn (\Memcached $memcached) => $memcached->quit(), $work);
    }

    /**
     * Runs `$work` with a connection of `$service` made by `$open`, then returns it to
     * the pool, or closes it with `$close` (per-request strategy, or after an error:
     * a connection that saw an error is not trusted with the next request).
     */
    private function lend(string $service, callable $open, callable $close, callable $work): mixed
    {
        $factory = $this->factory();
        if (!$this->pooled) {
            $connection = $open($factory);
            try {
                return $work($connection);
            } finally {
                $close($connection);
            }
        }

        $pool = $this->pools[$service] ??= new ConnectionPool(static fn () => $open($factory), $this->poolSize);
        $connection = $pool->get(self::POOL_WAIT_S);
        if ($connection === false) {
            throw new ServiceUnavailable("no pooled $service connection became free within "
                . self::POOL_WAIT_S . " s (pool_size={$this->poolSize} per worker)");
        }
        try {
            $result = $work($connection);
        } catch (\Throwable $e) {
            $this->discard($pool, $connection, $close);
            throw $e;
        }
        $pool->put($connection);
        return $result;
    }

    private function discard(ConnectionPool $pool, mixed $connection, callable $close): void
    {
        try {
            $close($connection);
        } catch (\Throwable) {
            // Already broken: nothing left to close.
        }
        try {
            // put(null) frees the slot and opens a replacement connection.
            $pool->put(null);
        } catch (\Throwable) {
            // The service is down; the freed slot is refilled by the next get().
        }
    }

    private function factory(): ConnectionFactory
    {
        if ($this->factory === null) {
            $config = ServiceConfig::fromEnvironment();
            $this->pooled = $config->strategy === DbStrategy::Pool;
            $this->poolSize = max(1, $config->poolSize);
            $this->factory = new ConnectionFactory($config);
        }
        return $this->factory;
    }
}
