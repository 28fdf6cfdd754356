package stackbench.jetty;

import java.nio.charset.StandardCharsets;

/** A workload's answer, independent of HTTP so the script mode can print the same body. */
record Reply(int status, String contentType, byte[] body) {
    static final String TEXT = "text/plain; charset=utf-8";
    static final String HTML = "text/html; charset=utf-8";
    static final String JSON = "application/json";

    static Reply text(String body) {
        return new Reply(200, TEXT, body.getBytes(StandardCharsets.UTF_8));
    }

    static Reply html(String body) {
        return new Reply(200, HTML, body.getBytes(StandardCharsets.UTF_8));
    }

    static Reply json(byte[] body) {
        return new Reply(200, JSON, body);
    }

    static Reply error(int status, String message) {
        return new Reply(status, TEXT, (message + "\n").getBytes(StandardCharsets.UTF_8));
    }
}
