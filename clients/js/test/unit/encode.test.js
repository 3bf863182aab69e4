'use strict';
// Canonical encodings (docs/FORMAT.md §3) of the JavaScript values the
// client accepts, beyond what the conformance file covers: other spellings
// of the same value, Dates, and the refusals.

const test = require('node:test');
const assert = require('node:assert');
const { typed, bfHash, BloomFilter } = require('../..');
const { canonicalBytes } = require('../../lib/encode');
const { numericText } = require('../../lib/numeric');
const { FAMILY } = require('../../lib/families');

const bytes = (family, v, fields) => Array.from(canonicalBytes(FAMILY[family], fields || null, v));
const le64 = (n) => Array.from(new Uint8Array(new BigInt64Array([BigInt(n)]).buffer));
const code = (c) => (err) => err.code === c;

test('numeric canonical text', () => {
  const cases = {
    '1.50': '1.5', '1.00': '1', '0.000': '0', '-2.0': '-2', '0.5': '0.5', '1e3': '1000',
    '-0': '0', '-0.00': '0', ' 12.3400 ': '12.34', '.5': '0.5', '5.': '5', '+7': '7',
    '00012.0100': '12.01', '1.5e-7': '0.00000015', '-1.5E+2': '-150', '0e999999999': '0',
    NaN: 'NaN', nan: 'NaN', Infinity: 'Infinity', '-inf': '-Infinity', '+Infinity': 'Infinity',
    '123456789012345678901234567890.000000000000000000001': '123456789012345678901234567890.000000000000000000001',
  };
  for (const [input, want] of Object.entries(cases)) assert.strictEqual(numericText(input), want, input);
  assert.strictEqual(numericText(1e21), '1000000000000000000000');
  assert.strictEqual(numericText(1.5e-7), '0.00000015');
  assert.strictEqual(numericText(-0), '0');
  assert.strictEqual(numericText(0.1), '0.1');
  assert.strictEqual(numericText(NaN), 'NaN');
  assert.strictEqual(numericText(-Infinity), '-Infinity');
  assert.strictEqual(numericText(12345678901234567890n), '12345678901234567890');
  assert.strictEqual(numericText({ toString: () => '2.500' }), '2.5');
  for (const bad of ['abc', '1e', '', '.', '+NaN', '1.2.3', '1e5.5', '0x10']) {
    assert.throws(() => numericText(bad), code('22P02'), bad);
  }
  assert.throws(() => numericText('1e200000'), code('22003'));
  assert.throws(() => numericText({}), TypeError);
});

test('integers of every form hash alike; ranges are checked', () => {
  const want = le64(-42);
  for (const v of [-42, -42n, '-42', ' -42 ', typed('int2', -42), typed('int8', '-42')]) {
    assert.deepStrictEqual(bytes('integer', v), want, String(v));
  }
  assert.deepStrictEqual(bytes('integer', 2 ** 53 - 1), le64(2n ** 53n - 1n));
  assert.deepStrictEqual(bytes('integer', -(2 ** 53) + 1), le64(-(2n ** 53n) + 1n));
  assert.deepStrictEqual(bytes('integer', '-9223372036854775808'), le64(-(2n ** 63n)));
  assert.throws(() => bytes('integer', 2n ** 63n), code('22003'));
  assert.throws(() => bytes('integer', typed('int4', 2 ** 31)), code('22003'));
  assert.throws(() => bytes('integer', typed('int2', '-32769')), code('22003'));
  assert.throws(() => bytes('integer', 2 ** 60), code('22003'));
  assert.throws(() => bytes('integer', 1.5), code('42804'));
  assert.throws(() => bytes('integer', 'x1'), code('22P02'));
  assert.throws(() => bytes('integer', true), code('42804'));
  assert.throws(() => bytes('integer', typed('text', '1')), code('42804'));
});

