package stackbench.jetty;

import java.util.Arrays;

/**
 * Entry point of server.jar.
 * <ul>
 *   <li>no arguments: serve the workloads over HTTP with embedded Jetty;</li>
 *   <li>{@code script WORKLOAD QUERY ITERATIONS}: the standalone timing mode of
 *       docs/contracts.md section 5, running the same handler code without HTTP.</li>
 * </ul>
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            JettyServer.run(ServerSettings.fromEnvironment(System.getenv()), AppSettings.fromEnvironment(System.getenv()));
        } else if (args[0].equals("script")) {
            System.exit(ScriptRunner.run(Arrays.copyOfRange(args, 1, args.length), AppSettings.fromEnvironment(System.getenv())));
        } else {
            System.err.println("usage: java -jar server.jar [script WORKLOAD QUERY ITERATIONS]; got: " + String.join(" ", args));
            System.exit(2);
        }
    }
}
