package stackbench.jetty;

/** The request itself is invalid (e.g. n out of range): answered with status 400. */
final class BadRequestException extends RuntimeException {
    BadRequestException(String message) {
        super(message);
    }
}
