package stackbench.jetty;

import java.util.Optional;

/** MariaDB connection settings from DB_HOST, DB_PORT, DB_SOCKET, DB_USER, DB_PASSWORD, DB_NAME. */
record DbConfig(String jdbcUrl, String user, String password, String description) {

    /**
     * TCP is preferred when DB_HOST is set: it is how JDBC is deployed in production and needs no
     * native code. A unix socket is used only when DB_SOCKET is the sole address given.
     */
    static Optional<DbConfig> fromEnvironment(Env env) {
        String name = env.orDefault("DB_NAME", "stackbench");
        String user = env.orDefault("DB_USER", "root");
        String password = env.orDefault("DB_PASSWORD", "");
        Optional<HostPort> tcp = HostPort.fromEnvironment(env, "DB", 3306);
        if (tcp.isPresent()) {
            return Optional.of(new DbConfig("jdbc:mariadb://" + tcp.get() + "/" + name, user, password, "MariaDB at " + tcp.get()));
        }
        return env.optional("DB_SOCKET").map(socket -> new DbConfig(
                "jdbc:mariadb://localhost/" + name + "?localSocket=" + socket, user, password, "MariaDB at unix socket " + socket));
    }
}
