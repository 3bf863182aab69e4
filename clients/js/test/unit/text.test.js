'use strict';
// The text form (docs/FORMAT.md §5): the number syntax of fpr= (the C
// library's strtod), its printing, strict base64, and the token rules.
// test/e2e checks the accepted and refused variants against the server.

const test = require('node:test');
const assert = require('node:assert');
const { BloomFilter } = require('../..');
const { parseStrtod, formatFpr } = require('../../lib/text');
const base64 = require('../../lib/base64');

test('fpr= reads as strtod does', () => {
  const cases = [
    ['0.5', 0.5], ['\t0.5', 0.5], ['+0.5', 0.5], ['.5', 0.5], ['5.', 5], ['1E-2', 0.01],
    ['0x1p-3', 0.125], ['0X.8P-1', 0.25], ['0x1.fffffffffffffp-1', 0.9999999999999999],
    ['0x1.00000000000008p0', 1], ['0x1.00000000000018p0', 1.0000000000000004],
    ['0e-999', 0], ['-0', -0], ['5e-324', 5e-324], ['0x1p-1074', 5e-324], ['00.25', 0.25],
    ['1e-400', null], ['0x1p-1076', null], ['inf', null], ['-infinity', null], ['nan', null],
    ['nan(1)', null], ['1e', null], ['0x', null], ['0x.p1', null], ['0.1p', null], ['0.1 ', null],
    ['', null], ['1e999', null], ['0.5x', null], ['--1', null],
  ];
  for (const [s, want] of cases) {
    const got = parseStrtod(s);
    assert.ok(Object.is(got, want), `${JSON.stringify(s)}: ${got} !== ${want}`);
  }
});

test('fpr prints as PostgreSQL prints a float8 and reads back', () => {
  const cases = [[0.01, '0.01'], [1e-5, '1e-05'], [0.0001, '0.0001'], [0.30000000000000004, '0.30000000000000004'],
    [5e-324, '5e-324'], [-0, '-0'], [0, '0'], [1.5e-10, '1.5e-10'], [0.123456789, '0.123456789'],
    [0.00012, '0.00012'], [2.5e-5, '2.5e-05']];
  for (const [x, want] of cases) assert.strictEqual(formatFpr(x), want);
  let s = 1;
  for (let i = 0; i < 10000; i++) {
    s = (s * 16807) % 2147483647;
    const x = (s / 2147483647) ** (1 + (i % 40));
    assert.strictEqual(parseStrtod(formatFpr(x)), x);
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
  // accepted spellings (the server's number parsing), printed canonically
  for (const [from, to] of [['nhashes=3', 'nhashes=003'], ['fpr=0.01', 'fpr=1e-2'], ['fpr=0.01', 'fpr=0x1.47ae147ae147bp-7'],
    ['seed=-5', 'seed=-005'], ['capacity=10', 'capacity=010'], ['fpr=0.01', 'fpr=\t0.01']]) {
    const f = BloomFilter.fromText(variant(from, to));
    assert.strictEqual(f.toText(), TEXT, to);
  }
  const refused = [['bloomfilter:1 ', 'bloomfilter:1  '], ['seed=-5', 'seed=+5'], ['nbits=1024', 'nbits=1000'],
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
  // the server's parser stops at a final comma
  assert.deepStrictEqual(BloomFilter.fromText(t.replace('record(integer,text)', 'record(integer,text,)')).toBytes(), r.toBytes());
  for (const bad of ['record(integer,,text)', 'record(,integer,text)', 'record(integer,record)', 'record(integer,none)', 'record()']) {
    assert.throws(() => BloomFilter.fromText(t.replace('record(integer,text)', bad)), (e) => e.code === '22P02', bad);
  }
});
