package stackbench.jetty;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/** What the workload handlers need, shared by the HTTP server and the script mode. */
record AppSettings(Path fixturesDir, DbStrategy dbStrategy, int poolSize,
                   Optional<DbConfig> db, Optional<HostPort> redis, Optional<String> redisPassword,
                   Optional<HostPort> memcached) {

    /** HikariCP's default maximumPoolSize, used when POOL_SIZE is not given. */
    static final int DEFAULT_POOL_SIZE = 10;

    static AppSettings fromEnvironment(Map<String, String> environment) {
        Env env = new Env(environment);
        Path fixtures = Path.of(env.required("FIXTURES_DIR"));
        if (!Files.isDirectory(fixtures)) {
            throw new IllegalArgumentException("FIXTURES_DIR=" + fixtures + " is not a directory");
        }
        return new AppSettings(
                fixtures,
                DbStrategy.parse(env.orDefault("DB_STRATEGY", "pool")),
                env.intOrDefault("POOL_SIZE", DEFAULT_POOL_SIZE, 1),
                DbConfig.fromEnvironment(env),
                HostPort.fromEnvironment(env, "REDIS", 6379),
                // The per-run `requirepass` of the Redis stackbench starts; empty: no AUTH.
                env.optional("REDIS_PASSWORD"),
                HostPort.fromEnvironment(env, "MEMCACHED", 11211));
    }
}
