package stackbench.jetty;

/**
 * A workload and where it is served.
 *
 * @param name      the workload name of docs/contracts.md (also the script-mode argument)
 * @param pathSpec  the servlet mapping, e.g. {@code /hello} or {@code /data/*}
 * @param pathParam for a {@code /x/*} mapping, the query parameter that the rest of the path fills
 */
record Route(String name, String pathSpec, String pathParam, Workload workload) {

    static Route exact(String name, Workload workload) {
        return new Route(name, "/" + name, null, workload);
    }

    static Route withPathParam(String name, String pathParam, Workload workload) {
        return new Route(name, "/" + name + "/*", pathParam, workload);
    }
}
