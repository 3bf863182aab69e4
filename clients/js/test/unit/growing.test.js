'use strict';
// Growing filters (FORMAT.md §9) beyond the conformance file: what a client
// refuses to do with them (add, set algebra), equality, introspection, the
// text forms refused, and reading them through the Refresher and the
// node-postgres type parser.

const test = require('node:test');
const assert = require('node:assert');
const { BloomFilter, BloomFilterError, NonPortableError, Refresher } = require('../..');
const { growingBytes } = require('../../lib/growing');
const { FakeServer } = require('./patch-builder');
const layered = require('./layered');
const { layerOffsets, checkTypeParsers } = layered;

const growing = layered.byName('growing');
const SIX = 'int8 keys, capacity 20, growth 2: 1000 keys in 6 layers';
const EMPTY = 'empty growing filter';
const bytesOf = (name) => layered.bytesOf(growing[name]);
const six = () => BloomFilter.fromBytes(bytesOf(SIX));

const refused = (err) => err instanceof BloomFilterError && err.code === '0A000' &&
  /growing/.test(err.message) && /added to on the server/.test(err.message);

test('adding to a growing filter is refused, and changes nothing', () => {
  const f = six();
  const before = f.toBytes();
  assert.throws(() => f.add(5000), refused);
  assert.throws(() => f.add(null), refused);
  assert.throws(() => f.addHash(f.hash(5000)), refused);
  assert.throws(() => BloomFilter.fromBytes(bytesOf(EMPTY)).add('x'), refused);
  assert.deepStrictEqual(f.toBytes(), before);
});

test('union and intersection with a growing filter are refused', () => {
  const g = six();
  const plain = BloomFilter.empty({ nbits: 512, nhashes: 4, seed: 11n });
  for (const run of [() => g.union(g), () => g.intersect(g), () => g.union(plain), () => plain.union(g),
    () => plain.intersect(g), () => g.intersect(plain)]) {
    assert.throws(run, refused);
  }
  assert.throws(() => g.union('x'), TypeError);
});

test('introspection: isGrowing, layers, growth, ratio and the sums of bf_info', () => {
  const f = six();
  assert.strictEqual(f.isGrowing, true);
  assert.strictEqual(f.growth, 2);
  assert.strictEqual(f.ratio, 0.9);
  assert.strictEqual(f.targetFpr, 0.01);
  assert.strictEqual(f.nhashes, null);
  assert.strictEqual(f.family, 'integer');
  assert.strictEqual(f.seed, 11n);
  const layers = f.layers;
  assert.deepStrictEqual(layers.map((l) => l.nbits), [512, 1024, 1536, 3072, 5632, 11264]);
  assert.deepStrictEqual(layers.map((l) => l.capacity), [20n, 40n, 80n, 160n, 320n, 640n]);
  assert.deepStrictEqual(layers.map((l) => l.inserted), [20n, 40n, 80n, 160n, 320n, 380n]);
  assert.ok(layers.every((l) => Number.isInteger(l.nhashes) && l.nhashes >= 1));
  // the rates of §9.1: p(1 - r), then times r for each layer
  let p = 0.01 * (1 - 0.9);
  for (const l of layers) {
    assert.strictEqual(l.targetFpr, p);
    p *= 0.9;
  }
  assert.strictEqual(f.nbits, 23040);
  assert.strictEqual(f.nblocks, 45);
  assert.strictEqual(f.capacity, 1260n);
  assert.strictEqual(f.inserted, 1000n);
  assert.strictEqual(f.byteLength, bytesOf(SIX).length);
  const i = f.info();
  assert.strictEqual(i.layout, 'growing');
  assert.strictEqual(i.nbits, 23040);
  assert.strictEqual(i.nhashes, null);
  assert.strictEqual(i.capacity, 1260n);
  assert.strictEqual(i.targetFpr, 0.01);
  assert.strictEqual(i.inserted, 1000n);
  assert.strictEqual(i.bytes, f.byteLength);
  assert.strictEqual(i.elementType, 'integer');
  assert.strictEqual(i.portable, true);
  assert.strictEqual(i.fillRatio, i.bitsSet / 23040);
  assert.match(String(f), /growing, layers=6/);

  // a plain filter is one layer
  const plain = BloomFilter.empty({ nbits: 1024, nhashes: 3, capacity: 50, fpr: 0.02 });
  assert.strictEqual(plain.isGrowing, false);
  assert.strictEqual(plain.growth, null);
  assert.strictEqual(plain.ratio, null);
  assert.deepStrictEqual(plain.layers, [{ nbits: 1024, nhashes: 3, capacity: 50n, targetFpr: 0.02, inserted: 0n }]);
  assert.strictEqual(plain.info().layout, 'blocked');
});

