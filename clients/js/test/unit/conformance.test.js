'use strict';
// The server's answers in test/conformance/conformance.json (API contract
// §2), reproduced by this client: hashes, probes (false positives
// included), refusals, estimates, set algebra and every malformed value.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { BloomFilter, BloomWindow, NonPortableError, typed, bfHash } = require('../..');
const { SQL_TYPES } = require('../../lib/families');

const FILE = path.join(__dirname, '../../../../test/conformance/conformance.json');
const data = JSON.parse(fs.readFileSync(FILE, 'utf8'));
const b64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));

// a KEY of the file as this client's value: the printed text, typed
function keyValue(k) {
  if (k.type === 'record') return k.fields.map(keyValue);
  return typed(SQL_TYPES[k.type] ? k.type : data.types[k.type], k.value);
}

function close(a, b) {
  if (b === 'Infinity') return a === Infinity;
  return Math.abs(a - Number(b)) <= 1e-9 * Math.abs(Number(b));
}

// the estimates of a filter as the server's (the INFO of an entry of the
// file: bf_fpr, bf_cardinality, bf_info's saturated and bits_set)
function checkInfo(f, info) {
  const i = f.info();
  assert.ok(close(i.estimatedFpr, info.fpr), `fpr ${i.estimatedFpr} vs ${info.fpr}`);
  assert.ok(close(i.estimatedCardinality, info.cardinality), `cardinality ${i.estimatedCardinality} vs ${info.cardinality}`);
  assert.strictEqual(i.saturated, info.saturated);
  assert.strictEqual(i.bitsSet, info.bits_set);
  assert.ok(close(f.fpr(), info.fpr) && close(f.cardinality(), info.cardinality));
  assert.strictEqual(f.saturated(), info.saturated);
  assert.strictEqual(f.bitsSet(), info.bits_set);
  return i;
}

test('file format', () => {
  assert.strictEqual(data.format, 1);
  assert.ok(data.hashes.length > 0 && data.filters.length > 0);
});

test('bf_hash of every key and seed', () => {
  for (const h of data.hashes) {
    assert.strictEqual(bfHash(keyValue(h.key), BigInt(h.seed)), BigInt(h.hash), JSON.stringify(h));
  }
});

for (const f of data.filters) {
  test(`filter ${f.name}`, () => {
    const bytes = b64(f.bytes);
    const fb = BloomFilter.fromBytes(bytes);
    const ft = BloomFilter.fromText(f.text);
    assert.deepStrictEqual(ft.toBytes(), bytes, 'text and bytes parse to the same value');
    assert.strictEqual(fb.toText(), f.text, 'prints the server\'s text form');
    for (const p of f.probes) {
      assert.strictEqual(fb.contains(keyValue(p.key)), p.expect, JSON.stringify(p.key));
    }
    for (const e of f.errors || []) {
      assert.throws(() => fb.contains(keyValue(e.key)), (err) => err.code === e.sqlstate, JSON.stringify(e.key));
    }
    if (f.info) checkInfo(fb, f.info);
  });
}

test('union and intersection', () => {
  for (const s of data.setops || []) {
    const l = BloomFilter.fromBytes(b64(s.left));
    const r = BloomFilter.fromBytes(b64(s.right));
    const run = () => (s.op === 'union' ? l.union(r) : l.intersect(r));
    if (s.result) assert.deepStrictEqual(run().toBytes(), b64(s.result), s.name);
    else assert.throws(run, (err) => err.code === s.sqlstate, s.name);
  }
});

