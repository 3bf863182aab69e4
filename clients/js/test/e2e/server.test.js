'use strict';
// End to end against a real server and node-postgres: a tracked table of
// 100 000 keys read through the driver (its text form and bytea),
// 100 000 probes answered exactly as bf_might_contain answers them, new
// keys found after one refresh, values as node-postgres returns them, and
// the text forms the server accepts and refuses.  Run inside pg_virtualenv
// with the extension installed (test/suites/72-client-js.sh).

const test = require('node:test');
const assert = require('node:assert');
const pg = require('pg');
const {
  BloomFilter, BloomWindow, Refresher, typed, trackedSource, indexSource, registerBloomfilterType,
  registerBloomwindowType, bfHash,
} = require('../..');

const DB = 'bf_js_e2e';
const N = 100000;
let admin;
let pool;

test.before(async () => {
  admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  pool = new pg.Pool({ database: DB, max: 3 });
  pool.on('error', () => {}); // an idle connection we terminate on purpose
  await pool.query('CREATE EXTENSION bloomfilter');
});

test.after(async () => {
  if (pool) await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.end();
});

// keys 0, 7, 14, ...: present; the others absent
const present = (i) => 7 * i;

test('a tracked table: the driver\'s filter answers 100 000 probes as bf_might_contain', async () => {
  await pool.query('CREATE TABLE users (id int8 PRIMARY KEY, name text)');
  await pool.query(`INSERT INTO users SELECT 7 * g, 'u' || g FROM generate_series(0, ${N - 1}) g`);
  await pool.query("SELECT bf_track('users', 'id')");

  // the type parser (text form) and a bytea result give the same filter
  const types = new pg.TypeOverrides();
  await registerBloomfilterType(pool, types);
  const c = new pg.Client({ database: DB, types });
  await c.connect();
  const text = (await c.query("SELECT bf_tracked_filter('users', 'id') AS f")).rows[0].f;
  await c.end();
  const bytea = BloomFilter.fromBytes((await pool.query("SELECT bf_tracked_filter('users', 'id')::bytea AS f")).rows[0].f);
  assert.ok(text instanceof BloomFilter);
  assert.deepStrictEqual(text.toBytes(), bytea.toBytes());

  // a bloomwindow column through its type parser answers as bf_window_contains
  await registerBloomwindowType(pool, types);
  const wc = new pg.Client({ database: DB, types });
  await wc.connect();
  const wr = (await wc.query("SELECT w, bf_window_contains(w, 7::int8, t + interval '1 hour') AS hit, " +
    "bf_window_contains(w, 7::int8, t + interval '3 hours') AS gone, t FROM (SELECT " +
    "bf_window_add(bf_window_create('2 hours', 100, 0.01, 2), 7::int8, t) AS w, t " +
    "FROM (SELECT timestamptz '2026-01-05 00:00:00+00' AS t) s) s")).rows[0];
  await wc.end();
  assert.ok(wr.w instanceof BloomWindow);
  assert.strictEqual(wr.w.contains(7, new Date(wr.t.getTime() + 3600e3)), wr.hit);
  assert.strictEqual(wr.w.contains(7, new Date(wr.t.getTime() + 3 * 3600e3)), wr.gone);
  assert.deepStrictEqual([wr.hit, wr.gone], [true, false]);
  assert.strictEqual(bytea.family, 'integer');

  // half present, half absent, in a shuffled order
  let x = 99;
  const probes = [];
  for (let i = 0; i < N; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    probes.push(i % 2 === 0 ? present(x % N) : present(x % N) + 1 + (x % 6));
  }
  const r = await pool.query({
    text: "SELECT bf_might_contain('users', 'id', k) AS m FROM unnest($1::int8[]) WITH ORDINALITY AS u(k, n) ORDER BY n",
    values: [probes],
  });
  assert.strictEqual(r.rows.length, N);
  let differ = 0;
  let positives = 0;
  for (let i = 0; i < N; i++) {
    const local = bytea.contains(probes[i]);
    if (local !== r.rows[i].m) differ++;
    if (local) positives++;
  }
  assert.strictEqual(differ, 0, `${differ} of ${N} answers differ from the server's`);
  assert.ok(positives >= N / 2, 'every present key is found');
});