test('a growing filter\'s lookups by hash, and no false negatives', () => {
  const f = six();
  for (let k = 1; k <= 1000; k++) assert.strictEqual(f.containsHash(f.hash(k)), true, `key ${k}`);
  assert.strictEqual(f.contains(null), false);
  const e = BloomFilter.fromBytes(bytesOf(EMPTY));
  assert.strictEqual(e.contains(1), false);
  assert.strictEqual(e.containsHash(123n), false);
});

test('equality: the layers\' inserted counters aside; never equal to a plain filter', () => {
  const raw = bytesOf(SIX);
  const f = BloomFilter.fromBytes(raw);
  const offs = layerOffsets(raw);
  assert.strictEqual(offs.length, 6);

  const counters = raw.slice();
  for (const off of offs) new DataView(counters.buffer).setBigUint64(off + 32, 7n, true);
  const g = BloomFilter.fromBytes(counters);
  assert.ok(f.equals(g) && g.equals(f));
  assert.notDeepStrictEqual(g.toBytes(), raw);

  const bit = raw.slice();
  bit[offs[3] + 64 + 5] ^= 0x10; // a bit of layer 3
  assert.ok(!f.equals(BloomFilter.fromBytes(bit)));

  // layer 0 alone, read as the plain filter it is
  const layer0 = BloomFilter.fromBytes(raw.subarray(offs[0], offs[1]));
  assert.strictEqual(layer0.isGrowing, false);
  assert.ok(!f.equals(layer0) && !layer0.equals(f));
  assert.ok(!f.equals(BloomFilter.fromBytes(bytesOf(EMPTY))));
  assert.ok(!f.equals(null));

  // the plain filter's equality is unchanged
  const p = BloomFilter.empty({ nbits: 512, nhashes: 2 });
  const q = BloomFilter.empty({ nbits: 512, nhashes: 2 });
  p.add(1);
  q.add(1);
  q.add(1);
  assert.ok(p.equals(q));
  q.add(2);
  assert.ok(!p.equals(q));
});

test('the text form: only the one the server prints, errors with 22P02', () => {
  const t = growing[SIX].text;
  const edits = [
    ['capacity=20', 'capacity=020'], ['capacity=20', 'capacity=+20'], ['capacity=20', 'capacity=0'],
    ['capacity=20', 'capacity=21'], ['fpr=0.01', 'fpr=1e-2'], ['fpr=0.01', 'fpr=0.010'], ['fpr=0.01', 'fpr=0.02'],
    ['fpr=0.01', 'fpr=1'], ['fpr=0.01', 'fpr=nan'], ['ratio=0.9', 'ratio=0.90'], ['ratio=0.9', 'ratio=0.8'],
    ['ratio=0.9', 'ratio=1'], ['growth=2', 'growth=02'], ['growth=2', 'growth=3'], ['growth=2', 'growth=1'],
    ['growth=2', 'growth=17'], ['bloomgrowing:1 ', 'bloomgrowing:1  '], [' layer=', '  layer='], [' layer=', ' layer= '],
    [' layer=', ' layers='], ['inserted=20 ', 'inserted=020 '], ['seed=11', 'seed=12'],
    ['family=integer', 'family=text'], ['growth=2 ', 'growth=2 junk '],
  ];
  for (const [from, to] of edits) {
    const v = t.replace(from, to);
    assert.notStrictEqual(v, t, from);
    assert.throws(() => BloomFilter.fromText(v), (err) => err.code === '22P02', `${from} -> ${to}`);
  }
  const headerOnly = t.slice(0, t.indexOf(' layer='));
  for (const v of [headerOnly, `${headerOnly} `, `${t} `, `${t} layer=`, t.replace('bloomgrowing:1', 'bloomgrowing:2'),
    t.replace('bloomgrowing:1 ', 'bloomgrowing:1\t'), t.slice(0, -4)]) {
    assert.throws(() => BloomFilter.fromText(v), (err) => err.code === '22P02', JSON.stringify(v.slice(0, 80)));
  }
  // the first layers alone are a growing filter too; a layer dropped in the
  // middle or repeated breaks the chain of capacities and rates
  const layers = t.split(' layer=');
  assert.strictEqual(BloomFilter.fromText(layers.slice(0, 3).join(' layer=')).layers.length, 2);
  assert.throws(() => BloomFilter.fromText(layers.filter((_, i) => i !== 2).join(' layer=')), (err) => err.code === '22P02');
  assert.throws(() => BloomFilter.fromText(layers.concat([layers[6]]).join(' layer=')), (err) => err.code === '22P02');
  // the same text parsed twice is the same value, and fromText and from agree
  assert.deepStrictEqual(BloomFilter.from(t).toBytes(), bytesOf(SIX));
});

