package stackbench.jetty;

import java.time.Duration;
import java.util.Optional;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.exceptions.JedisException;

/** Redis through Jedis: a new connection per request, or a JedisPool of POOL_SIZE connections. */
final class RedisStore implements AutoCloseable {
    private final Optional<HostPort> address;
    /** Sent as AUTH when a connection opens (REDIS_PASSWORD); none when empty. */
    private final JedisClientConfig clientConfig;
    private final DbStrategy strategy;
    private final int poolSize;
    private volatile JedisPool pool;

    RedisStore(Optional<HostPort> address, Optional<String> password, DbStrategy strategy, int poolSize) {
        this.address = address;
        this.clientConfig = DefaultJedisClientConfig.builder().password(password.orElse(null)).build();
        this.strategy = strategy;
        this.poolSize = poolSize;
    }

    String get(String key) {
        HostPort redis = address.orElseThrow(() -> new ServiceUnavailableException(
                "Redis is not configured: set REDIS_HOST and REDIS_PORT"));
        try (Jedis connection = strategy == DbStrategy.PER_REQUEST
                ? new Jedis(hostAndPort(redis), clientConfig) : pool(redis).getResource()) {
            return connection.get(key);
        } catch (JedisException e) {
            // Connection failures and "could not get a resource from the pool" both land here.
            throw new ServiceUnavailableException("Redis at " + redis + " failed", e);
        }
    }

    private JedisPool pool(HostPort redis) {
        JedisPool current = pool;
        if (current == null) {
            synchronized (this) {
                current = pool;
                if (current == null) {
                    current = new JedisPool(poolConfig(), hostAndPort(redis), clientConfig);
                    pool = current;
                }
            }
        }
        return current;
    }

    private static HostAndPort hostAndPort(HostPort redis) {
        return new HostAndPort(redis.host(), redis.port());
    }

    private JedisPoolConfig poolConfig() {
        JedisPoolConfig config = new JedisPoolConfig();
        // Fixed size like the database pool: idle connections are kept, never churned under load.
        config.setMaxTotal(poolSize);
        config.setMaxIdle(poolSize);
        config.setMinIdle(poolSize);
        // Wait for a free connection as long as HikariCP does (30 s) instead of forever.
        config.setMaxWait(Duration.ofSeconds(30));
        return config;
    }

    @Override
    public void close() {
        JedisPool current = pool;
        if (current != null) {
            current.close();
        }
    }
}
