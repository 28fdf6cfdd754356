// Blocking clients for MariaDB (libmariadb), Redis (hiredis) and memcached (libmemcached).
//
// Connection strategy (DB_STRATEGY): with "pool" each thread of the blocking-call pool keeps one
// persistent connection per service in thread-local storage, so the pool of POOL_SIZE threads is
// also a pool of POOL_SIZE connections per service, and no locking is needed to share them. With
// "per-request" a Lease opens a fresh connection and closes it when the request is done.
#pragma once

#include <hiredis/hiredis.h>
#include <libmemcached/memcached.h>
#include <mysql.h>

#include <stdexcept>
#include <string>

#include "config.hpp"

namespace stackbench {

// A data-service failure with the HTTP status to answer (503 unavailable, 500 query error).
struct ServiceError : std::runtime_error {
    unsigned status;
    ServiceError(unsigned s, const std::string& message) : std::runtime_error(message), status(s) {}
};

struct MysqlTraits {
    using Handle = MYSQL;
    static Handle* connect(const Config&);
    static void close(Handle*);
};
struct RedisTraits {
    using Handle = redisContext;
    static Handle* connect(const Config&);
    static void close(Handle*);
};
struct MemcachedTraits {
    using Handle = memcached_st;
    static Handle* connect(const Config&);
    static void close(Handle*);
};

// One connection for the duration of a request, taken from this thread's slot (pool) or opened
// fresh (per-request). Call broken() after an error so a dead connection is not reused.
template <typename Traits>
class Lease {
public:
    using Handle = typename Traits::Handle;
    explicit Lease(const Config& config) : strategy_(config.db_strategy) {
        Handle*& slot = thread_slot();
        if (strategy_ == DbStrategy::Pool && slot) {
            handle_ = slot;
            slot = nullptr;
        } else {
            handle_ = Traits::connect(config);
        }
    }
    ~Lease() {
        Handle*& slot = thread_slot();
        if (strategy_ == DbStrategy::Pool && !broken_ && !slot) slot = handle_;
        else Traits::close(handle_);
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Handle* get() const { return handle_; }
    void broken() { broken_ = true; }

private:
    static Handle*& thread_slot() {
        thread_local Handle* slot = nullptr;
        return slot;
    }
    DbStrategy strategy_;
    Handle* handle_ = nullptr;
    bool broken_ = false;
};

using MysqlLease = Lease<MysqlTraits>;
using RedisLease = Lease<RedisTraits>;
using MemcachedLease = Lease<MemcachedTraits>;

// Owns a MYSQL_RES; frees it on scope exit.
class MysqlResult {
public:
    explicit MysqlResult(MYSQL_RES* res) : res_(res) {}
    ~MysqlResult() { if (res_) mysql_free_result(res_); }
    MysqlResult(const MysqlResult&) = delete;
    MysqlResult& operator=(const MysqlResult&) = delete;
    MYSQL_ROW next() { return mysql_fetch_row(res_); }
private:
    MYSQL_RES* res_;
};

// Runs a statement; throws ServiceError(500) naming the SQL and the server's error.
void mysql_exec(MysqlLease& lease, const std::string& sql);
// Runs a query and returns its full result set.
MysqlResult mysql_select(MysqlLease& lease, const std::string& sql);

// Redis GET; the value, or ServiceError when the key is missing or the call fails.
std::string redis_get(RedisLease& lease, const std::string& key);
// memcached get; the value, or ServiceError when the key is missing or the call fails.
std::string memcached_get_value(MemcachedLease& lease, const std::string& key);

}  // namespace stackbench