test('after inserts, one refresh finds every new key', async () => {
  const source = trackedSource(pool, 'users', 'id');
  const refresher = new Refresher(source, { interval: 60000 });
  await refresher.start();
  refresher.stop();
  const fresh = Array.from({ length: 1000 }, (_, i) => 10 * N + 7 * i + 3);
  for (const k of fresh.slice(0, 20)) assert.strictEqual(refresher.contains(k), false);
  await pool.query('INSERT INTO users SELECT k, \'new\' FROM unnest($1::int8[]) k', [fresh]);
  assert.strictEqual(await refresher.refresh(), true);
  for (const k of fresh) assert.strictEqual(refresher.contains(k), true, `new key ${k}`);
  const s = refresher.status();
  assert.strictEqual(s.refreshes, 2);
  assert.strictEqual(s.lastError, null);
});

test('a lost connection: the copy stays, and the pool reconnects', async () => {
  const refresher = new Refresher(trackedSource(pool, 'users', 'id'));
  await refresher.refresh();
  const copy = refresher.filter;
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [DB]);
  await pool.query('INSERT INTO users VALUES (-7, \'x\')').catch(() => pool.query('INSERT INTO users VALUES (-7, \'x\')'));
  let ok = await refresher.refresh();
  if (!ok) {
    assert.strictEqual(refresher.filter, copy, 'a failed refresh keeps the copy');
    assert.ok(refresher.status().lastError);
    ok = await refresher.refresh();
  }
  assert.strictEqual(ok, true);
  assert.strictEqual(refresher.contains(-7), true);
});

test('a two-column index: record keys (user x attribute) answer as bf_index_contains', async () => {
  await pool.query('CREATE TABLE attrs (user_id int8, attr text)');
  await pool.query("INSERT INTO attrs SELECT g, 'a' || (g % 50) FROM generate_series(1, 20000) g");
  await pool.query('CREATE INDEX attrs_bf ON attrs USING bloomfilter (user_id, attr)');
  const refresher = new Refresher(indexSource(pool, 'attrs_bf'));
  await refresher.start();
  refresher.stop();
  assert.strictEqual(refresher.filter.family, 'record(integer,text)');
  const keys = [];
  for (let g = 1; g <= 4000; g++) keys.push([g, 'a' + (g % 50)], [g, 'a' + ((g + 1) % 50)]);
  const r = await pool.query({
    text: "SELECT bf_index_contains('attrs_bf', ROW(u, a)) AS m FROM unnest($1::int8[], $2::text[]) WITH ORDINALITY AS t(u, a, n) ORDER BY n",
    values: [keys.map((k) => k[0]), keys.map((k) => k[1])],
  });
  keys.forEach((k, i) => assert.strictEqual(refresher.contains(k), r.rows[i].m, JSON.stringify(k)));
});

test('values as node-postgres returns them', async () => {
  await pool.query("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')");
  await pool.query(`CREATE TABLE vals (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric(12,4),
    t text, c char(6), b bytea, u uuid, o bool, d date, ts timestamp, tz timestamptz, m mood)`);
  await pool.query(`INSERT INTO vals SELECT g, g * 1000, g * 1000000000::int8, g / 10.0, g / 3.0, g / 7.0,
    'text ' || g, 'c' || g, decode(md5(g::text), 'hex'), md5(g::text)::uuid, g % 2 = 0,
    date '2024-01-01' + g, timestamp '2024-01-01 00:00:00.123' + g * interval '1 hour 1.5 second',
    timestamptz '2024-01-01 00:00:00+00' + g * interval '1 day 1 ms', (ARRAY['sad','ok','happy']::mood[])[1 + g % 3]
    FROM generate_series(1, 300) g`);
  const cols = ['i2', 'i4', 'i8', 'f4', 'f8', 'n', 't', 'c', 'b', 'u', 'o', 'd', 'ts', 'tz', 'm'];
  const sql = cols.map((c) => `(SELECT bf_add_all(bf_create(1000, 0.01, 11), array_agg(${c}))::bytea FROM vals) AS ${c}`).join(', ');
  const filters = (await pool.query(`SELECT ${sql}`)).rows[0];
  const rows = (await pool.query('SELECT * FROM vals')).rows;
  // node-postgres gives float4 as the text's double and char(n) padded: say so
  const wrap = { f4: (v) => typed('float4', v), c: (v) => typed('bpchar', v) };
  for (const col of cols) {
    const f = BloomFilter.fromBytes(filters[col]);
    for (const row of rows) {
      const v = wrap[col] ? wrap[col](row[col]) : row[col];
      assert.strictEqual(f.contains(v), true, `${col} = ${row[col]}`);
    }
    // and the local filter built the same way has the same bytes
    const local = BloomFilter.empty({ nbits: f.nbits, nhashes: f.nhashes, seed: 11n, capacity: f.capacity, fpr: f.targetFpr });
    const fam = { i2: 'int2', i4: 'int4', i8: 'int8', f8: 'float8', n: 'numeric', t: 'text', b: 'bytea', u: 'uuid', o: 'bool', d: 'date', ts: 'timestamp', tz: 'timestamptz', m: 'enum' };
    for (const row of rows) local.add(wrap[col] ? wrap[col](row[col]) : typed(fam[col], row[col]));
    assert.deepStrictEqual(local.toBytes(), f.toBytes(), `bf_add_all of ${col}`);
  }
  // bf_hash of each value as the driver returns it
  const h = (await pool.query("SELECT bf_hash(i8, 3) AS i8, bf_hash(n, 3) AS n, bf_hash(ROW(i8, t), 3) AS r FROM vals WHERE i2 = 5")).rows[0];
  const row = rows.find((x) => x.i2 === 5);
  assert.strictEqual(bfHash(typed('int8', row.i8), 3n), BigInt(h.i8));
  assert.strictEqual(bfHash(typed('numeric', row.n), 3n), BigInt(h.n));
  assert.strictEqual(bfHash([typed('int8', row.i8), row.t], 3n), BigInt(h.r));
});

