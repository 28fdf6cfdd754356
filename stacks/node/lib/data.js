'use strict';

// The data workloads of contracts section 1: db-report, mysql-row, redis-get, memcache-get.
const { escapeHtml } = require('./html');

const text = (body) => ({ contentType: 'text/plain; charset=utf-8', body });

// The table name comes from a fixed list, never from input.
async function reportTable(db, table) {
  const [rows] = await db.query(`SELECT id, name, value, created FROM ${table} ORDER BY id`);
  let html = `<h1>${table}</h1><table><tr><th>id</th><th>name</th><th>value</th><th>created</th></tr>`;
  for (const row of rows) {
    html += `<tr><td>${row.id}</td><td>${escapeHtml(row.name)}</td><td>${row.value}</td><td>${escapeHtml(row.created)}</td></tr>`;
  }
  return html + '</table>';
}

async function dbReport(app) {
  const tables = await app.services.withDB(async (db) => [await reportTable(db, 'a'), await reportTable(db, 'b')]);
  const body = '<!DOCTYPE html><html><head><title>Report</title></head><body>' + tables.join('') + '</body></html>';
  return { contentType: 'text/html; charset=utf-8', body };
}

async function mysqlRow(app) {
  const [rows] = await app.services.withDB((db) => db.query('SELECT name FROM test'));
  if (rows.length === 0) throw new Error('table test is empty (seed missing?)');
  return text(rows[0].name);
}

async function redisGet(app) {
  const value = await app.services.withRedis((client) => client.get('test'));
  if (value === null) throw new Error('Redis key "test" is missing (seed missing?)');
  return text(value);
}

async function memcacheGet(app) {
  const { value } = await app.services.withMemcached((client) => client.get('test'));
  if (value === null) throw new Error('memcached key "test" is missing (seed missing?)');
  return text(value);
}

module.exports = { dbReport, mysqlRow, redisGet, memcacheGet };
