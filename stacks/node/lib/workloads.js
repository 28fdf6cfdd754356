'use strict';

// Each workload name of docs/contracts.md section 1 → its handler, shared by the HTTP server
// and the script entry point. A handler is (app, URLSearchParams) → reply or Promise<reply>,
// reply = { contentType, body: string | Buffer }; it throws WorkloadError for 400/503.
const compute = require('./compute');
const data = require('./data');
const tfb = require('./techempower');

const workloads = new Map([
  ['hello', compute.hello],
  ['data', compute.data],
  ['concat', compute.concat],
  ['add', compute.add],
  ['array', compute.array],
  ['assoc', compute.assoc],
  ['readfile', compute.readfile],
  ['sha256', compute.sha256],
  ['db-report', data.dbReport],
  ['mysql-row', data.mysqlRow],
  ['redis-get', data.redisGet],
  ['memcache-get', data.memcacheGet],
  ['json', tfb.tfbJson],
  ['plaintext', tfb.tfbPlaintext],
  ['db', tfb.tfbDb],
  ['queries', tfb.tfbQueries],
  ['fortunes', tfb.tfbFortunes],
  ['updates', tfb.tfbUpdates],
]);

module.exports = { workloads };
