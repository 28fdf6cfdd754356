// HTTP/1.1 server on Boost.Beast: WORKERS event-loop threads, each with its own io_context and
// its own SO_REUSEPORT acceptor, plus a thread pool for blocking data-service calls.
#pragma once

#include "config.hpp"

namespace stackbench {

// Serves until SIGTERM or SIGINT, then returns 0. Throws when the port cannot be bound.
int run_server(const Config& config);

}  // namespace stackbench
