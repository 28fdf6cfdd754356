package stackbench.jetty;

import java.io.IOException;
import java.io.PrintStream;

/**
 * Standalone timing (docs/contracts.md section 5): {@code script WORKLOAD QUERY ITERATIONS} runs the
 * workload's handler ITERATIONS times in this process and prints the last body to stdout.
 */
final class ScriptRunner {
    private ScriptRunner() {}

    /** Returns the process exit code: 0 done, 1 the workload failed, 2 bad arguments. */
    static int run(String[] args, AppSettings settings) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: script WORKLOAD QUERY ITERATIONS (e.g. script sha256 n=1000 1000)");
            return 2;
        }
        long iterations = parseIterations(args[2]);
        if (iterations < 1) {
            System.err.println("ITERATIONS must be an integer >= 1, got '" + args[2] + "'");
            return 2;
        }
        try (Services services = new Services(settings)) {
            Routes routes = new Routes(settings, services);
            Route route = routes.byName(args[0]).orElse(null);
            if (route == null) {
                System.err.println("unknown workload '" + args[0] + "'");
                return 2;
            }
            Query query = Query.parse(args[1]);
            Reply reply = null;
            for (long i = 0; i < iterations; i++) {
                reply = Routes.invoke(route, query);
                if (reply.status() != 200) {
                    break; // a failure will not heal by repeating it
                }
            }
            return print(reply);
        }
    }

    private static int print(Reply reply) throws IOException {
        PrintStream target = reply.status() == 200 ? System.out : System.err;
        target.write(reply.body());
        target.flush();
        return reply.status() == 200 ? 0 : 1;
    }

    private static long parseIterations(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
