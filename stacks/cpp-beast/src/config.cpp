#include "config.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace stackbench {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::string(value) : fallback;
}

unsigned env_unsigned(const char* name, unsigned fallback, unsigned min, unsigned max) {
    const std::string raw = env_or(name, "");
    if (raw.empty()) return fallback;
    char* end = nullptr;
    const unsigned long value = std::strtoul(raw.c_str(), &end, 10);
    if (*end != '\0' || value < min || value > max)
        throw std::runtime_error("environment variable " + std::string(name) + "='" + raw +
                                 "' is not an integer in " + std::to_string(min) + ".." + std::to_string(max));
    return static_cast<unsigned>(value);
}

DbStrategy db_strategy_from_env() {
    const std::string raw = env_or("DB_STRATEGY", "pool");
    if (raw == "pool") return DbStrategy::Pool;
    if (raw == "per-request") return DbStrategy::PerRequest;
    throw std::runtime_error("environment variable DB_STRATEGY='" + raw + "' must be 'pool' or 'per-request'");
}

}  // namespace

Config config_from_env() {
    Config c;
    c.host = env_or("HOST", c.host);
    c.port = env_unsigned("PORT", c.port, 1, 65535);
    c.workers = env_unsigned("WORKERS", c.workers, 1, 1024);
    c.fixtures_dir = env_or("FIXTURES_DIR", "");
    c.db_strategy = db_strategy_from_env();
    c.pool_size = env_unsigned("POOL_SIZE", c.pool_size, 1, 4096);
    c.db.host = env_or("DB_HOST", "");
    c.db.socket = env_or("DB_SOCKET", "");
    c.db.port = env_unsigned("DB_PORT", c.db.port, 1, 65535);
    c.db.user = env_or("DB_USER", "");
    c.db.password = env_or("DB_PASSWORD", "");
    c.db.name = env_or("DB_NAME", "stackbench");
    c.redis.host = env_or("REDIS_HOST", "");
    c.redis.port = env_unsigned("REDIS_PORT", 0, 0, 65535);
    c.redis_password = env_or("REDIS_PASSWORD", "");
    c.memcached.host = env_or("MEMCACHED_HOST", "");
    c.memcached.port = env_unsigned("MEMCACHED_PORT", 0, 0, 65535);
    if (c.fixtures_dir.empty()) throw std::runtime_error("environment variable FIXTURES_DIR is not set");
    return c;
}

}  // namespace stackbench
