package stackbench.jetty;

import java.util.concurrent.Executor;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.VirtualThreads;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Embedded Jetty 12: one HTTP/1.1 connector on HOST:PORT, one servlet per workload. */
final class JettyServer {
    private static final Logger LOG = LoggerFactory.getLogger(JettyServer.class);
    /** One acceptor thread is plenty on loopback; the selectors do the I/O. */
    private static final int ACCEPTORS = 1;
    /** listen(2) backlog: the JVM default of 50 drops SYNs when a load generator opens hundreds of connections at once. */
    private static final int ACCEPT_QUEUE = 1024;
    /** SIGTERM must stop the server promptly; in-flight requests get this long to finish. */
    private static final long STOP_TIMEOUT_MS = 2000;

    private JettyServer() {}

    static void run(ServerSettings settings, AppSettings app) throws Exception {
        Services services = new Services(app);
        Server server = new Server(threadPool(settings));
        server.addConnector(connector(server, settings));
        server.setHandler(servlets(new Routes(app, services)));
        // The JVM runs shutdown hooks on SIGTERM: stop Jetty, then close the connection pools.
        server.setStopAtShutdown(true);
        server.setStopTimeout(STOP_TIMEOUT_MS);
        Runtime.getRuntime().addShutdownHook(new Thread(services::close, "close-services"));
        server.start();
        LOG.info("serving on http://{}:{} with {} threads ({}), {} selectors", settings.host(), settings.port(),
                settings.threads(), settings.threadModel(), settings.workers());
        server.join();
    }

    /**
     * Thread-per-request: a static pool (min = max, like a static php-fpm pool) so no thread is
     * created while load is measured. In the virtual model the pool keeps only Jetty's own
     * platform threads (selectors, acceptor) and each blocking servlet call runs on a fresh
     * virtual thread.
     */
    private static QueuedThreadPool threadPool(ServerSettings settings) {
        QueuedThreadPool pool = new QueuedThreadPool(settings.threads(), settings.threads());
        pool.setName("jetty");
        if (settings.threadModel() == ThreadModel.VIRTUAL) {
            pool.setVirtualThreadsExecutor(virtualThreadsExecutor());
        }
        return pool;
    }

    /** Jetty reaches the JDK 21 API reflectively, so this class still compiles and loads on JDK 17. */
    private static Executor virtualThreadsExecutor() {
        if (!VirtualThreads.areSupported()) {
            throw new IllegalStateException("THREAD_MODEL=virtual needs a JDK >= 21; this JVM is Java "
                    + Runtime.version() + " (" + System.getProperty("java.home") + ")");
        }
        return VirtualThreads.getNamedVirtualThreadsExecutor("jetty-vt");
    }

    private static ServerConnector connector(Server server, ServerSettings settings) {
        HttpConfiguration http = new HttpConfiguration();
        // TechEmpower rules: Server and Date headers on every response (Jetty omits Date by default).
        http.setSendServerVersion(true);
        http.setSendDateHeader(true);
        http.setSendXPoweredBy(false);
        ServerConnector connector = new ServerConnector(server, ACCEPTORS, settings.workers(), new HttpConnectionFactory(http));
        connector.setHost(settings.host());
        connector.setPort(settings.port());
        connector.setAcceptQueueSize(ACCEPT_QUEUE);
        return connector;
    }

    /** No sessions, no security, no request log: only the workload servlets. */
    private static ServletContextHandler servlets(Routes routes) {
        ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        context.setContextPath("/");
        for (Route route : routes.all()) {
            context.addServlet(new ServletHolder(route.name(), new WorkloadServlet(route)), route.pathSpec());
        }
        return context;
    }
}
