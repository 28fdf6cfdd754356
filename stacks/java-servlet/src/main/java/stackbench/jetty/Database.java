package stackbench.jetty;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;

/**
 * MariaDB connections through Connector/J: a fresh DriverManager connection per request, or a
 * HikariCP pool created on first use (so the server starts even when MariaDB is absent).
 */
final class Database implements AutoCloseable {
    private final Optional<DbConfig> config;
    private final DbStrategy strategy;
    private final int poolSize;
    private volatile HikariDataSource pool;

    Database(Optional<DbConfig> config, DbStrategy strategy, int poolSize) {
        this.config = config;
        this.strategy = strategy;
        this.poolSize = poolSize;
    }

    /** A connection the caller must close (closing a pooled one returns it to the pool). */
    Connection connect() {
        DbConfig db = config.orElseThrow(() -> new ServiceUnavailableException(
                "MariaDB is not configured: set DB_HOST/DB_PORT or DB_SOCKET (and DB_USER, DB_PASSWORD, DB_NAME)"));
        try {
            if (strategy == DbStrategy.PER_REQUEST) {
                return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
            }
            return pool(db).getConnection();
        } catch (SQLException | RuntimeException e) {
            throw new ServiceUnavailableException("cannot connect to " + db.description(), e);
        }
    }

    private HikariDataSource pool(DbConfig db) {
        HikariDataSource current = pool;
        if (current == null) {
            synchronized (this) {
                current = pool;
                if (current == null) {
                    current = new HikariDataSource(poolConfig(db));
                    pool = current;
                }
            }
        }
        return current;
    }

    private HikariConfig poolConfig(DbConfig db) {
        HikariConfig hikari = new HikariConfig();
        hikari.setPoolName("stackbench-mariadb");
        hikari.setJdbcUrl(db.jdbcUrl());
        hikari.setUsername(db.user());
        hikari.setPassword(db.password());
        // HikariCP's advice: a fixed-size pool (minimumIdle = maximumPoolSize), so no connection
        // is opened or closed while load is measured.
        hikari.setMaximumPoolSize(poolSize);
        hikari.setMinimumIdle(poolSize);
        return hikari;
    }

    @Override
    public void close() {
        HikariDataSource current = pool;
        if (current != null) {
            current.close();
        }
    }
}
