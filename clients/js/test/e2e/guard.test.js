'use strict';
// End to end: scan guards (bloomfilter.guard_scans) through node-postgres
// named statements.  Once the server uses its generic plan (after the
// fifth execution), a lookup of an absent key reads the bloomfilter
// index's page alone, not the btree's: pages per lookup counted from the
// table's pg_statio counters, with the guard on and off; a key inserted
// after the plan was made is found.  Run inside pg_virtualenv with the
// extension installed (test/suites/72-client-js.sh).

const test = require('node:test');
const assert = require('node:assert');
const pg = require('pg');

const DB = 'bf_js_e2e_guard';
const ROWS = 100000;
const LOOKUP = 'SELECT id FROM guard_users WHERE email = $1';
let admin;

test.before(async () => {
  admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  const c = new pg.Client({ database: DB });
  await c.connect();
  await c.query('CREATE EXTENSION bloomfilter');
  await c.query('CREATE TABLE guard_users (id int8, email text)');
  await c.query(`INSERT INTO guard_users SELECT g, 'user' || g || '@example.com'
    FROM generate_series(1, ${ROWS}) g`);
  await c.query('CREATE INDEX guard_users_email ON guard_users (email)');
  await c.query('CREATE INDEX guard_users_email_bf ON guard_users USING bloomfilter (email)');
  await c.query('VACUUM ANALYZE guard_users');
  await c.end();
});

test.after(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.end();
});

// n keys the filter says are absent (no false positive among them)
async function absentKeys(c, n) {
  const r = await c.query(`SELECT k FROM (SELECT 'absent' || g || '@example.org' AS k
    FROM generate_series(1, 1000) g) s
    WHERE NOT bf_index_contains('guard_users_email_bf', k) LIMIT $1`, [n]);
  return r.rows.map((row) => row.k);
}

// blocks of guard_users and its indexes read so far, this session's counts flushed first
async function pages(c) {
  await c.query('SELECT pg_stat_force_next_flush()');
  const r = await c.query(`SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) +
    coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0) AS n
    FROM pg_statio_user_tables WHERE relname = 'guard_users'`);
  return Number(r.rows[0].n);
}

const lookup = (c, key) => c.query({ name: 'guard_lookup', text: LOOKUP, values: [key] });

// pages per lookup of executions 6 to 15 of the named statement, and the
// server's count of its generic plans
async function pagesPerLookup(guard) {
  const c = new pg.Client({ database: DB });
  await c.connect();
  try {
    const keys = await absentKeys(c, 15);
    await c.query(`SET bloomfilter.guard_scans = ${guard ? 'on' : 'off'}`);
    for (const k of keys.slice(0, 5)) assert.strictEqual((await lookup(c, k)).rowCount, 0);
    const before = await pages(c);
    for (const k of keys.slice(5)) assert.strictEqual((await lookup(c, k)).rowCount, 0);
    const after = await pages(c);
    const g = await c.query(`SELECT max(generic_plans) AS n FROM pg_prepared_statements
      WHERE statement = $1`, [LOOKUP]);
    return { perLookup: (after - before) / 10, generic: Number(g.rows[0].n) };
  } finally {
    await c.end();
  }
}

test('named statements: the guard is used after the fifth execution', async () => {
  const on = await pagesPerLookup(true);
  const off = await pagesPerLookup(false);
  console.log(`node-postgres named statements: pages per absent lookup, guarded ${on.perLookup}, `
    + `btree alone ${off.perLookup} (generic plans ${on.generic}, ${off.generic})`);
  assert.ok(on.generic >= 10 && off.generic >= 10, 'the generic plan was used');
  assert.ok(on.perLookup <= 1.5, `guarded: ${on.perLookup} pages per lookup`);
  assert.ok(off.perLookup >= 2, `btree alone: ${off.perLookup} pages per lookup`);
  assert.ok(on.perLookup < off.perLookup);
});

test('a key inserted after the plan was made is found', async () => {
  const c = new pg.Client({ database: DB });
  await c.connect();
  try {
    const keys = await absentKeys(c, 8);
    for (const k of keys.slice(0, 7)) assert.strictEqual((await lookup(c, k)).rowCount, 0);
    const w = new pg.Client({ database: DB });
    await w.connect();
    await w.query('INSERT INTO guard_users VALUES (-1, $1)', [keys[7]]);
    const r = await lookup(c, keys[7]);
    assert.deepStrictEqual(r.rows.map((row) => Number(row.id)), [-1]);
    await w.query('DELETE FROM guard_users WHERE id = -1');
    await w.end();
  } finally {
    await c.end();
  }
});
