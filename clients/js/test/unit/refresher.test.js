'use strict';
// The Refresher against a fake server: full then incremental refreshes,
// lost connections, bad patches, atomic swaps and the timer.

const test = require('node:test');
const assert = require('node:assert');
const { BloomFilter, Refresher, BloomFilterError } = require('../..');
const { FakeServer, makePatch } = require('./patch-builder');

function serverFilter(n) {
  const f = BloomFilter.empty({ nbits: 512 * 64, nhashes: 7, capacity: 3000, fpr: 0.01 });
  for (let i = 0; i < n; i++) f.add(i);
  return f;
}

// wait for a condition (timers on a loaded machine are late, so no fixed sleeps)
async function until(cond, ms = 20000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((res) => setTimeout(res, 5));
  }
}

function clock() {
  let t = 1000;
  const now = () => t;
  now.advance = (ms) => { t += ms; };
  return now;
}

test('first a full fetch, then only changed ranges; new keys are found', async () => {
  const server = new FakeServer(serverFilter(1000));
  const now = clock();
  const r = new Refresher(server, { interval: 1000, now });
  assert.strictEqual(r.filter, null);
  assert.throws(() => r.contains(1), (e) => e instanceof BloomFilterError && e.code === '55000');
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.contains(999), true);
  assert.strictEqual(r.contains(1000), false);
  const fullBytes = r.status().bytesReceived;
  server.filter.add(1000);
  now.advance(1000);
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.contains(1000), true);
  assert.deepStrictEqual(r.filter.toBytes(), server.filter.toBytes());
  const s = r.status();
  assert.deepStrictEqual(server.calls, [null, '0/1']);
  assert.strictEqual(s.lsn, '0/2');
  assert.strictEqual(s.refreshes, 2);
  assert.strictEqual(s.fullRefreshes, 1);
  assert.ok(s.bytesReceived - fullBytes < fullBytes / 10, 'a refresh after one add sends little');
  assert.strictEqual(s.ageMs, 0);
  assert.strictEqual(s.stale, false);
});

test('a lost connection keeps the last good copy and reports its age and the error', async () => {
  const server = new FakeServer(serverFilter(100));
  const now = clock();
  const errors = [];
  const r = new Refresher(server, { interval: 1000, now, onError: (e) => errors.push(e) });
  await r.refresh();
  const copy = r.filter;
  server.fail = new Error('connection terminated');
  server.filter.add(5000);
  now.advance(2500);
  assert.strictEqual(await r.refresh(), false);
  now.advance(1000);
  assert.strictEqual(await r.refresh(), false);
  assert.strictEqual(r.filter, copy, 'still the old copy');
  assert.strictEqual(r.contains(50), true);
  assert.strictEqual(r.contains(5000), false);
  let s = r.status();
  assert.strictEqual(s.lastError.message, 'connection terminated');
  assert.strictEqual(s.consecutiveErrors, 2);
  assert.strictEqual(s.ageMs, 3500);
  assert.strictEqual(s.stale, true, 'older than 3 intervals');
  assert.strictEqual(errors.length, 2);
  server.fail = null;
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.contains(5000), true);
  s = r.status();
  assert.strictEqual(s.consecutiveErrors, 0);
  assert.strictEqual(s.fullRefreshes, 1, 'a network error does not force a full fetch');
});

test('a bad patch changes nothing and the next refresh fetches everything', async () => {
  const server = new FakeServer(serverFilter(100));
  const r = new Refresher(server);
  await r.refresh();
  const copy = r.filter;
  const before = copy.toBytes();
  const good = server.changes.bind(server);
  // a run that would break the header: the result does not parse
  server.changes = async () => ({ nextLsn: '0/99', fullRefresh: false, patch: makePatch({ total: before.length, runs: [[0, new Uint8Array(64)]] }) });
  assert.strictEqual(await r.refresh(), false);
  assert.strictEqual(r.filter, copy);
  assert.deepStrictEqual(copy.toBytes(), before);
  // a patch for a value of another size (the index was rebuilt bigger)
  server.changes = async () => ({ nextLsn: '0/9a', fullRefresh: false, patch: makePatch({ total: before.length + 64 }) });
  assert.strictEqual(await r.refresh(), false);
  assert.strictEqual(r.filter, copy);
  server.changes = good;
  server.filter.add(777777);
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(server.calls[server.calls.length - 1], null, 'asked for everything');
  assert.strictEqual(r.contains(777777), true);
  assert.strictEqual(r.status().fullRefreshes, 2);
});

test('the swap is atomic: readers see the old copy until the new one is complete', async () => {
  const server = new FakeServer(serverFilter(10));
  const r = new Refresher(server);
  await r.refresh();
  const old = r.filter;
  let release;
  const gate = new Promise((res) => { release = res; });
  const good = server.changes.bind(server);
  server.changes = async (since) => { await gate; return good(since); };
  server.filter.add(424242);
  const pending = r.refresh();
  const again = r.refresh();
  assert.strictEqual(pending, again, 'concurrent refreshes share one');
  assert.strictEqual(r.filter, old);
  assert.strictEqual(r.contains(424242), false);
  release();
  assert.strictEqual(await pending, true);
  assert.notStrictEqual(r.filter, old);
  assert.strictEqual(r.contains(424242), true);
  assert.strictEqual(old.contains(424242), false, 'the old copy was not modified');
});

test('a source answering with the whole value (no changes function)', async () => {
  const f = serverFilter(10);
  const r = new Refresher({ changes: async () => ({ nextLsn: null, value: f.toBytes() }) });
  await r.refresh();
  await r.refresh();
  assert.strictEqual(r.status().fullRefreshes, 2);
  assert.strictEqual(r.contains(9), true);
  const bad = new Refresher({ changes: async () => ({ nextLsn: null }) });
  assert.strictEqual(await bad.refresh(), false);
  assert.ok(bad.status().lastError instanceof BloomFilterError);
});

test('the timer refreshes every interval, does not hold the process, and stops', async () => {
  const server = new FakeServer(serverFilter(10));
  const r = new Refresher(server, { interval: 20 });
  assert.strictEqual(await r.start(), r);
  assert.strictEqual(r.status().running, true);
  assert.strictEqual(r._timer.hasRef(), false, 'unref\'d');
  await until(() => r.status().refreshes >= 3);
  r.stop();
  if (r._inflight) await r._inflight;
  const n = r.status().refreshes;
  await new Promise((res) => setTimeout(res, 60));
  assert.strictEqual(r.status().refreshes, n, 'stopped');
  assert.strictEqual(r.status().running, false);
});

test('start() rejects when the first refresh fails, and keeps trying', async () => {
  const server = new FakeServer(serverFilter(10));
  server.fail = new Error('no server yet');
  const r = new Refresher(server, { interval: 20 });
  await assert.rejects(r.start(), /no server yet/);
  server.fail = null;
  await until(() => r.filter !== null);
  assert.strictEqual(r.contains(3), true);
  r.stop();
  assert.throws(() => new Refresher({}), TypeError);
  assert.throws(() => new Refresher(server, { interval: 0 }), RangeError);
});