test('non-portable growing filters: bytes parse, lookups and the text form refuse', () => {
  const raw = bytesOf(EMPTY);
  const off = layerOffsets(raw)[0];
  raw[off + 8] = 13; // family other
  raw[off + 9] = 1; // non-portable
  new DataView(raw.buffer).setUint32(off + 12, 869, true); // inet
  const f = BloomFilter.fromBytes(raw);
  assert.strictEqual(f.portable, false);
  assert.strictEqual(f.isGrowing, true);
  assert.throws(() => f.contains(1), NonPortableError);
  assert.throws(() => f.toText(), NonPortableError);
  assert.throws(() => f.add(1), refused);
  const text = growing[EMPTY].text.replace('family=none', 'family=other(pg_catalog.inet)');
  assert.throws(() => BloomFilter.fromText(text), NonPortableError);
});

test('a layer capacity past the largest bigint is refused', () => {
  const raw = bytesOf(EMPTY);
  const off = layerOffsets(raw)[0];
  const layer0 = raw.slice(off);
  const c = 2n ** 62n;
  new DataView(layer0.buffer).setBigInt64(40, c, true);
  const header = { growth: 2, capacity: c, fpr: 0.01, ratio: 0.9 };
  assert.strictEqual(BloomFilter.fromBytes(growingBytes(header, [layer0])).capacity, c);
  const layer1 = layer0.slice();
  new DataView(layer1.buffer).setBigInt64(40, -(2n ** 63n), true); // c * 2 wrapped
  new DataView(layer1.buffer).setFloat64(48, 0.01 * (1 - 0.9) * 0.9, true);
  assert.throws(() => BloomFilter.fromBytes(growingBytes(header, [layer0, layer1])), (err) => err.code === '22P03');
});

test('the Refresher keeps a growing filter current (full and incremental)', async () => {
  const raw = bytesOf(SIX);
  const server = new FakeServer({ toBytes: () => raw.slice() });
  const r = new Refresher(server, { interval: 60000 });
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.filter.isGrowing, true);
  for (let k = 1; k <= 1000; k += 37) assert.strictEqual(r.contains(k), true);
  // a bit set in the last layer: a partial patch of the same length
  const key = [...Array(100000).keys()].map((i) => 2000 + i).find((k) => !r.contains(k));
  const next = raw.slice();
  const f6 = BloomFilter.fromBytes(raw.subarray(layerOffsets(raw)[5]));
  const counted = f6.toBytes();
  f6.addHash(r.filter.hash(key));
  next.set(f6.toBytes(), layerOffsets(raw)[5]);
  assert.notDeepStrictEqual(f6.toBytes(), counted);
  server.filter = { toBytes: () => next.slice() };
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.status().fullRefreshes, 1, 'the second refresh was a partial patch');
  assert.strictEqual(r.contains(key), true);
  assert.deepStrictEqual(r.filter.toBytes(), next);
  // a value that grew: a full refresh
  server.filter = { toBytes: () => bytesOf(EMPTY) };
  assert.strictEqual(await r.refresh(), true);
  assert.strictEqual(r.contains(1), false);
});

test('the node-postgres type parser reads both forms', async () => {
  const parsers = await checkTypeParsers(growing[SIX], (f) => f.isGrowing, 500);
  const plain = BloomFilter.empty({ nbits: 512, nhashes: 2 });
  assert.strictEqual(parsers['16400/text'](plain.toText()).isGrowing, false);
});
