#include "data_clients.hpp"

#include <sys/time.h>

#include <cstdlib>
#include <memory>

namespace stackbench {
namespace {

constexpr unsigned kTimeoutSeconds = 5;  // a stalled service answers 503/500 instead of hanging a pool thread

}  // namespace

MysqlTraits::Handle* MysqlTraits::connect(const Config& config) {
    const DbConfig& db = config.db;
    if (!db.configured()) throw ServiceError(503, "MariaDB is not configured: set DB_HOST/DB_PORT or DB_SOCKET");
    MYSQL* conn = mysql_init(nullptr);
    if (!conn) throw ServiceError(503, "MariaDB: mysql_init failed (out of memory)");
    const unsigned timeout = kTimeoutSeconds;
    mysql_options(conn, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(conn, MYSQL_OPT_READ_TIMEOUT, &timeout);
    mysql_options(conn, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
    mysql_options(conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");  // fortunes hold non-ASCII text
    const bool use_socket = !db.socket.empty();
    if (!mysql_real_connect(conn, use_socket ? nullptr : db.host.c_str(), db.user.c_str(), db.password.c_str(),
                            db.name.c_str(), use_socket ? 0 : db.port, use_socket ? db.socket.c_str() : nullptr, 0)) {
        const std::string message = std::string("MariaDB connect failed: ") + mysql_error(conn);
        mysql_close(conn);
        throw ServiceError(503, message);
    }
    return conn;
}

void MysqlTraits::close(Handle* conn) { mysql_close(conn); }

RedisTraits::Handle* RedisTraits::connect(const Config& config) {
    if (!config.redis.configured()) throw ServiceError(503, "Redis is not configured: set REDIS_HOST and REDIS_PORT");
    const timeval timeout{kTimeoutSeconds, 0};
    redisContext* ctx = redisConnectWithTimeout(config.redis.host.c_str(), static_cast<int>(config.redis.port), timeout);
    if (!ctx) throw ServiceError(503, "Redis: cannot allocate a context");
    if (ctx->err) {
        const std::string message = std::string("Redis connect failed: ") + ctx->errstr;
        redisFree(ctx);
        throw ServiceError(503, message);
    }
    redisSetTimeout(ctx, timeout);
    if (!config.redis_password.empty()) {
        std::unique_ptr<redisReply, void (*)(void*)> reply(
            static_cast<redisReply*>(redisCommand(ctx, "AUTH %b", config.redis_password.data(),
                                                  config.redis_password.size())),
            freeReplyObject);
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            const std::string message = std::string("Redis AUTH failed: ") + (reply ? reply->str : ctx->errstr);
            redisFree(ctx);
            throw ServiceError(503, message);
        }
    }
    return ctx;
}

void RedisTraits::close(Handle* ctx) { redisFree(ctx); }

MemcachedTraits::Handle* MemcachedTraits::connect(const Config& config) {
    if (!config.memcached.configured())
        throw ServiceError(503, "memcached is not configured: set MEMCACHED_HOST and MEMCACHED_PORT");
    memcached_st* memc = memcached_create(nullptr);
    if (!memc) throw ServiceError(503, "memcached: cannot allocate a client");
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, kTimeoutSeconds * 1000);
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, kTimeoutSeconds * 1000);
    const memcached_return_t rc =
        memcached_server_add(memc, config.memcached.host.c_str(), static_cast<in_port_t>(config.memcached.port));
    if (rc != MEMCACHED_SUCCESS) {
        const std::string message = std::string("memcached server_add failed: ") + memcached_strerror(memc, rc);
        memcached_free(memc);
        throw ServiceError(503, message);
    }
    return memc;  // libmemcached connects on first use
}

void MemcachedTraits::close(Handle* memc) { memcached_free(memc); }

void mysql_exec(MysqlLease& lease, const std::string& sql) {
    if (mysql_real_query(lease.get(), sql.data(), sql.size()) != 0) {
        lease.broken();
        throw ServiceError(500, "MariaDB query '" + sql + "' failed: " + mysql_error(lease.get()));
    }
}

MysqlResult mysql_select(MysqlLease& lease, const std::string& sql) {
    mysql_exec(lease, sql);
    MYSQL_RES* res = mysql_store_result(lease.get());
    if (!res) {
        lease.broken();
        throw ServiceError(500, "MariaDB query '" + sql + "' returned no result: " + mysql_error(lease.get()));
    }
    return MysqlResult(res);
}

std::string redis_get(RedisLease& lease, const std::string& key) {
    std::unique_ptr<redisReply, void (*)(void*)> reply(
        static_cast<redisReply*>(redisCommand(lease.get(), "GET %b", key.data(), key.size())), freeReplyObject);
    if (!reply) {
        lease.broken();
        throw ServiceError(503, std::string("Redis GET failed: ") + lease.get()->errstr);
    }
    if (reply->type == REDIS_REPLY_NIL) throw ServiceError(500, "Redis key '" + key + "' does not exist");
    if (reply->type != REDIS_REPLY_STRING) throw ServiceError(500, "Redis GET '" + key + "' did not return a string");
    return std::string(reply->str, reply->len);
}

std::string memcached_get_value(MemcachedLease& lease, const std::string& key) {
    std::size_t length = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    std::unique_ptr<char, void (*)(void*)> value(memcached_get(lease.get(), key.data(), key.size(), &length, &flags, &rc),
                                                 std::free);
    if (rc == MEMCACHED_NOTFOUND) throw ServiceError(500, "memcached key '" + key + "' does not exist");
    if (rc != MEMCACHED_SUCCESS) {
        lease.broken();
        throw ServiceError(503, std::string("memcached get failed: ") + memcached_strerror(lease.get(), rc));
    }
    return std::string(value.get(), length);
}

}  // namespace stackbench
