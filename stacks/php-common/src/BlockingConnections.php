<?php
declare(strict_types=1);

namespace Stackbench;

/**
 * Connections for process-per-request PHP (php-fpm, mod_php, the CLI timing script).
 * `per-request` opens and closes a connection for every request; `pool` uses PHP's
 * persistent connections, which is how these SAPIs pool: each worker process keeps one
 * connection per service, so the pool size is the number of worker processes.
 * The environment is read on first use only, so non-data requests never depend on it.
 */
final class BlockingConnections implements Connections
{
    private ?ConnectionFactory $factory = null;
    private bool $persistent = false;

    public function withMysql(callable $work): mixed
    {
        $db = $this->factory()->mysql($this->persistent);
        try {
            return $work($db);
        } finally {
            if (!$this->persistent) {
                $db->close();
            }
        }
    }

    public function withRedis(callable $work): mixed
    {
        $redis = $this->factory()->redis($this->persistent);
        try {
            return $work($redis);
        } finally {
            if (!$this->persistent) {
                $redis->close();
            }
        }
    }

    public function withMemcached(callable $work): mixed
    {
        $memcached = $this->factory()->memcached($this->persistent);
        try {
            return $work($memcached);
        } finally {
            if (!$this->persistent) {
                $memcached->quit();
            }
        }
    }

    private function factory(): ConnectionFactory
    {
        if ($this->factory === null) {
            $config = ServiceConfig::fromEnvironment();
            $this->persistent = $config->strategy === DbStrategy::Pool;
            $this->factory = new ConnectionFactory($config);
        }
        return $this->factory;
    }
}
