package stackbench.jetty;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;

/**
 * memcached through spymemcached. With the pool strategy one client is shared by all threads:
 * spymemcached multiplexes every caller over one non-blocking connection (its intended production
 * use), so POOL_SIZE does not apply. Per-request builds and shuts down a client for each request.
 */
final class MemcachedStore implements AutoCloseable {
    static {
        // Route spymemcached's own logger through SLF4J, configured in jetty-logging.properties.
        System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SLF4JLogger");
    }

    /**
     * One server, so there is nowhere to redistribute to: Retry keeps an operation queued for
     * that server while a new connection is still being established (the per-request case)
     * instead of logging a redistribution warning for each request.
     */
    private static final ConnectionFactory CONNECTIONS = new ConnectionFactoryBuilder()
            .setFailureMode(FailureMode.Retry)
            .build();

    private final Optional<HostPort> address;
    private final DbStrategy strategy;
    private volatile MemcachedClient shared;

    MemcachedStore(Optional<HostPort> address, DbStrategy strategy) {
        this.address = address;
        this.strategy = strategy;
    }

    Object get(String key) {
        HostPort memcached = address.orElseThrow(() -> new ServiceUnavailableException(
                "memcached is not configured: set MEMCACHED_HOST and MEMCACHED_PORT"));
        if (strategy == DbStrategy.POOL) {
            return get(sharedClient(memcached), memcached, key);
        }
        MemcachedClient client = connect(memcached);
        try {
            return get(client, memcached, key);
        } finally {
            client.shutdown();
        }
    }

    private static Object get(MemcachedClient client, HostPort memcached, String key) {
        try {
            return client.get(key);
        } catch (RuntimeException e) {
            // spymemcached reports an unreachable server as an operation timeout.
            throw new ServiceUnavailableException("cannot reach memcached at " + memcached, e);
        }
    }

    private MemcachedClient sharedClient(HostPort memcached) {
        MemcachedClient current = shared;
        if (current == null) {
            synchronized (this) {
                current = shared;
                if (current == null) {
                    current = connect(memcached);
                    shared = current;
                }
            }
        }
        return current;
    }

    private static MemcachedClient connect(HostPort memcached) {
        try {
            return new MemcachedClient(CONNECTIONS, List.of(new InetSocketAddress(memcached.host(), memcached.port())));
        } catch (IOException e) {
            throw new ServiceUnavailableException("cannot connect to memcached at " + memcached, e);
        }
    }

    @Override
    public void close() {
        MemcachedClient current = shared;
        if (current != null) {
            current.shutdown();
        }
    }
}
