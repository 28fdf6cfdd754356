'use strict';

// The TechEmpower Framework Benchmarks test types, to their published rules.
const { tfbQueryCount } = require('./params');
const { escapeHtml } = require('./html');

const WORLD_ROWS = 10000;
const randomWorldId = () => 1 + Math.floor(Math.random() * WORLD_ROWS);
const json = (value) => ({ contentType: 'application/json', body: JSON.stringify(value) });

function tfbJson() {
  // Serialised per request, as the rules require.
  return json({ message: 'Hello, World!' });
}

function tfbPlaintext() {
  return { contentType: 'text/plain', body: 'Hello, World!' };
}

async function selectWorld(db, id) {
  const [rows] = await db.query('SELECT id, randomNumber FROM World WHERE id = ?', [id]);
  return { id: rows[0].id, randomNumber: rows[0].randomNumber };
}

// One query per row, as the "queries" test type demands; issued concurrently, the way Node
// apps use a pool (a per-request connection runs them in order on its single socket).
function selectWorlds(db, count) {
  return Promise.all(Array.from({ length: count }, () => selectWorld(db, randomWorldId())));
}

async function tfbDb(app) {
  return json(await app.services.withDB((db) => selectWorld(db, randomWorldId())));
}

async function tfbQueries(app, params) {
  return json(await app.services.withDB((db) => selectWorlds(db, tfbQueryCount(params))));
}

async function tfbUpdates(app, params) {
  const worlds = await app.services.withDB(async (db) => {
    const rows = await selectWorlds(db, tfbQueryCount(params));
    // One UPDATE per row (allowed by the rules); each autocommits, so concurrent requests
    // touching the same rows cannot deadlock.
    await Promise.all(rows.map((w) => {
      w.randomNumber = randomWorldId();
      return db.query('UPDATE World SET randomNumber = ? WHERE id = ?', [w.randomNumber, w.id]);
    }));
    return rows;
  });
  return json(worlds);
}

async function tfbFortunes(app) {
  const [rows] = await app.services.withDB((db) => db.query('SELECT id, message FROM Fortune'));
  const fortunes = rows.map((r) => ({ id: r.id, message: r.message }));
  fortunes.push({ id: 0, message: 'Additional fortune added at request time.' });
  fortunes.sort((x, y) => (x.message < y.message ? -1 : x.message > y.message ? 1 : 0));
  let html = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>';
  for (const f of fortunes) html += `<tr><td>${f.id}</td><td>${escapeHtml(f.message)}</td></tr>`;
  return { contentType: 'text/html; charset=utf-8', body: html + '</table></body></html>' };
}

module.exports = { tfbJson, tfbPlaintext, tfbDb, tfbQueries, tfbUpdates, tfbFortunes };
