// The endpoint table: which handler serves a path, and where it must run.
#pragma once

#include <string>
#include <string_view>

#include "config.hpp"
#include "http_types.hpp"

namespace stackbench {

enum class Execution {
    EventLoop,     // CPU or local-file work: run inline on the connection's event-loop thread
    BlockingPool,  // blocking data-service calls: run on the blocking-call thread pool
};

using Handler = Response (*)(const Request&, const Config&);

struct Route {
    Execution execution;
    Handler handler;
};

// The route for a request path, or nullptr (404).
const Route* find_route(std::string_view path);

// The request path that serves workload `name` with query `query` (for the script mode);
// empty when the workload is unknown.
std::string workload_path(std::string_view name, std::string_view query);

// Calls the handler, turning exceptions into 503 (service unavailable) or 500 responses that name
// the cause.
Response run_route(const Route& route, const Request& request, const Config& config);

}  // namespace stackbench
