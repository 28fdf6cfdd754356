package stackbench.jetty;

import java.util.Optional;

/** A TCP service address from a *_HOST / *_PORT pair of environment variables. */
record HostPort(String host, int port) {

    /** Empty when the host variable is absent: the service is simply not configured for this run. */
    static Optional<HostPort> fromEnvironment(Env env, String prefix, int defaultPort) {
        return env.optional(prefix + "_HOST")
                .map(host -> new HostPort(host, env.intOrDefault(prefix + "_PORT", defaultPort, 1)));
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