test('floats: -0 is 0, every NaN one value, float4 widened', () => {
  assert.deepStrictEqual(bytes('float', -0), bytes('float', 0));
  const nan = [0, 0, 0, 0, 0, 0, 0xf8, 0x7f];
  assert.deepStrictEqual(bytes('float', NaN), nan);
  assert.deepStrictEqual(bytes('float', 'NaN'), nan);
  assert.deepStrictEqual(bytes('float', typed('float4', NaN)), nan);
  assert.deepStrictEqual(bytes('float', '-Infinity'), bytes('float', -Infinity));
  assert.deepStrictEqual(bytes('float', ' 1.5e3 '), bytes('float', 1500));
  assert.deepStrictEqual(bytes('float', typed('float4', '0.1')), bytes('float', Math.fround(0.1)));
  assert.notDeepStrictEqual(bytes('float', typed('float4', 0.1)), bytes('float', 0.1));
  assert.deepStrictEqual(bytes('float', 3), bytes('float', 3.0));
  assert.throws(() => bytes('float', 'one'), code('22P02'));
  assert.throws(() => bytes('float', 3n), code('42804'));
});

test('text, bpchar, enum and bytea', () => {
  assert.deepStrictEqual(bytes('text', 'é'), [0xc3, 0xa9]);
  assert.deepStrictEqual(bytes('text', typed('bpchar', 'ab  ')), bytes('text', 'ab'));
  assert.deepStrictEqual(bytes('text', typed('varchar', 'ab  ')), bytes('text', 'ab  '));
  assert.deepStrictEqual(bytes('text', Uint8Array.of(0xff)), [0xff]);
  assert.deepStrictEqual(bytes('enum', 'happy'), bytes('text', 'happy'));
  assert.throws(() => bytes('text', 42), code('42804'));
  assert.deepStrictEqual(bytes('bytea', '\\x01ff'), [1, 255]);
  assert.deepStrictEqual(bytes('bytea', '\\x'), []);
  assert.deepStrictEqual(bytes('bytea', 'a\\\\b\\001'), [0x61, 0x5c, 0x62, 1]);
  assert.deepStrictEqual(bytes('bytea', Buffer.from([1, 2])), [1, 2]);
  assert.deepStrictEqual(bytes('bytea', Uint8Array.of(1, 2).buffer), [1, 2]);
  assert.throws(() => bytes('bytea', '\\x1'), code('22P02'));
  assert.throws(() => bytes('bytea', 'a\\b'), code('22P02'));
});

