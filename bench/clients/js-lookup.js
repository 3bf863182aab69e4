#!/usr/bin/env node
'use strict';
// Bench rows of the JavaScript client (clients/js): a local check of an
// absent 8-byte key in the filter of a tracked 10 M-key table (12 MB at
// 1 %), next to a server round trip of bf_might_contain measured in the same
// run, and the full fetch.  Needs a server with the extension installed and
// `npm ci` done in clients/js:
//
//   make -s install && (cd clients/js && npm ci)
//   pg_virtualenv node bench/clients/js-lookup.js        # prints the rows
//
// Environment: BENCH_JS_KEYS (default 10000000), BENCH_JS_LOOKUPS (100000 per run),
// BENCH_JS_CALLS (5000 server round trips per run), BENCH_JS_REPS (30 runs of
// lookups, 5 of round trips), PGDATABASE.
// Output: one tab-separated row per line (name, value, target, note), as
// bench/lib.sh's `row` takes them; progress on stderr.

const path = require('path');
const { createRequire } = require('module');

const CLIENT = path.join(__dirname, '../../clients/js');
const clientRequire = createRequire(path.join(CLIENT, 'package.json'));
const pg = clientRequire('pg');
const { Refresher, trackedSource, setXxh3 } = require(CLIENT);
const { hashWasmXxh3 } = require(path.join(CLIENT, 'hash-wasm.js'));

const KEYS = Number(process.env.BENCH_JS_KEYS || 10000000);
const LOOKUPS = Number(process.env.BENCH_JS_LOOKUPS || 100000);
const CALLS = Number(process.env.BENCH_JS_CALLS || 5000);
const REPS = Number(process.env.BENCH_JS_REPS || 30);
const TABLE = 'bench_js_keys';

const log = (...a) => process.stderr.write(`[bench js ${new Date().toISOString().slice(11, 19)}] ${a.join(' ')}\n`);
const row = (name, value, target, note) => process.stdout.write([name, value, target, note].join('\t') + '\n');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// ns per call of fn(keys[i]) over all keys, REPS times: wall-clock median,
// min and max, and the smallest CPU time (on a shared machine the process
// waits for a core; the CPU time of its best run is the least disturbed)
function timeLookups(fn, keys) {
  const runs = [];
  const cpu = [];
  let sink = 0;
  for (let r = 0; r < REPS + 1; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < keys.length; i++) sink += fn(keys[i]) ? 1 : 0;
    const ns = Number(process.hrtime.bigint() - t0) / keys.length;
    const c = process.cpuUsage(c0);
    if (r > 0) { // the first run warms the JIT up
      runs.push(ns);
      cpu.push(((c.user + c.system) * 1000) / keys.length);
    }
  }
  return { median: median(runs), min: Math.min(...runs), max: Math.max(...runs), cpuBest: Math.min(...cpu), sink };
}

function lcg(seed) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x;
  };
}

