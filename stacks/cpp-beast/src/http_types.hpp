// Transport-neutral request/response types shared by the HTTP server and the script mode,
// so both run exactly the same handler code.
#pragma once

#include <string>
#include <string_view>

namespace stackbench {

struct Request {
    std::string_view path;   // e.g. "/sha256" or "/data/42"
    std::string_view query;  // raw query string without '?', may be empty
};

struct Response {
    unsigned status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

inline Response text(std::string body) { return Response{200, "text/plain; charset=utf-8", std::move(body)}; }

inline Response error(unsigned status, std::string message) {
    return Response{status, "text/plain; charset=utf-8", std::move(message)};
}

}  // namespace stackbench
