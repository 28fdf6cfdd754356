package stackbench.jetty;

/** Connection strategy for MariaDB, Redis and memcached (param db_strategy, env DB_STRATEGY). */
enum DbStrategy {
    /** Open a fresh connection for every request and close it afterwards. */
    PER_REQUEST,
    /** Borrow from a long-lived pool of POOL_SIZE connections (HikariCP, JedisPool). */
    POOL;

    static DbStrategy parse(String value) {
        switch (value) {
            case "per-request": return PER_REQUEST;
            case "pool": return POOL;
            default: throw new IllegalArgumentException("DB_STRATEGY=" + value + " must be 'per-request' or 'pool'");
        }
    }
}