test('uuid in every form PostgreSQL reads', () => {
  const want = bytes('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  assert.strictEqual(want[0], 0xa0);
  for (const v of ['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
    'a0eebc999c0b4ef8bb6d6bb9bd380a11', 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11', Uint8Array.from(want)]) {
    assert.deepStrictEqual(bytes('uuid', v), want, String(v));
  }
  for (const v of ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111',
    '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-']) {
    assert.throws(() => bytes('uuid', v), code('22P02'), v);
  }
  assert.throws(() => bytes('uuid', new Uint8Array(15)), code('42804'));
});

test('booleans', () => {
  for (const v of [true, 't', 'TRUE', ' yes ', 'on', '1']) assert.deepStrictEqual(bytes('boolean', v), [1], String(v));
  for (const v of [false, 'f', 'false', 'no', 'off', '0']) assert.deepStrictEqual(bytes('boolean', v), [0], String(v));
  assert.throws(() => bytes('boolean', 'maybe'), code('22P02'));
  assert.throws(() => bytes('boolean', 1), code('42804'));
});

test('dates', () => {
  assert.deepStrictEqual(bytes('date', '2000-01-01'), le64(0));
  assert.deepStrictEqual(bytes('date', '1999-12-31'), le64(-1));
  assert.deepStrictEqual(bytes('date', '2000-03-01'), le64(60));
  assert.deepStrictEqual(bytes('date', '0001-12-31 BC'), le64(-730120));
  assert.deepStrictEqual(bytes('date', 'infinity'), le64(2 ** 31 - 1));
  assert.deepStrictEqual(bytes('date', '-infinity'), le64(-(2 ** 31)));
  assert.deepStrictEqual(bytes('date', new Date(2000, 0, 2, 23, 59)), le64(1)); // its local calendar day
  assert.throws(() => bytes('date', '2001-02-29'), code('22008'));
  assert.throws(() => bytes('date', '4714-11-23 BC'), code('22008'));
  assert.throws(() => bytes('date', '2000-1-1'), code('22007'));
  assert.throws(() => bytes('date', '0000-01-01'), code('22007'));
  assert.throws(() => bytes('date', 20000101), code('42804'));
});

test('timestamps', () => {
  const us = (n) => le64(n);
  assert.deepStrictEqual(bytes('timestamp', '2000-01-01 00:00:00'), us(0));
  assert.deepStrictEqual(bytes('timestamp', '2000-01-01T00:00:01.5'), us(1500000));
  assert.deepStrictEqual(bytes('timestamp', '1999-12-31 23:59:59.999999'), us(-1));
  assert.deepStrictEqual(bytes('timestamp', '2000-01-01 24:00:00'), bytes('timestamp', '2000-01-02 00:00:00'));
  assert.deepStrictEqual(bytes('timestamp', new Date(2000, 0, 1, 0, 0, 1)), us(1000000)); // local wall clock
  assert.deepStrictEqual(bytes('timestamp', 'infinity'), le64(2n ** 63n - 1n));
  assert.deepStrictEqual(bytes('timestamptz', '-infinity'), le64(-(2n ** 63n)));
  assert.deepStrictEqual(bytes('timestamptz', '2000-01-01 05:30:00+05:30'), us(0));
  assert.deepStrictEqual(bytes('timestamptz', '1999-12-31 22:00:00-02'), us(0));
  assert.deepStrictEqual(bytes('timestamptz', '2000-01-01T00:00:00Z'), us(0));
  assert.deepStrictEqual(bytes('timestamptz', new Date(Date.UTC(2000, 0, 1, 0, 0, 2))), us(2000000));
  assert.deepStrictEqual(bytes('timestamptz', '294276-12-31 23:59:59.999999+00'), le64(9223371331199999999n));
  assert.deepStrictEqual(bytes('timestamptz', '4714-11-24 00:00:00+00 BC'), le64(-211813488000000000n));
  assert.throws(() => bytes('timestamptz', '294277-01-01 00:00:00+00'), code('22008'));
  assert.throws(() => bytes('timestamptz', '2000-01-01 00:00:00'), code('22007'));
  assert.throws(() => bytes('timestamp', '2000-01-01 00:00:00+00'), code('22007'));
  assert.throws(() => bytes('timestamp', '2000-01-01 00:60:00'), code('22008'));
  assert.throws(() => bytes('timestamp', '2000-01-01 00:00:00.1234567'), code('22007'));
  assert.throws(() => bytes('timestamp', 0), code('42804'));
});

test('records: field families from the filter, NULL fields, arity', () => {
  const fields = [FAMILY.integer, FAMILY.text];
  const b = bytes('record', [7, 'x'], fields);
  assert.deepStrictEqual(b, [1, 8, 0, 0, 0, ...le64(7), 4, 1, 0, 0, 0, 0x78]);
  assert.deepStrictEqual(bytes('record', [7n, null], fields), [1, 8, 0, 0, 0, ...le64(7), 4, 0xff, 0xff, 0xff, 0xff]);
  assert.deepStrictEqual(bytes('record', ['7', typed('text', null)], fields), bytes('record', [7, undefined], fields));
  assert.throws(() => bytes('record', [7], fields), code('42804'));
  assert.throws(() => bytes('record', 7, fields), code('42804'));
  assert.throws(() => bytes('record', [typed('numeric', 7), 'x'], fields), code('42804'));
  // the user x attribute key hashes as the server's ROW(user, attr) does
  assert.strictEqual(bfHash([typed('int8', 7), 'x']), bfHash([7n, typed('varchar', 'x')]));
});

test('an empty filter takes the family of the first value', () => {
  const f = BloomFilter.empty({ nbits: 1024, nhashes: 3 });
  assert.strictEqual(f.contains(1), false);
  f.add([1n, 'a', typed('timestamptz', null)]);
  assert.strictEqual(f.family, 'record(integer,text,timestamptz)');
  assert.strictEqual(f.contains([1, 'a', null]), true);
  assert.throws(() => f.contains(1), code('42804'));
  const g = BloomFilter.empty({ nbits: 512, nhashes: 1 });
  assert.throws(() => g.add([1, null]), TypeError);
  g.add(1.5);
  assert.strictEqual(g.family, 'float');
  const h = BloomFilter.empty({ nbits: 512, nhashes: 1 });
  h.add(new Date(0));
  assert.strictEqual(h.family, 'timestamptz');
});
