#include "data_workloads.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "data_clients.hpp"
#include "query.hpp"

namespace stackbench {
namespace {

void append_escaped(std::string& out, std::string_view text) {
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
}

std::string_view cell(MYSQL_ROW row, int column) { return row[column] ? std::string_view(row[column]) : std::string_view(); }

void append_report_table(std::string& html, MysqlLease& lease, const char* table) {
    MysqlResult result = mysql_select(lease, std::string("SELECT id, name, value, created FROM ") + table + " ORDER BY id");
    html += "<h1>";
    html += table;
    html += "</h1><table><tr><th>id</th><th>name</th><th>value</th><th>created</th></tr>\n";
    while (MYSQL_ROW row = result.next()) {
        html += "<tr>";
        for (int column = 0; column < 4; ++column) {
            html += "<td>";
            append_escaped(html, cell(row, column));  // DATETIME text is already YYYY-MM-DD HH:MM:SS
            html += "</td>";
        }
        html += "</tr>\n";
    }
    html += "</table>";
}

int random_world_id() {
    thread_local std::minstd_rand engine{std::random_device{}()};
    return std::uniform_int_distribution<int>(1, 10000)(engine);
}

struct World {
    int id;
    int random_number;
};

World select_world(MysqlLease& lease, int id) {
    MysqlResult result = mysql_select(lease, "SELECT id, randomNumber FROM World WHERE id = " + std::to_string(id));
    MYSQL_ROW row = result.next();
    if (!row) throw ServiceError(500, "World row " + std::to_string(id) + " does not exist");
    return World{std::atoi(row[0]), std::atoi(row[1])};
}

nlohmann::json world_json(const World& w) { return {{"id", w.id}, {"randomNumber", w.random_number}}; }

Response json_response(const nlohmann::json& value) { return Response{200, "application/json", value.dump()}; }

}  // namespace

Response db_report(const Request&, const Config& config) {
    MysqlLease lease(config);
    std::string html = "<!DOCTYPE html><html><head><title>Report</title></head><body>\n";
    append_report_table(html, lease, "a");
    append_report_table(html, lease, "b");
    html += "</body></html>";
    return Response{200, "text/html; charset=utf-8", std::move(html)};
}

Response mysql_row(const Request&, const Config& config) {
    MysqlLease lease(config);
    MysqlResult result = mysql_select(lease, "SELECT name FROM test");
    MYSQL_ROW row = result.next();
    if (!row) throw ServiceError(500, "table test is empty");
    return text(std::string(cell(row, 0)));
}

Response redis_get_test(const Request&, const Config& config) {
    RedisLease lease(config);
    return text(redis_get(lease, "test"));
}

Response memcache_get_test(const Request&, const Config& config) {
    MemcachedLease lease(config);
    return text(memcached_get_value(lease, "test"));
}

Response tfb_db(const Request&, const Config& config) {
    MysqlLease lease(config);
    return json_response(world_json(select_world(lease, random_world_id())));
}

Response tfb_queries(const Request& req, const Config& config) {
    const int count = tfb_query_count(req.query);
    MysqlLease lease(config);
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < count; ++i) rows.push_back(world_json(select_world(lease, random_world_id())));
    return json_response(rows);
}

Response tfb_fortunes(const Request&, const Config& config) {
    std::vector<std::pair<int, std::string>> fortunes;
    {
        MysqlLease lease(config);
        MysqlResult result = mysql_select(lease, "SELECT id, message FROM Fortune");
        while (MYSQL_ROW row = result.next()) fortunes.emplace_back(std::atoi(row[0]), std::string(cell(row, 1)));
    }
    fortunes.emplace_back(0, "Additional fortune added at request time.");
    std::sort(fortunes.begin(), fortunes.end(), [](const auto& l, const auto& r) { return l.second < r.second; });
    std::string html = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>";
    for (const auto& [id, message] : fortunes) {
        html += "<tr><td>" + std::to_string(id) + "</td><td>";
        append_escaped(html, message);
        html += "</td></tr>";
    }
    html += "</table></body></html>";
    return Response{200, "text/html; charset=utf-8", std::move(html)};
}

Response tfb_updates(const Request& req, const Config& config) {
    const int count = tfb_query_count(req.query);
    MysqlLease lease(config);
    std::vector<World> worlds;
    worlds.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) worlds.push_back(select_world(lease, random_world_id()));
    nlohmann::json rows = nlohmann::json::array();
    for (World& w : worlds) {
        w.random_number = random_world_id();  // same 1..10000 range as ids
        // One UPDATE per row, as the TechEmpower rules allow; autocommit writes each one through.
        mysql_exec(lease, "UPDATE World SET randomNumber = " + std::to_string(w.random_number) +
                              " WHERE id = " + std::to_string(w.id));
        rows.push_back(world_json(w));
    }
    return json_response(rows);
}

}  // namespace stackbench
