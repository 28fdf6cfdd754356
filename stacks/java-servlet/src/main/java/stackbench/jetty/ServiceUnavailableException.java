package stackbench.jetty;

/** A backing service is not configured or cannot be reached: answered with status 503. */
final class ServiceUnavailableException extends RuntimeException {
    ServiceUnavailableException(String message) {
        super(message);
    }

    ServiceUnavailableException(String message, Throwable cause) {
        super(message + ": " + cause.getMessage(), cause);
    }
}
