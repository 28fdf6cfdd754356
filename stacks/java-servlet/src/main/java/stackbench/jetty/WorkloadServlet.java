package stackbench.jetty;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** Serves one workload: the request becomes a {@link Query}, the {@link Reply} becomes the response. */
final class WorkloadServlet extends HttpServlet {
    private final transient Route route;

    WorkloadServlet(Route route) {
        this.route = route;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Reply reply = Routes.invoke(route, query(request));
        response.setStatus(reply.status());
        response.setContentType(reply.contentType());
        response.setContentLength(reply.body().length);
        response.getOutputStream().write(reply.body());
    }

    private Query query(HttpServletRequest request) {
        Query query = new Query(request::getParameter);
        if (route.pathParam() == null) {
            return query;
        }
        // /data/{n}: the rest of the path ("/123") is the parameter's value.
        String pathInfo = request.getPathInfo();
        String value = pathInfo == null || pathInfo.length() < 2 ? "" : pathInfo.substring(1);
        return query.with(route.pathParam(), value);
    }
}
