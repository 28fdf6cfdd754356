// The workloads that need no data service: hello, data, concat, add, array, assoc, readfile,
// sha256, and the TechEmpower json and plaintext types. They run inline on the event loop.
#pragma once

#include <string>

#include "http_types.hpp"

namespace stackbench {

Response hello(const Request&);
Response data(const Request&);  // GET /data/{n}
Response concat(const Request&);
Response add(const Request&);
Response array(const Request&);
Response assoc(const Request&);
Response readfile(const Request&, const std::string& fixtures_dir);
Response sha256(const Request&, const std::string& fixtures_dir);
Response tfb_json(const Request&);
Response tfb_plaintext(const Request&);

}  // namespace stackbench
