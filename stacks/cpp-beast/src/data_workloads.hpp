// Workloads that talk to MariaDB, Redis or memcached with blocking client calls. The server runs
// them on the blocking-call thread pool, never on an event-loop thread.
#pragma once

#include "config.hpp"
#include "http_types.hpp"

namespace stackbench {

Response db_report(const Request&, const Config&);
Response mysql_row(const Request&, const Config&);
Response redis_get_test(const Request&, const Config&);
Response memcache_get_test(const Request&, const Config&);
Response tfb_db(const Request&, const Config&);
Response tfb_queries(const Request&, const Config&);
Response tfb_fortunes(const Request&, const Config&);
Response tfb_updates(const Request&, const Config&);

}  // namespace stackbench
