package stackbench.jetty;

import java.util.Map;

/**
 * How the HTTP server runs, parsed once from the environment of docs/contracts.md section 3.
 *
 * @param workers     Jetty NIO selector threads (param workers, one per server core by default)
 * @param threads     size of Jetty's QueuedThreadPool (param threads)
 * @param threadModel platform threads, or virtual threads for the blocking servlet code: the JVM
 *                    flag -Dstackbench.threadModel (fixed in a stack's command line), else the
 *                    environment variable THREAD_MODEL, else platform
 */
record ServerSettings(String host, int port, int workers, int threads, ThreadModel threadModel) {

    static ServerSettings fromEnvironment(Map<String, String> environment) {
        Env env = new Env(environment);
        return new ServerSettings(
                env.orDefault("HOST", "127.0.0.1"),
                env.requiredInt("PORT", 1),
                env.intOrDefault("WORKERS", Math.max(1, Runtime.getRuntime().availableProcessors()), 1),
                env.intOrDefault("THREADS", 200, 1),
                ThreadModel.parse(System.getProperty("stackbench.threadModel", env.orDefault("THREAD_MODEL", "platform"))));
    }
}
