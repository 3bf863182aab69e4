'use strict';
// What the tests of growing filters (growing.test.js) and of unions
// (union.test.js) share: the layered values (FORMAT.md §9, §10) of the
// conformance file, the offsets of their layers, and the check of the
// node-postgres type parser.

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { BloomFilter, registerBloomfilterType } = require('../..');

const FILE = path.join(__dirname, '../../../../test/conformance/conformance.json');
const doc = JSON.parse(fs.readFileSync(FILE, 'utf8'));

// the entries of a section of the file ('growing', 'unions'), by name
const byName = (section) => Object.fromEntries(doc[section].map((e) => [e.name, e]));

// the bytes of an entry
const bytesOf = (entry) => new Uint8Array(Buffer.from(entry.bytes, 'base64'));

// the offsets of a layered value's layers
function layerOffsets(b) {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = [];
  for (let off = 64; off < b.length; off += 64 + 64 * Number(dv.getBigUint64(off + 24, true))) out.push(off);
  return out;
}

// registerBloomfilterType against a server whose bloomfilter type has the
// OID 16400: the text and binary parsers read the entry as one value, which
// is(value) and which contains key; returns the parsers, by `oid/format`.
async function checkTypeParsers(entry, is, key) {
  const parsers = {};
  const q = { query: async () => ({ rows: [{ schema: 'public', oid: 16400 }] }) };
  await registerBloomfilterType(q, { setTypeParser: (oid, format, fn) => { parsers[`${oid}/${format}`] = fn; } });
  const t = parsers['16400/text'](entry.text);
  assert.ok(t instanceof BloomFilter && is(t) && t.contains(key));
  assert.ok(parsers['16400/binary'](Buffer.from(bytesOf(entry))).equals(t));
  return parsers;
}

module.exports = { doc, byName, bytesOf, layerOffsets, checkTypeParsers };
