'use strict';

// The node stack: the stackbench workloads on Node's http module.
//   node server.js                          one process on HOST:PORT (stack "node")
//   node server.js --cluster-workers N      cluster primary + N workers (stack "node-cluster")
//   node server.js --listen-socket PATH     listen on a unix socket (stack "node-nginx")
//   node server.js --host H --port N        listen on H:N, not HOST:PORT ("node-nginx", tcp)
const cluster = require('cluster');
const fs = require('fs');
const { createApp } = require('./lib/app');
const { createServer } = require('./lib/http');

const IN_FLIGHT_GRACE_MS = 500;
const SHUTDOWN_GRACE_MS = 2000;

function listenTarget(config) {
  if (config.listenSocket) return { path: config.listenSocket, backlog: config.backlog };
  if (!config.port) throw new Error('PORT is not set (or pass --listen-socket PATH)');
  return { host: config.host, port: Number(config.port), backlog: config.backlog };
}

// A socket file left by a killed run would make listen fail with EADDRINUSE. Only the
// primary does this: cluster workers share the primary's listening handle.
function removeStaleSocket(config) {
  if (config.listenSocket) fs.rmSync(config.listenSocket, { force: true });
}

function runServer(app) {
  const server = createServer(app);
  server.on('error', (err) => {
    console.error(`node: cannot listen: ${err.message}`);
    process.exit(1);
  });
  server.listen(listenTarget(app.config));
  // Stop accepting, drop idle keep-alive connections at once, give in-flight requests a short
  // grace, then cut the rest: a load generator would otherwise keep busy connections alive.
  const stop = () => {
    server.close(() => app.services.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), IN_FLIGHT_GRACE_MS).unref();
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

// The primary only forks and supervises; with the default round-robin policy it also accepts
// connections and hands them to workers. A worker that dies unexpectedly is replaced.
function runPrimary(config) {
  let stopping = false;
  const fork = () => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
      return;
    }
    console.error(`node: worker ${worker.process.pid} died (${signal || code}), forking a new one`);
    fork();
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  for (let i = 0; i < config.clusterWorkers; i++) fork();
}

function main() {
  const app = createApp(process.env, process.argv.slice(2));
  if (cluster.isPrimary) removeStaleSocket(app.config);
  if (app.config.clusterWorkers > 0 && cluster.isPrimary) {
    runPrimary(app.config);
  } else {
    runServer(app);
  }
}

try {
  main();
} catch (err) {
  console.error(`node: ${err.message}`);
  process.exit(1);
}
