'use strict';

// HTTP front of the workloads: routing, response framing, error mapping.
const http = require('http');
const { workloads } = require('./workloads');

const SERVER_NAME = 'node';

// Splits a request target into the workload handler and its parameters; /data/{n} carries n
// in the path. Returns null for unknown paths.
function route(url) {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  if (pathname.startsWith('/data/')) {
    params.set('n', pathname.slice('/data/'.length));
    return { handler: workloads.get('data'), params };
  }
  const handler = workloads.get(pathname.slice(1));
  return handler ? { handler, params } : null;
}

function send(res, status, contentType, body) {
  // Node adds the Date header itself (sendDate); TechEmpower also wants Server.
  res.writeHead(status, {
    Server: SERVER_NAME,
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function sendError(req, res, err) {
  if (err.status) {
    send(res, err.status, 'text/plain; charset=utf-8', err.message + '\n');
    return;
  }
  if (res.destroyed) return; // the client went away (e.g. the load generator stopped)
  console.error(`${req.method} ${req.url}: ${err.stack || err}`);
  send(res, 500, 'text/plain; charset=utf-8', `internal error: ${err.message}\n`);
}

function requestListener(app) {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', 'only GET is supported\n');
      return;
    }
    const target = route(req.url);
    if (!target) {
      send(res, 404, 'text/plain; charset=utf-8', 'no such workload\n');
      return;
    }
    let out;
    try {
      out = target.handler(app, target.params);
    } catch (err) {
      sendError(req, res, err);
      return;
    }
    // CPU workloads answer synchronously; only data workloads pay for a promise.
    if (out instanceof Promise) {
      out.then((r) => send(res, 200, r.contentType, r.body), (err) => sendError(req, res, err));
    } else {
      send(res, 200, out.contentType, out.body);
    }
  };
}

function createServer(app) {
  const server = http.createServer(requestListener(app));
  // Longer than nginx's upstream keepalive_timeout (60 s) so the proxy, not Node, closes idle
  // upstream connections; otherwise nginx can reuse a socket Node is closing (502s).
  server.keepAliveTimeout = 65000;
  return server;
}

module.exports = { createServer };
