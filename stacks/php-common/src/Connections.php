<?php
declare(strict_types=1);

namespace Stackbench;

/**
 * Lends a connection to a piece of work and takes it back afterwards. How connections
 * are made and kept (one per request, persistent per process, a coroutine pool) is the
 * server's business; the workloads only see this interface.
 */
interface Connections
{
    /** @template T @param callable(\mysqli): T $work @return T */
    public function withMysql(callable $work): mixed;

    /** @template T @param callable(\Redis): T $work @return T */
    public function withRedis(callable $work): mixed;

    /** @template T @param callable(\Memcached): T $work @return T */
    public function withMemcached(callable $work): mixed;
}
