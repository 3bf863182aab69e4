'use strict';
// The text form (docs/FORMAT.md §5): one text per filter (fpr printed as
// PostgreSQL prints a float8), strict base64, and the token rules.
// test/e2e checks the accepted and refused variants against the server.

const test = require('node:test');
const assert = require('node:assert');
const { BloomFilter } = require('../..');
const { parseFpr, formatFpr } = require('../../lib/text');
const base64 = require('../../lib/base64');

test('fpr prints as PostgreSQL prints a float8 and reads back', () => {
  const cases = [[0.01, '0.01'], [1e-5, '1e-05'], [0.0001, '0.0001'], [0.30000000000000004, '0.30000000000000004'],
    [5e-324, '5e-324'], [-0, '-0'], [0, '0'], [1.5e-10, '1.5e-10'], [0.123456789, '0.123456789'],
    [0.00012, '0.00012'], [2.5e-5, '2.5e-05']];
  for (const [x, want] of cases) assert.strictEqual(formatFpr(x), want);
  let s = 1;
  for (let i = 0; i < 10000; i++) {
    s = (s * 16807) % 2147483647;
    const x = (s / 2147483647) ** (1 + (i % 40));
    assert.strictEqual(parseFpr(formatFpr(x)), x);
  }
});

test('base64: only the canonical encoding of the expected length', () => {
  for (let n = 0; n < 8; n++) {
    const b = Uint8Array.from({ length: n }, (_, i) => 37 * i + 200);
    const s = base64.encode(b);
    assert.strictEqual(s, Buffer.from(b).toString('base64'));
    assert.deepStrictEqual(base64.decodeExact(s, n), b);
    if (n > 0) assert.strictEqual(base64.decodeExact(s, n - 1), null);
  }
  assert.strictEqual(base64.decodeExact('AB==', 1), null); // pad bits set
  assert.strictEqual(base64.decodeExact('AAB=', 2), null);
  assert.strictEqual(base64.decodeExact('AA=A', 2), null);
  assert.strictEqual(base64.decodeExact('A===', 1), null);
  assert.strictEqual(base64.decodeExact('AA-_', 3), null);
  assert.strictEqual(base64.decodeExact('AA A', 3), null);
  assert.deepStrictEqual(base64.decodeExact('AA==', 1), Uint8Array.of(0));
});

const valid = BloomFilter.empty({ nbits: 1024, nhashes: 3, seed: -5n, capacity: 10, fpr: 0.01 });
valid.add(5);
const TEXT = valid.toText();
const variant = (from, to) => TEXT.replace(from, to);

test('the text form round-trips and refuses what the server refuses', () => {
  assert.deepStrictEqual(BloomFilter.fromText(TEXT).toBytes(), valid.toBytes());
  assert.match(TEXT, /^bloomfilter:1 layout=blocked hash=xxh3_64 family=integer nhashes=3 nbits=1024 seed=-5 capacity=10 fpr=0.01 inserted=1 bits=/);
  // one text per filter: other spellings of the same numbers are refused
  const refused = [['nhashes=3', 'nhashes=003'], ['fpr=0.01', 'fpr=1e-2'], ['fpr=0.01', 'fpr=0x1.47ae147ae147bp-7'],
    ['seed=-5', 'seed=-005'], ['capacity=10', 'capacity=010'], ['fpr=0.01', 'fpr=\t0.01'], ['fpr=0.01', 'fpr=0.010'],
['bloomfilter:1 ', 'bloomfilter:1  '], ['seed=-5', 'seed=+5'], ['nbits=1024', 'nbits=1000'],
    ['family=integer', 'family=integer()'], ['family=integer', 'family=Integer'], ['fpr=0.01', 'fpr=1'],
    ['inserted=1', 'inserted=18446744073709551616'], ['nhashes=3', 'nhashes=65'], ['layout=blocked', 'layout=flat'],
    ['family=integer', 'family=none']];
  for (const [from, to] of refused) {
    assert.throws(() => BloomFilter.fromText(variant(from, to)), (e) => e.code === '22P02', to);
  }
  assert.throws(() => BloomFilter.fromText(TEXT + ' '), (e) => e.code === '22P02');
  assert.throws(() => BloomFilter.fromText(TEXT.slice(0, -1)), (e) => e.code === '22P02');
});

test('record families in the text form', () => {
  const r = BloomFilter.empty({ nbits: 512, nhashes: 2 });
  r.add([1, 'x']);
  const t = r.toText();
  assert.match(t, / family=record\(integer,text\) /);
  assert.deepStrictEqual(BloomFilter.fromText(t).toBytes(), r.toBytes());
  for (const bad of ['record(integer,text,)', 'record(integer,,text)', 'record(,integer,text)', 'record(integer,record)', 'record(integer,none)', 'record()']) {
    assert.throws(() => BloomFilter.fromText(t.replace('record(integer,text)', bad)), (e) => e.code === '22P02', bad);
  }
});
