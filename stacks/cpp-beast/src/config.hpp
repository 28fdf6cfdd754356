// Everything the process learns from its environment (docs/contracts.md sections 3 and 4),
// read once at start-up into an immutable struct.
#pragma once

#include <optional>
#include <string>

namespace stackbench {

enum class DbStrategy { PerRequest, Pool };

struct DbConfig {
    std::string host, socket, user, password, name;
    unsigned port = 3306;
    bool configured() const { return !host.empty() || !socket.empty(); }
};

struct ServiceAddress {
    std::string host;
    unsigned port = 0;
    bool configured() const { return !host.empty() && port != 0; }
};

struct Config {
    std::string host = "127.0.0.1";
    unsigned port = 8080;
    unsigned workers = 1;
    std::string fixtures_dir;
    DbStrategy db_strategy = DbStrategy::Pool;
    unsigned pool_size = 8;  // threads (each with its own connections) that run blocking client calls
    DbConfig db;
    ServiceAddress redis, memcached;
    std::string redis_password;  // REDIS_PASSWORD: sent as AUTH on every new connection; empty: none
};

// Throws std::runtime_error naming the variable at fault.
Config config_from_env();

}  // namespace stackbench
