<?php
declare(strict_types=1);

namespace Stackbench;

/** The connection strategy param `db_strategy` (env DB_STRATEGY), docs/contracts.md section 4. */
enum DbStrategy: string
{
    case PerRequest = 'per-request';
    case Pool = 'pool';
}

/**
 * Service addresses from the environment (docs/contracts.md sections 3 and 4). A missing
 * service is not an error here: only a request that needs it fails, with a 503.
 */
final class ServiceConfig
{
    public function __construct(
        public readonly DbStrategy $strategy,
        public readonly int $poolSize,
        public readonly ?string $dbHost,
        public readonly ?int $dbPort,
        public readonly ?string $dbSocket,
        public readonly ?string $dbUser,
        public readonly string $dbPassword,
        public readonly ?string $dbName,
        public readonly ?string $redisHost,
        public readonly ?int $redisPort,
        /** REDIS_PASSWORD: the per-run `requirepass` of stackbench's Redis; null: no AUTH. */
        public readonly ?string $redisPassword,
        public readonly ?string $memcachedHost,
        public readonly ?int $memcachedPort,
    ) {
    }

    public static function fromEnvironment(): self
    {
        $strategyName = self::env('DB_STRATEGY') ?? DbStrategy::Pool->value;
        $strategy = DbStrategy::tryFrom($strategyName)
            ?? throw new \RuntimeException("DB_STRATEGY must be 'per-request' or 'pool', got '$strategyName'");
        return new self(
            strategy: $strategy,
            poolSize: self::envInt('POOL_SIZE') ?? 16,
            dbHost: self::env('DB_HOST'),
            dbPort: self::envInt('DB_PORT'),
            dbSocket: self::env('DB_SOCKET'),
            dbUser: self::env('DB_USER'),
            dbPassword: self::env('DB_PASSWORD') ?? '',
            dbName: self::env('DB_NAME'),
            redisHost: self::env('REDIS_HOST'),
            redisPort: self::envInt('REDIS_PORT'),
            redisPassword: self::env('REDIS_PASSWORD'),
            memcachedHost: self::env('MEMCACHED_HOST'),
            memcachedPort: self::envInt('MEMCACHED_PORT'),
        );
    }

    public function requireMysql(): void
    {
        if ($this->dbUser === null || $this->dbName === null
            || ($this->dbHost === null && $this->dbSocket === null)) {
            throw new ServiceUnavailable(
                'MariaDB is not configured: set DB_HOST/DB_PORT (or DB_SOCKET), DB_USER and DB_NAME'
            );
        }
    }

    public function requireRedis(): void
    {
        if ($this->redisHost === null || $this->redisPort === null) {
            throw new ServiceUnavailable('Redis is not configured: set REDIS_HOST and REDIS_PORT');
        }
    }

    public function requireMemcached(): void
    {
        if ($this->memcachedHost === null || $this->memcachedPort === null) {
            throw new ServiceUnavailable('memcached is not configured: set MEMCACHED_HOST and MEMCACHED_PORT');
        }
    }

    private static function env(string $name): ?string
    {
        $value = getenv($name);
        return ($value === false || $value === '') ? null : $value;
    }

    private static function envInt(string $name): ?int
    {
        $value = self::env($name);
        if ($value === null) {
            return null;
        }
        if (preg_match('/^[0-9]{1,9}$/D', $value) !== 1) {
            throw new \RuntimeException("$name must be a positive decimal integer, got '$value'");
        }
        return (int) $value;
    }
}
