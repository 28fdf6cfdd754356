package stackbench.jetty;

/** The handler code of one workload: does the work for every call, nothing cached between calls. */
@FunctionalInterface
interface Workload {
    Reply handle(Query query) throws Exception;
}
