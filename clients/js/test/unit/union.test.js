'use strict';
// Unions (FORMAT.md §10) beyond the conformance file: read-only (add, set
// algebra refused), introspection, equality, the text forms refused, and
// reading them through the Refresher (whole and patched) and the
// node-postgres type parser.

const test = require('node:test');
const assert = require('node:assert');
const { BloomFilter, BloomFilterError, Refresher } = require('../..');
const { growingBytes } = require('../../lib/growing');
const { FakeServer } = require('./patch-builder');
const layered = require('./layered');
const { layerOffsets, checkTypeParsers } = layered;

const unions = layered.byName('unions');
const INTS = 'int8 keys: plain filters of 100 and 5000 keys'; // keys 1..5100, seed 7
const bytesOf = (name) => layered.bytesOf(unions[name]);
const ints = () => BloomFilter.fromBytes(bytesOf(INTS));
const grown = () => layered.bytesOf(layered.doc.growing[0]);

const refused = (err) => err instanceof BloomFilterError && err.code === '0A000' &&
  /union/.test(err.message) && /read-only/.test(err.message);

test('adding to a union and set algebra are refused, and change nothing', () => {
  const f = ints();
  const before = f.toBytes();
  assert.throws(() => f.add(9999), refused);
  assert.throws(() => f.addHash(f.hash(9999)), refused);
  const plain = BloomFilter.empty({ nbits: 512, nhashes: 4, seed: 7n });
  const g = BloomFilter.fromBytes(grown());
  for (const run of [() => f.union(f), () => f.intersect(f), () => f.union(plain), () => plain.union(f),
    () => plain.intersect(f), () => f.intersect(g)]) {
    assert.throws(run, refused);
  }
  assert.throws(() => g.union(f), (err) => err.code === '0A000' && /growing/.test(err.message));
  assert.deepStrictEqual(f.toBytes(), before);
});

test('introspection: isUnion, layout, layers and the sums of bf_info', () => {
  const f = ints();
  assert.strictEqual(f.isUnion, true);
  assert.strictEqual(f.isGrowing, false);
  assert.strictEqual(f.layout, 'union');
  assert.strictEqual(f.growth, null);
  assert.strictEqual(f.ratio, null);
  assert.strictEqual(f.nhashes, null);
  assert.strictEqual(f.seed, 7n);
  assert.deepStrictEqual(f.layers.map((l) => l.capacity), [100n, 5000n]);
  assert.deepStrictEqual(f.layers.map((l) => l.targetFpr), [0.01, 0.001]);
  assert.strictEqual(f.capacity, 5100n);
  assert.strictEqual(f.targetFpr, 1 - (1 - 0.01) * (1 - 0.001));
  const i = f.info();
  assert.strictEqual(i.layout, 'union');
  assert.strictEqual(i.capacity, 5100n);
  assert.strictEqual(i.nbits, f.layers.reduce((n, l) => n + l.nbits, 0));
  assert.strictEqual(i.inserted, f.layers.reduce((n, l) => n + l.inserted, 0n));
  assert.match(String(f), /union, layers=2/);
  for (let k = 1; k <= 5100; k += 13) assert.strictEqual(f.contains(k), true, `key ${k}`);
});

test('equality: the layers\' inserted counters aside; never equal to another form', () => {
  const raw = bytesOf(INTS);
  const f = BloomFilter.fromBytes(raw);
  const counters = raw.slice();
  for (const off of layerOffsets(raw)) new DataView(counters.buffer).setBigUint64(off + 32, 3n, true);
  assert.ok(f.equals(BloomFilter.fromBytes(counters)));
  const bit = raw.slice();
  bit[bit.length - 1] ^= 0x40;
  assert.ok(!f.equals(BloomFilter.fromBytes(bit)));
  // a growing filter's layers as a union: another form, never equal
  const g = grown();
  const layers = layerOffsets(g).map((o, i, a) => g.slice(o, a[i + 1] || g.length));
  const capacity = BloomFilter.fromBytes(g).capacity;
  const u = BloomFilter.fromBytes(growingBytes({ union: true, growth: 0, capacity, fpr: 0.5, ratio: 0 }, layers));
  assert.ok(u.isUnion && !u.equals(BloomFilter.fromBytes(g)) && !BloomFilter.fromBytes(g).equals(u));
  assert.deepStrictEqual(u.toBytes().subarray(64), g.subarray(64));
});

