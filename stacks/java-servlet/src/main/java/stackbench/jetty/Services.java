package stackbench.jetty;

/** The backing services; each connects lazily, so the server starts without any of them. */
final class Services implements AutoCloseable {
    private final Database database;
    private final RedisStore redis;
    private final MemcachedStore memcached;

    Services(AppSettings settings) {
        database = new Database(settings.db(), settings.dbStrategy(), settings.poolSize());
        redis = new RedisStore(settings.redis(), settings.redisPassword(), settings.dbStrategy(), settings.poolSize());
        memcached = new MemcachedStore(settings.memcached(), settings.dbStrategy());
    }

    Database database() {
        return database;
    }

    RedisStore redis() {
        return redis;
    }

    MemcachedStore memcached() {
        return memcached;
    }

    @Override
    public void close() {
        database.close();
        redis.close();
        memcached.close();
    }
}
