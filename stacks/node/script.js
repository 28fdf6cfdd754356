'use strict';

// Standalone timing (contracts section 5): node script.js WORKLOAD QUERY ITERATIONS runs the
// workload's handler ITERATIONS times in this process and writes the last body to stdout.
const { createApp } = require('./lib/app');
const { workloads } = require('./lib/workloads');

// QUERY is "n=1000", or "" / "-" for none; a bare number is n (how /data/{n} carries its size).
function scriptParams(query) {
  const q = (query || '').replace(/^\?/, '');
  if (q === '' || q === '-') return new URLSearchParams();
  if (/^[0-9]+$/.test(q)) return new URLSearchParams({ n: q });
  return new URLSearchParams(q);
}

async function main(argv) {
  if (argv.length !== 3) throw new Error(`script wants WORKLOAD QUERY ITERATIONS, got ${argv.length} arguments`);
  const [name, query, rawIterations] = argv;
  const handler = workloads.get(name);
  if (!handler) throw new Error(`unknown workload "${name}"`);
  const iterations = Number(rawIterations);
  if (!Number.isInteger(iterations) || iterations < 1) {
    throw new Error(`ITERATIONS must be a positive integer, got "${rawIterations}"`);
  }
  const app = createApp(process.env, []);
  const params = scriptParams(query);
  let last;
  try {
    for (let i = 0; i < iterations; i++) {
      last = handler(app, params);
      // Only data workloads are asynchronous; awaiting a plain value would add a tick each time.
      if (last instanceof Promise) last = await last;
    }
  } finally {
    await app.services.close();
  }
  process.stdout.write(last.body);
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`node script: ${err.message}`);
  process.exitCode = 1;
});
