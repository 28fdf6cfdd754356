'use strict';

const { badRequest } = require('./errors');

const DECIMAL = /^[0-9]{1,18}$/;

// Reads a decimal integer query parameter: absent → def; anything that is not plain decimal
// digits or lies outside [lo, hi] → 400 (contracts section 1).
function intParam(params, name, def, lo, hi) {
  const raw = params.get(name);
  if (raw === null) return def;
  const n = DECIMAL.test(raw) ? Number(raw) : NaN;
  if (!(n >= lo && n <= hi)) {
    throw badRequest(`${name} must be a decimal integer in ${lo}..${hi}, got "${raw}"`);
  }
  return n;
}

// TechEmpower rule for queries/updates: missing or garbage → 1, clamped to 1..500.
function tfbQueryCount(params) {
  const n = parseInt(params.get('queries'), 10);
  if (!(n >= 1)) return 1;
  return Math.min(n, 500);
}

module.exports = { intParam, tfbQueryCount };