test('the bytes: reserved fields and the capacity sum', () => {
  const raw = bytesOf(INTS);
  const edit = (fn) => { const b = raw.slice(); fn(new DataView(b.buffer)); return b; };
  for (const [name, b] of [
    ['growth 2', edit((dv) => dv.setUint32(8, 2, true))],
    ['ratio 0.9', edit((dv) => dv.setFloat64(32, 0.9, true))],
    ['ratio -0', edit((dv) => dv.setFloat64(32, -0, true))],
    ['capacity 5101', edit((dv) => dv.setBigInt64(16, 5101n, true))],
    ['fpr NaN', edit((dv) => dv.setFloat64(24, NaN, true))],
    ['fpr 1.5', edit((dv) => dv.setFloat64(24, 1.5, true))],
    ['magic BLMG', edit((dv) => dv.setUint8(3, 0x47))],
  ]) {
    assert.throws(() => BloomFilter.fromBytes(b), (err) => err.code === '22P03', name);
  }
  for (const p of [0, 1]) assert.strictEqual(BloomFilter.fromBytes(edit((dv) => dv.setFloat64(24, p, true))).isUnion, true);
  // capacities that add up past the largest bigint, whatever the header holds
  const offs = layerOffsets(raw);
  const big = edit((dv) => {
    dv.setBigInt64(offs[0] + 40, 2n ** 62n, true);
    dv.setBigInt64(offs[1] + 40, 2n ** 62n, true);
    dv.setBigInt64(16, -(2n ** 63n), true);
  });
  assert.throws(() => BloomFilter.fromBytes(big), (err) => err.code === '22P03');
  new DataView(big.buffer).setBigInt64(offs[1] + 40, 2n ** 62n - 1n, true);
  new DataView(big.buffer).setBigInt64(16, 2n ** 63n - 1n, true);
  assert.strictEqual(BloomFilter.fromBytes(big).capacity, 2n ** 63n - 1n);
});

test('the text form: only the one the server prints, errors with 22P02', () => {
  const t = unions[INTS].text;
  const fpr = t.split(' ')[2];
  const head = t.slice(0, t.indexOf(' layer='));
  const layers = t.split(' layer=').slice(1);
  for (const v of [
    t.replace('capacity=5100', 'capacity=05100'), t.replace('capacity=5100', 'capacity=5101'),
    t.replace('capacity=5100', 'capacity=-1'), t.replace(fpr, `${fpr}0`), t.replace(fpr, 'fpr=2'),
    t.replace(fpr, 'fpr=nan'), t.replace(fpr, `${fpr} ratio=0 growth=0`),
    t.replace(`capacity=5100 ${fpr}`, `${fpr} capacity=5100`), t.replace('bloomunion:1', 'bloomunion:2'),
    t.replace('bloomunion:1 ', 'bloomunion:1  '), head, `${head} `, `${t} `, `${t} layer=`,
    [head, layers[1]].join(' layer='), [head, head, ...layers].join(' layer='),
    [head, ...Array(65).fill(layers[0])].join(' layer='),
    t.replace(`bloomunion:1 capacity=5100 ${fpr}`, `bloomgrowing:1 capacity=5100 ${fpr} ratio=0.9 growth=2`),
  ]) {
    assert.throws(() => BloomFilter.fromText(v), (err) => err.code === '22P02', JSON.stringify(v.slice(0, 100)));
  }
  // the first layer alone, its capacity the sum: a union too
  const one = [head.replace('capacity=5100', 'capacity=100'), layers[0]].join(' layer=');
  assert.strictEqual(BloomFilter.fromText(one).layers.length, 1);
  assert.deepStrictEqual(BloomFilter.from(t).toBytes(), bytesOf(INTS));
});

test('the Refresher keeps a union current (whole, patched, and from a plain filter)', async () => {
  const raw = bytesOf(INTS);
  const offs = layerOffsets(raw);
  const first = BloomFilter.fromBytes(raw.subarray(offs[0], offs[1]));
  const server = new FakeServer({ toBytes: () => first.toBytes() });
  const r = new Refresher(server, { interval: 60000 });
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.filter.isUnion, false);
  // the table became distributed: a full refresh to a union
  server.filter = { toBytes: () => raw.slice() };
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.filter.isUnion, true);
  const fulls = r.status().fullRefreshes;
  // a bit set in a shard's layer: a partial patch of the same length
  const key = [...Array(100000).keys()].map((i) => 20000 + i).find((k) => !r.contains(k));
  const next = raw.slice();
  const layer1 = BloomFilter.fromBytes(raw.subarray(offs[1]));
  layer1.addHash(r.filter.hash(key));
  next.set(layer1.toBytes(), offs[1]);
  server.filter = { toBytes: () => next.slice() };
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.status().fullRefreshes, fulls, 'the last refresh was a partial patch');
  assert.strictEqual(r.contains(key), true);
  assert.deepStrictEqual(r.filter.toBytes(), next);
});

test('the node-postgres type parser reads unions', async () => {
  await checkTypeParsers(unions[INTS], (f) => f.isUnion, 5100);
});
