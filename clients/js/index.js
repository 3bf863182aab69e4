'use strict';
// pg-bloomfilter: read, test and keep current the filters of the
// bloomfilter PostgreSQL extension (docs/FORMAT.md) in Node.js.

const { BloomFilter } = require('./lib/filter');
const { BloomWindow, micros } = require('./lib/window');
const { typed, Typed } = require('./lib/encode');
const { bfHash } = require('./lib/hash');
const { setXxh3 } = require('./lib/xxh3');
const { BloomFilterError, NonPortableError } = require('./lib/errors');
const { applyPatch, parsePatch, PatchError } = require('./lib/patch');
const { Refresher } = require('./lib/refresher');
const pg = require('./lib/pg');

module.exports = {
  BloomFilter,
  BloomWindow,
  micros,
  typed,
  Typed,
  bfHash,
  setXxh3,
  BloomFilterError,
  NonPortableError,
  PatchError,
  parsePatch,
  applyPatch,
  Refresher,
  bloomfilterOid: pg.bloomfilterOid,
  registerBloomfilterType: pg.registerBloomfilterType,
  registerBloomwindowType: pg.registerBloomwindowType,
  trackedSource: pg.trackedSource,
  indexSource: pg.indexSource,
  version: '1.1.0',
};
