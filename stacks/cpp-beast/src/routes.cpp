#include "routes.hpp"

#include <exception>
#include <unordered_map>

#include "cpu_workloads.hpp"
#include "data_clients.hpp"
#include "data_workloads.hpp"
#include "query.hpp"

namespace stackbench {
namespace {

constexpr std::string_view kDataPrefix = "/data/";

const std::unordered_map<std::string_view, Route>& route_table() {
    using E = Execution;
    static const std::unordered_map<std::string_view, Route> table = {
        {"/hello", {E::EventLoop, [](const Request& r, const Config&) { return hello(r); }}},
        {"/concat", {E::EventLoop, [](const Request& r, const Config&) { return concat(r); }}},
        {"/add", {E::EventLoop, [](const Request& r, const Config&) { return add(r); }}},
        {"/array", {E::EventLoop, [](const Request& r, const Config&) { return array(r); }}},
        {"/assoc", {E::EventLoop, [](const Request& r, const Config&) { return assoc(r); }}},
        {"/readfile", {E::EventLoop, [](const Request& r, const Config& c) { return readfile(r, c.fixtures_dir); }}},
        {"/sha256", {E::EventLoop, [](const Request& r, const Config& c) { return sha256(r, c.fixtures_dir); }}},
        {"/json", {E::EventLoop, [](const Request& r, const Config&) { return tfb_json(r); }}},
        {"/plaintext", {E::EventLoop, [](const Request& r, const Config&) { return tfb_plaintext(r); }}},
        {"/db-report", {E::BlockingPool, db_report}},
        {"/mysql-row", {E::BlockingPool, mysql_row}},
        {"/redis-get", {E::BlockingPool, redis_get_test}},
        {"/memcache-get", {E::BlockingPool, memcache_get_test}},
        {"/db", {E::BlockingPool, tfb_db}},
        {"/queries", {E::BlockingPool, tfb_queries}},
        {"/fortunes", {E::BlockingPool, tfb_fortunes}},
        {"/updates", {E::BlockingPool, tfb_updates}},
    };
    return table;
}

const Route kDataRoute{Execution::EventLoop, [](const Request& r, const Config&) { return data(r); }};

}  // namespace

const Route* find_route(std::string_view path) {
    if (path.substr(0, kDataPrefix.size()) == kDataPrefix) return &kDataRoute;
    const auto& table = route_table();
    const auto it = table.find(path);
    return it == table.end() ? nullptr : &it->second;
}

std::string workload_path(std::string_view name, std::string_view query) {
    if (name == "data") {
        // The data workload takes n in the path; the script mode passes it as "n=N".
        const auto n = query_param(query, "n");
        return std::string(kDataPrefix) + std::string(n ? *n : "0");
    }
    std::string path = "/" + std::string(name);
    return route_table().count(path) ? path : std::string();
}

Response run_route(const Route& route, const Request& request, const Config& config) {
    try {
        return route.handler(request, config);
    } catch (const ServiceError& e) {
        return error(e.status, std::string(e.what()) + "\n");
    } catch (const std::exception& e) {
        return error(500, std::string("internal error: ") + e.what() + "\n");
    }
}

}  // namespace stackbench
