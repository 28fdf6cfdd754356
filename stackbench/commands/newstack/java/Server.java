// A hello endpoint for stackbench: it answers GET /hello with "Hello World" on HOST:PORT,
// which stackbench sets (docs/contracts.md sections 1 and 3). The JDK's own HTTP server.
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

public class Server {
    public static void main(String[] args) throws Exception {
        var address = new InetSocketAddress(System.getenv("HOST"), Integer.parseInt(System.getenv("PORT")));
        HttpServer server = HttpServer.create(address, 4096);
        server.createContext("/hello", exchange -> {
            byte[] body = "Hello World".getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.setExecutor(Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors() * 8));
        server.start();
    }
}