test('the text forms the server accepts are the ones this client accepts', async () => {
  const f = BloomFilter.empty({ nbits: 1536, nhashes: 3, seed: -5n, capacity: 10, fpr: 0.01 });
  f.add([1, 'x']);
  const t = f.toText();
  const variants = [t];
  const edits = [
    ['nhashes=3', 'nhashes=003'], ['nhashes=3', 'nhashes=+3'], ['seed=-5', 'seed=-005'], ['seed=-5', 'seed=--5'],
    ['capacity=10', 'capacity=-0'], ['capacity=10', 'capacity=1e1'], ['fpr=0.01', 'fpr=1e-2'], ['fpr=0.01', 'fpr=.01'],
    ['fpr=0.01', 'fpr=0x1.47ae147ae147bp-7'], ['fpr=0.01', 'fpr=\t0.01'], ['fpr=0.01', 'fpr=0.01\t'], ['fpr=0.01', 'fpr=+0.01'],
    ['fpr=0.01', 'fpr=-0'], ['fpr=0.01', 'fpr=0e-999'], ['fpr=0.01', 'fpr=1e-400'], ['fpr=0.01', 'fpr=inf'],
    ['fpr=0.01', 'fpr=0x'], ['fpr=0.01', 'fpr=1e'], ['fpr=0.01', 'fpr=0.9999999999999999'], ['fpr=0.01', 'fpr=0.99999999999999999'],
    ['record(integer,text)', 'record(integer,text,)'], ['record(integer,text)', 'record(integer,,text)'],
    ['record(integer,text)', 'record(integer,text,other)'], ['record(integer,text)', 'record(integer,other,text)'],
    ['record(integer,text)', 'record(integer,text) '], ['inserted=1', 'inserted=0001'], ['inserted=1', 'inserted=18446744073709551615'],
    ['nbits=1536', 'nbits=01536'], ['bloomfilter:1 ', 'bloomfilter:1\t'], ['layout=blocked', 'layout=blocked '],
  ];
  for (const [from, to] of edits) variants.push(t.replace(from, to));
  for (const v of variants) {
    let server;
    try {
      server = (await pool.query('SELECT $1::bloomfilter::bytea AS b', [v])).rows[0].b;
    } catch (e) {
      server = null;
    }
    let local;
    try {
      local = BloomFilter.fromText(v).toBytes();
    } catch (e) {
      local = null;
    }
    assert.deepStrictEqual(local && Buffer.from(local), server, `server and client differ on ${JSON.stringify(v.slice(0, 140))}`);
  }
});

