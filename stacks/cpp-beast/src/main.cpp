// cpp-beast entry point.
//   server                              serve HTTP on HOST:PORT (environment, docs/contracts.md section 3)
//   server script WORKLOAD QUERY ITERS  run one workload's handler ITERS times, print the last body
#include <mysql.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "config.hpp"
#include "routes.hpp"
#include "server.hpp"

namespace {

int run_script(const stackbench::Config& config, const std::string& workload, const std::string& query,
               const std::string& iterations_text) {
    char* end = nullptr;
    const long iterations = std::strtol(iterations_text.c_str(), &end, 10);
    if (*end != '\0' || iterations < 1) {
        std::cerr << "ITERATIONS must be a positive integer, got '" << iterations_text << "'\n";
        return 2;
    }
    const std::string path = stackbench::workload_path(workload, query);
    const stackbench::Route* route = path.empty() ? nullptr : stackbench::find_route(path);
    if (!route) {
        std::cerr << "unknown workload '" << workload << "'\n";
        return 2;
    }
    const stackbench::Request request{path, query};
    stackbench::Response response;
    for (long i = 0; i < iterations; ++i) response = stackbench::run_route(*route, request, config);
    if (response.status != 200) {
        std::cerr << "workload " << workload << " answered " << response.status << ": " << response.body;
        return 1;
    }
    std::cout << response.body;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        // libmariadb's global state must be set up once before threads create connections.
        if (mysql_library_init(0, nullptr, nullptr) != 0) throw std::runtime_error("mysql_library_init failed");
        const stackbench::Config config = stackbench::config_from_env();
        if (argc >= 2 && std::string(argv[1]) == "script") {
            if (argc != 5) {
                std::cerr << "usage: " << argv[0] << " script WORKLOAD QUERY ITERATIONS\n";
                return 2;
            }
            return run_script(config, argv[2], argv[3], argv[4]);
        }
        if (argc != 1) {
            std::cerr << "usage: " << argv[0] << " [script WORKLOAD QUERY ITERATIONS]\n";
            return 2;
        }
        return stackbench::run_server(config);
    } catch (const std::exception& e) {
        std::cerr << "cpp-beast: " << e.what() << "\n";
        return 1;
    }
}
