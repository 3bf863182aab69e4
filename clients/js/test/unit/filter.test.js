'use strict';
// BloomFilter behaviour beyond the conformance file: adding, NULLs, hashes,
// copies, set algebra refusals, equality and the estimates' edge cases.

const test = require('node:test');
const assert = require('node:assert');
const { BloomFilter, NonPortableError, typed } = require('../..');

const code = (c) => (err) => err.code === c;

test('added values are found; inserted counts adds that changed a bit', () => {
  const f = BloomFilter.empty({ nbits: 512 * 200, nhashes: 7, seed: 3n, capacity: 10000, fpr: 0.01 });
  assert.strictEqual(f.family, 'none');
  let changed = 0;
  for (let i = 0; i < 10000; i++) changed += f.add(i) ? 1 : 0;
  assert.strictEqual(f.inserted, BigInt(changed));
  assert.strictEqual(f.add(5), false, 'adding again changes nothing');
  for (let i = 0; i < 10000; i++) assert.strictEqual(f.contains(i), true);
  let fp = 0;
  for (let i = 10000; i < 110000; i++) fp += f.contains(i) ? 1 : 0;
  const rate = fp / 100000;
  assert.ok(rate > f.fpr() / 1.3 && rate < f.fpr() * 1.3, `measured ${rate}, bf_fpr ${f.fpr()}`);
  assert.ok(Math.abs(f.cardinality() - 10000) < 500, `cardinality ${f.cardinality()}`);
  assert.strictEqual(f.contains(null), false);
  assert.strictEqual(f.add(null), false);
  assert.strictEqual(f.contains(typed('int8', null)), false);
});

test('hash, containsHash and addHash agree with contains and add', () => {
  const f = BloomFilter.empty({ nbits: 4096, nhashes: 9, seed: -1n });
  f.add('a');
  const h = f.hash('b');
  assert.strictEqual(f.containsHash(h), false);
  f.addHash(BigInt.asIntN(64, h)); // signed works too
  assert.strictEqual(f.contains('b'), true);
  assert.strictEqual(f.hash('a') < 2n ** 64n && f.hash('a') >= 0n, true);
  assert.throws(() => BloomFilter.empty({ nbits: 512, nhashes: 1 }).addHash(1n), code('22023'));
});

test('fromBytes copies its input, toBytes returns a copy', () => {
  const f = BloomFilter.empty({ nbits: 512, nhashes: 2 });
  f.add(1);
  const b = Buffer.concat([Buffer.alloc(3), Buffer.from(f.toBytes())]).subarray(3); // unaligned view
  const g = BloomFilter.fromBytes(b);
  b.fill(0, 64);
  assert.strictEqual(g.contains(1), true);
  const out = g.toBytes();
  out.fill(0, 64);
  assert.strictEqual(g.contains(1), true);
  assert.ok(g.equals(f));
  assert.deepStrictEqual(BloomFilter.from(f.toText()).toBytes(), f.toBytes());
  assert.deepStrictEqual(BloomFilter.from(f.toBytes().buffer).toBytes(), f.toBytes());
});

test('union and intersection, as the server combines', () => {
  const p = { nbits: 512 * 40, nhashes: 5, seed: 1n, capacity: 1000, fpr: 0.02 };
  const a = BloomFilter.empty(p);
  const b = BloomFilter.empty(p);
  for (let i = 0; i < 1000; i++) a.add(i);
  for (let i = 500; i < 1500; i++) b.add(i);
  const u = a.union(b);
  const n = a.intersect(b);
  for (let i = 0; i < 1500; i++) assert.strictEqual(u.contains(i), true);
  for (let i = 500; i < 1000; i++) assert.strictEqual(n.contains(i), true);
  assert.strictEqual(u.inserted, BigInt(Math.round(u.cardinality())));
  assert.ok(n.inserted <= a.inserted && n.inserted <= b.inserted);
  assert.strictEqual(a.inserted, BigInt(a.inserted), 'inputs unchanged');
  assert.ok(!a.equals(u));
  // an empty filter takes the other's family
  const e = BloomFilter.empty(p);
  assert.strictEqual(e.union(a).family, 'integer');
  assert.strictEqual(e.union(a).inserted, a.union(e).inserted);
  assert.strictEqual(e.intersect(e).inserted, 0n);
  // refusals, naming the first difference
  assert.throws(() => a.union(BloomFilter.empty({ ...p, nbits: 512 })), code('22023'));
  assert.throws(() => a.union(BloomFilter.empty({ ...p, nhashes: 4 })), code('22023'));
  assert.throws(() => a.union(BloomFilter.empty({ ...p, seed: 2n })), code('22023'));
  const t = BloomFilter.empty(p);
  t.add('x');
  assert.throws(() => a.union(t), code('42804'));
  assert.throws(() => a.union({}), TypeError);
});

