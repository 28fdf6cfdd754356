package stackbench.jetty;

/** Who runs the servlet code: Jetty's pooled platform threads, or one virtual thread per task (JDK >= 21). */
enum ThreadModel {
    PLATFORM, VIRTUAL;

    static ThreadModel parse(String value) {
        switch (value) {
            case "platform": return PLATFORM;
            case "virtual": return VIRTUAL;
            default: throw new IllegalArgumentException("thread model '" + value + "' (from -Dstackbench.threadModel or THREAD_MODEL) must be 'platform' or 'virtual'");
        }
    }
}
