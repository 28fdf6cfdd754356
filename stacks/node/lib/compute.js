'use strict';

// The CPU and file workloads of contracts section 1 (no services involved).
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { intParam } = require('./params');

const text = (body) => ({ contentType: 'text/plain; charset=utf-8', body });

function hello() {
  return text('Hello World');
}

function data(app, params) {
  const n = intParam(params, 'n', 0, 0, 1048576);
  return text(Buffer.alloc(n, '.'));
}

function concat(app, params) {
  const n = intParam(params, 'n', 1000, 0, 10000000);
  let s = '';
  for (let i = 0; i < n; i++) s += 's';
  return text(s);
}

function add(app, params) {
  const n = intParam(params, 'n', 1000, 0, 100000000);
  let counter = 0;
  for (let i = 0; i < n; i++) counter += 1;
  return text(String(counter));
}

function array(app, params) {
  const n = intParam(params, 'n', 1000, 0, 10000000);
  const list = [];
  for (let i = 0; i < n; i++) list.push('s');
  return text(String(list.length));
}

function assoc(app, params) {
  const n = intParam(params, 'n', 1000, 0, 10000000);
  if (app.config.assocImpl === 'object') {
    // The php-node-micro article's code: `var array = {}; array['s' + i] = 's';`.
    const object = {};
    for (let i = 0; i < n; i++) object['s' + i] = 's';
    return text(String(Object.keys(object).length));
  }
  // Map is JavaScript's hash map for dynamic keys (a plain object degrades to dictionary mode).
  const map = new Map();
  for (let i = 0; i < n; i++) map.set('s' + i, 's');
  return text(String(map.size));
}

function readfile(app, params) {
  const n = intParam(params, 'n', 100, 0, 100000);
  const file = path.join(app.config.fixturesDir, 'demo.txt');
  let total = 0;
  for (let i = 0; i < n; i++) {
    // Deliberately the blocking API (open + read + close on the event loop thread): the
    // contract asks for "the runtime's blocking file API", which is what the original
    // article measured; fs.promises would move the reads to libuv's thread pool.
    total += fs.readFileSync(file).length;
  }
  return text(String(total));
}

function sha256(app, params) {
  const n = intParam(params, 'n', 1, 1, 100000);
  // Read from disk once per request, never cached across requests (contract).
  const file = fs.readFileSync(path.join(app.config.fixturesDir, 'random-64k.bin'));
  let digest = crypto.createHash('sha256').update(file).digest();
  for (let i = 1; i < n; i++) {
    digest = crypto.createHash('sha256').update(digest).update(file).digest();
  }
  return text(digest.toString('hex'));
}

module.exports = { hello, data, concat, add, array, assoc, readfile, sha256 };