async function main() {
  const pool = new pg.Pool({ max: 2 });
  pool.on('error', () => {});
  await pool.query('CREATE EXTENSION IF NOT EXISTS bloomfilter');
  await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
  log(`table of ${KEYS} keys (even numbers), tracked at 1 %`);
  await pool.query(`CREATE TABLE ${TABLE} (id int8)`);
  await pool.query(`INSERT INTO ${TABLE} SELECT 2 * g FROM generate_series(0, ${KEYS - 1}) g`);
  await pool.query(`SELECT bf_track('${TABLE}', 'id', ${KEYS}, 0.01)`);

  log('full fetch');
  const t0 = process.hrtime.bigint();
  const refresher = new Refresher(trackedSource(pool, TABLE, 'id'));
  await refresher.refresh();
  const fetchMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const f = refresher.filter;
  const st = refresher.status();
  if (!f) throw st.lastError;

  // keys: absent (odd) and present (even), as JavaScript numbers
  const next = lcg(7);
  const absent = new Array(LOOKUPS);
  const present = new Array(LOOKUPS);
  for (let i = 0; i < LOOKUPS; i++) {
    const r = (next() * 16384 + (next() >>> 17)) % KEYS;
    absent[i] = 2 * r + 1;
    present[i] = 2 * r;
  }
  const bigAbsent = absent.map(BigInt);
  const strAbsent = absent.map(String);

  log(`local lookups: ${LOOKUPS} x ${REPS}`);
  const a = timeLookups((k) => f.contains(k), absent);
  const p = timeLookups((k) => f.contains(k), present);
  const ab = timeLookups((k) => f.contains(k), bigAbsent);
  const as = timeLookups((k) => f.contains(k), strAbsent);
  const fpRate = a.sink / (LOOKUPS * (REPS + 1));
  if (p.sink !== LOOKUPS * (REPS + 1)) throw new Error('a present key was not found');

  log('local lookups through hash-wasm');
  setXxh3(await hashWasmXxh3());
  const aw = timeLookups((k) => f.contains(k), absent);
  setXxh3(clientRequire('./lib/xxh3-native.js'));

  const RT_REPS = Math.min(REPS, 5);
  log(`server round trips: ${CALLS} x ${RT_REPS}`);
  const c = await pool.connect();
  const stmt = { name: 'bf_js_might', text: `SELECT bf_might_contain('${TABLE}', 'id', $1::int8) AS m` };
  const rt = [];
  for (let r = 0; r < RT_REPS + 1; r++) {
    const tr = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await c.query({ ...stmt, values: [absent[i]] });
    if (r > 0) rt.push(Number(process.hrtime.bigint() - tr) / CALLS);
  }
  c.release();
  const rtMedian = median(rt);

  const us = (ns) => (ns / 1000).toFixed(2) + ' µs';
  const spread = (t) => `CPU time, best of ${REPS} runs of ${LOOKUPS}; wall clock median ${Math.round(t.median)} ns (runs ${Math.round(t.min)}-${Math.round(t.max)} ns)`;
  row('js: local contains, absent 8-byte key (number), 12 MB filter', `${Math.round(a.cpuBest)} ns`, '<= 1 µs',
    `${f.byteLength} bytes, k=${f.nhashes}; ${spread(a)}; false positives ${(100 * fpRate).toFixed(2)} %`);
  row('js: server round trip bf_might_contain (node-postgres, prepared, local socket)', us(rtMedian), 'info',
    `${CALLS} sequential calls x ${RT_REPS}; runs ${us(Math.min(...rt))}-${us(Math.max(...rt))}`);
  row('js: round trip / local absent lookup', (rtMedian / a.cpuBest).toFixed(0) + 'x', 'info', 'same run');
  row('js: local contains, present key (number)', `${Math.round(p.cpuBest)} ns`, 'info', spread(p));
  row('js: local contains, absent key as BigInt / as string', `${Math.round(ab.median)} / ${Math.round(as.median)} ns`, 'info',
    `best CPU ${Math.round(ab.cpuBest)} / ${Math.round(as.cpuBest)} ns; int8 columns arrive as strings from node-postgres`);
  row('js: local contains, absent key, hash-wasm XXH3 / @node-rs/xxhash', (aw.median / a.median).toFixed(2), 'info',
    `wall ${Math.round(aw.median)} ns vs ${Math.round(a.median)} ns; best CPU ${Math.round(aw.cpuBest)} vs ${Math.round(a.cpuBest)} ns`);
  row('js: full fetch of the filter (base64, parse)', `${fetchMs.toFixed(0)} ms`, 'info', `${st.bytesReceived} bytes of value`);

  await pool.query(`DROP TABLE ${TABLE}`);
  await pool.end();
}

main().catch((e) => {
  process.stderr.write(`bench js failed: ${e.stack || e}\n`);
  process.exit(1);
});