test('equality ignores only the inserted count', () => {
  const p = { nbits: 1024, nhashes: 3 };
  const a = BloomFilter.empty(p);
  a.add(1);
  a.add(1);
  const u = a.union(a);
  assert.ok(u.equals(a));
  const c = BloomFilter.empty({ ...p, capacity: 5 });
  c.add(1);
  assert.ok(!c.equals(a), 'capacity takes part');
});

test('info and saturation', () => {
  const f = BloomFilter.empty({ nbits: 512, nhashes: 1 });
  let i = f.info();
  assert.deepStrictEqual([i.capacity, i.targetFpr, i.bitsSet, i.estimatedCardinality, i.saturated, i.elementType, i.portable],
    [null, null, 0, 0, false, 'none', true]);
  for (let v = 0; v < 2000; v++) f.add(v);
  i = f.info();
  assert.strictEqual(i.saturated, i.bitsSet > 256, 'sized explicitly: saturated past half full');
  assert.strictEqual(i.bytes, 128);
  assert.strictEqual(i.fillRatio, i.bitsSet / 512);
  const g = BloomFilter.empty({ nbits: 512, nhashes: 1 });
  for (let v = 0; v < 100000 && g.bitsSet() < 512; v++) g.add(v);
  assert.strictEqual(g.cardinality(), Infinity);
  assert.strictEqual(g.union(g).inserted > 0n, true, 'finite inserted when every bit is set');
});

test('a non-portable filter can be combined but not queried', () => {
  const f = BloomFilter.empty({ nbits: 512, nhashes: 1 });
  f.add(1);
  const b = f.toBytes();
  b[8] = 13; // family other
  b[9] = 1; // non-portable
  new DataView(b.buffer).setUint32(12, 869, true); // inet's OID
  const np = BloomFilter.fromBytes(b);
  assert.strictEqual(np.portable, false);
  assert.throws(() => np.contains(1), NonPortableError);
  assert.throws(() => np.hash(1), NonPortableError);
  assert.throws(() => np.toText(), NonPortableError);
  assert.strictEqual(np.union(np).portable, false);
  assert.strictEqual(np.info().elementType, 'other(oid 869)');
});

test('family other never names a type of a portable family (FORMAT.md §3.1)', () => {
  const f = BloomFilter.empty({ nbits: 512, nhashes: 1 });
  f.add(1);
  const b = f.toBytes();
  b[8] = 13; // family other
  b[9] = 1; // non-portable
  const dv = new DataView(b.buffer);
  for (const oid of [16, 17, 19, 20, 21, 23, 25, 700, 701, 705, 1042, 1043, 1082, 1114, 1184, 1700, 2950]) {
    dv.setUint32(12, oid, true);
    assert.throws(() => BloomFilter.fromBytes(b), code('22P03'), `OID ${oid}`);
  }
  // types a client cannot know: inet, int4[], a user's type
  for (const oid of [869, 1007, 16384, 4000000000]) {
    dv.setUint32(12, oid, true);
    assert.strictEqual(BloomFilter.fromBytes(b).portable, false, `OID ${oid}`);
  }
});

test('empty() checks its parameters', () => {
  assert.throws(() => BloomFilter.empty({ nbits: 1000, nhashes: 1 }), code('22023'));
  assert.throws(() => BloomFilter.empty({ nbits: 512, nhashes: 65 }), code('22023'));
  assert.throws(() => BloomFilter.empty({ nbits: 512, nhashes: 1, fpr: 1 }), code('22023'));
});