// A growing filter or a union (sql: keys 1 to 500) read through
// node-postgres answers as bf_contains, is refused what the server refuses,
// and the text forms edited by `edits` are accepted where the server does.
async function checkLayered(sql, layout, edits) {
  const types = new pg.TypeOverrides();
  await registerBloomfilterType(pool, types);
  const c = new pg.Client({ database: DB, types });
  await c.connect();
  const row = (await c.query(`SELECT f, f::bytea AS b, f::text AS t, (SELECT count(*)::int FROM bf_layers(f)) AS n FROM (${sql} AS f) s`)).rows[0];
  await c.end();
  const f = row.f;
  assert.ok(f instanceof BloomFilter && f.layout === layout);
  assert.ok(f.layers.length > 1, 'several layers');
  assert.strictEqual(f.layers.length, row.n);
  assert.strictEqual(f.toText(), row.t);
  const fb = BloomFilter.fromBytes(row.b);
  assert.deepStrictEqual(fb.toBytes(), f.toBytes());
  for (let k = 1; k <= 500; k++) assert.strictEqual(f.contains(k), true, `member ${k}`);

  // absent keys, false positives included, as the server answers them
  const probes = Array.from({ length: 5000 }, (_, i) => 501 + i);
  // f made once (MATERIALIZED): a subquery pulled up would build it per key
  const r = await pool.query({
    text: `WITH s AS MATERIALIZED (${sql} AS f) SELECT bf_contains(f, k) AS m FROM s, unnest($1::int4[]) WITH ORDINALITY AS u(k, n) ORDER BY n`,
    values: [probes],
  });
  probes.forEach((k, i) => assert.strictEqual(f.contains(k), r.rows[i].m, `probe ${k}`));

  // add and set algebra: the client refuses them, as the server does
  assert.throws(() => f.add(501), (err) => err.code === '0A000');
  assert.throws(() => f.union(fb), (err) => err.code === '0A000');
  await assert.rejects(pool.query(`SELECT bf_union(f, f) FROM (${sql} AS f) s`), (err) => err.code === '0A000');
  const info = (await pool.query(`SELECT (bf_info(f)).layout FROM (${sql} AS f) s`)).rows[0];
  assert.strictEqual(info.layout, layout);

  // the server and this client accept and refuse the same text forms
  const t = row.t;
  const variants = [t, `${t} `, t.slice(0, t.indexOf(' layer=')), t.split(' layer=').slice(0, 3).join(' layer='),
    t.split(' layer=').filter((_, i) => i !== 2).join(' layer=')];
  for (const [from, to] of edits) variants.push(t.replace(from, to));
  for (const v of variants) {
    let server;
    try {
      server = (await pool.query('SELECT $1::bloomfilter::bytea AS b', [v])).rows[0].b;
    } catch (e) {
      server = null;
    }
    let local;
    try {
      local = BloomFilter.fromText(v).toBytes();
    } catch (e) {
      assert.strictEqual(e.code, '22P02');
      local = null;
    }
    assert.deepStrictEqual(local && Buffer.from(local), server, `server and client differ on ${JSON.stringify(v.slice(0, 140))}`);
  }
}

test('a growing filter read through node-postgres answers as bf_contains, and the same text forms are accepted', async () => {
  await checkLayered('SELECT bf_add_all(bf_create_growing(10, 0.01), ARRAY(SELECT generate_series(1, 500)))', 'growing', [
    ['capacity=10', 'capacity=010'], ['capacity=10', 'capacity=11'], ['fpr=0.01', 'fpr=1e-2'], ['fpr=0.01', 'fpr=0.02'],
    ['ratio=0.9', 'ratio=0.90'], ['ratio=0.9', 'ratio=9e-1'], ['growth=2', 'growth=02'], ['growth=2', 'growth=3'],
    ['bloomgrowing:1 ', 'bloomgrowing:1  '], [' layer=', '  layer='], ['inserted=10 ', 'inserted=010 '],
    ['bloomgrowing:1', 'bloomgrowing:2'],
  ]);
});

// a union (FORMAT.md §10) of the same keys: a plain filter and a growing one's layers
test('a union read through node-postgres answers as bf_contains, and the same text forms are accepted', async () => {
  const sql = 'SELECT bf_union_layered(bf_add_all(bf_create(100, 0.01), ARRAY(SELECT generate_series(1, 100))), ' +
    'bf_add_all(bf_create_growing(10, 0.01), ARRAY(SELECT generate_series(101, 500))))';
  const { t } = (await pool.query(`SELECT f::text AS t FROM (${sql} AS f) s`)).rows[0];
  const [, capacity, fpr] = t.split(' ');
  await checkLayered(sql, 'union', [
    [capacity, capacity.replace('=', '=0')], [capacity, 'capacity=1'], [capacity, 'capacity=-0'],
    [fpr, `${fpr}0`], [fpr, 'fpr=0'], [fpr, 'fpr=1'], [fpr, 'fpr=-0'], [fpr, 'fpr=1.5'], [fpr, `${fpr} ratio=0.9`],
    ['bloomunion:1 ', 'bloomunion:1  '], [' layer=', '  layer='], ['bloomunion:1', 'bloomunion:2'],
    ['bloomunion:1', 'bloomgrowing:1'],
  ]);
});