test('non-portable filters: bytes parse, contains refuses; a type name in the text is refused', () => {
  for (const x of data.nonportable_filters || []) {
    const f = BloomFilter.fromBytes(b64(x.bytes));
    assert.strictEqual(f.portable, false);
    assert.throws(() => f.contains(1), NonPortableError, x.name);
    assert.throws(() => f.add(1), NonPortableError, x.name);
    if (/ family=other\(/.test(x.text)) {
      assert.throws(() => BloomFilter.fromText(x.text), NonPortableError, x.name);
    } else {
      // record(integer,other): no type name, so the text parses
      assert.deepStrictEqual(BloomFilter.fromText(x.text).toBytes(), b64(x.bytes), x.name);
    }
  }
});

test('every malformed value is rejected', () => {
  for (const x of data.malformed_bytes) {
    assert.throws(() => BloomFilter.fromBytes(b64(x.bytes)),
      (err) => err.code === x.sqlstate, `bytes: ${x.name}`);
  }
  for (const x of data.malformed_text) {
    // a type name only the server resolves is refused for another reason
    // (a client cannot tell a missing type from one it cannot hash)
    assert.throws(() => BloomFilter.fromText(x.text),
      (err) => err.code === x.sqlstate || err instanceof NonPortableError,
      `text: ${x.name}`);
  }
});

// sliding windows: bytes and text, every probe at its time, every malformed window
for (const w of data.windows) {
  test(`window ${w.name}`, () => {
    const bytes = b64(w.bytes);
    const wb = BloomWindow.fromBytes(bytes);
    assert.deepStrictEqual(BloomWindow.fromText(w.text).toBytes(), bytes, 'text and bytes parse to the same value');
    assert.deepStrictEqual(wb.toBytes(), bytes);
    assert.strictEqual(wb.toText(), w.text, 'prints the server\'s text form');
    for (const p of w.probes) {
      assert.strictEqual(wb.contains(keyValue(p.key), BigInt(p.at)), p.expect, `${JSON.stringify(p.key)} at ${p.at}`);
    }
  });
}

test('malformed windows', () => {
  for (const m of data.malformed_windows) {
    assert.throws(() => BloomWindow.fromBytes(b64(m.bytes)), (err) => err.code === m.sqlstate, m.name);
  }
});

// growing filters (FORMAT.md §9) and unions (§10): the same entry points
// read them; every probe, the text and bytes, the layers and the estimates
// as the server's
test('growing and union entries are in the file', () => {
  assert.ok(data.growing.length > 0 && data.malformed_growing.length > 0);
  assert.ok(data.unions.length > 0 && data.malformed_unions.length > 0);
});

for (const [section, layout] of [['growing', 'growing'], ['unions', 'union']]) {
  for (const g of data[section]) {
    test(`${layout} ${g.name}`, () => {
      const bytes = b64(g.bytes);
      const fb = BloomFilter.fromBytes(bytes);
      const ft = BloomFilter.fromText(g.text);
      for (const f of [fb, ft]) {
        assert.strictEqual(f.layout, layout);
        assert.strictEqual(f.isGrowing, layout === 'growing');
        assert.strictEqual(f.isUnion, layout === 'union');
      }
      assert.deepStrictEqual(ft.toBytes(), bytes, 'text and bytes parse to the same value');
      assert.deepStrictEqual(fb.toBytes(), bytes);
      assert.strictEqual(fb.toText(), g.text, 'prints the server\'s text form');
      assert.strictEqual(ft.toText(), g.text);
      assert.ok(fb.equals(ft));
      assert.strictEqual(fb.layers.length, g.layers);
      assert.strictEqual(ft.layers.length, g.layers);
      for (const p of g.probes) {
        const key = keyValue(p.key);
        assert.strictEqual(fb.contains(key), p.expect, JSON.stringify(p.key));
        assert.strictEqual(ft.contains(key), p.expect, JSON.stringify(p.key));
      }
      if (g.info) assert.strictEqual(checkInfo(fb, g.info).layout, layout);
      // neither is added to here: a growing filter on the server, a union never
      assert.throws(() => fb.addHash(1n), (err) => err.code === '0A000' && err.message.includes(
        layout === 'union' ? 'union' : 'growing'));
    });
  }
}

test('every malformed growing value and union is rejected with its SQLSTATE', () => {
  for (const x of data.malformed_growing.concat(data.malformed_unions)) {
    assert.throws(() => BloomFilter.fromBytes(b64(x.bytes)), (err) => err.code === x.sqlstate, `bytes: ${x.name}`);
  }
});
