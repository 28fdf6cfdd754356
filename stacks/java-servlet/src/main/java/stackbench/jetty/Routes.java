package stackbench.jetty;

import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Every workload of docs/contracts.md section 1, and the one place that turns failures into statuses. */
final class Routes {
    private static final Logger LOG = LoggerFactory.getLogger(Routes.class);

    private final List<Route> routes;

    Routes(AppSettings settings, Services services) {
        CpuWorkloads cpu = new CpuWorkloads(settings.fixturesDir());
        DataWorkloads data = new DataWorkloads(services);
        TechEmpowerWorkloads techEmpower = new TechEmpowerWorkloads(services.database());
        routes = List.of(
                Route.exact("hello", cpu::hello),
                Route.withPathParam("data", "n", cpu::data),
                Route.exact("concat", cpu::concat),
                Route.exact("add", cpu::add),
                Route.exact("array", cpu::array),
                Route.exact("assoc", cpu::assoc),
                Route.exact("readfile", cpu::readfile),
                Route.exact("sha256", cpu::sha256),
                Route.exact("db-report", data::dbReport),
                Route.exact("mysql-row", data::mysqlRow),
                Route.exact("redis-get", data::redisGet),
                Route.exact("memcache-get", data::memcacheGet),
                Route.exact("json", techEmpower::json),
                Route.exact("plaintext", techEmpower::plaintext),
                Route.exact("db", techEmpower::db),
                Route.exact("queries", techEmpower::queries),
                Route.exact("fortunes", techEmpower::fortunes),
                Route.exact("updates", techEmpower::updates));
    }

    List<Route> all() {
        return routes;
    }

    Optional<Route> byName(String name) {
        return routes.stream().filter(route -> route.name().equals(name)).findFirst();
    }

    /** Runs the workload; a bad parameter is a 400, a missing service a 503, anything else a 500. */
    static Reply invoke(Route route, Query query) {
        try {
            return route.workload().handle(query);
        } catch (BadRequestException e) {
            return Reply.error(400, e.getMessage());
        } catch (ServiceUnavailableException e) {
            return Reply.error(503, route.name() + ": " + e.getMessage());
        } catch (Exception e) {
            LOG.warn("{} failed", route.name(), e);
            return Reply.error(500, route.name() + " failed: " + e);
        }
    }
}
