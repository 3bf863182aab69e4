'use strict';
// The 64-byte header of a filter (docs/FORMAT.md §1): decoding with every
// check the server makes, so that a value is accepted here exactly when
// PostgreSQL accepts it, and encoding.

const { BloomFilterError, SQLSTATE } = require('./errors');
const { FAMILY, PORTABLE_TYPE_OIDS, recordDetailValid, recordHasOther } = require('./families');

const HEADER_BYTES = 64;
const BLOCK_BYTES = 64;
const MAX_NBLOCKS = 2 ** 23;
const MAX_NHASHES = 64;
const MAX_INSERTED = 2n ** 63n - 1n; // adds saturate here; more is invalid
const MAGIC = [0x42, 0x4c, 0x4d, 0x46]; // "BLMF"
const FLAG_NONPORTABLE = 1;

function invalid(detail, code) {
  return new BloomFilterError('invalid bloomfilter value', code, detail);
}

/**
 * Decode and check the header of a value of `length` bytes (the header
 * plus the bits).  Returns {family, flags, nhashes, detail, seed, nblocks,
 * inserted, capacity, fpr}; 64-bit fields are BigInts, nblocks a number.
 * `code` is the SQLSTATE to report (22P03 for bytes, 22P02 for text).
 */
function readHeader(bytes, code = SQLSTATE.INVALID_BINARY) {
  if (bytes.length < HEADER_BYTES) {
    throw invalid(`The value has ${bytes.length} bytes, fewer than the ${HEADER_BYTES}-byte header.`, code);
  }
  for (let i = 0; i < 4; i++) {
    if (bytes[i] !== MAGIC[i]) throw invalid('The value does not start with the magic "BLMF".', code);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const version = dv.getUint16(4, true);
  const layout = bytes[6];
  const hashfn = bytes[7];
  const h = {
    family: bytes[8],
    flags: bytes[9],
    nhashes: dv.getUint16(10, true),
    detail: dv.getUint32(12, true),
    seed: dv.getBigInt64(16, true),
    nblocks: 0,
    inserted: dv.getBigUint64(32, true),
    capacity: dv.getBigInt64(40, true),
    fpr: dv.getFloat64(48, true),
  };
  const nblocks = dv.getBigUint64(24, true);
  if (version !== 1) throw invalid(`Format version ${version} is unknown; this reader knows version 1.`, code);
  if (layout !== 1) throw invalid(`Layout ${layout} is unknown.`, code);
  if (hashfn !== 1) throw invalid(`Hash function ${hashfn} is unknown.`, code);
  if (h.family > FAMILY.other) throw invalid(`Element family ${h.family} is unknown.`, code);
  if (h.nhashes < 1 || h.nhashes > MAX_NHASHES) {
    throw invalid(`The number of hashes is ${h.nhashes}; it must be from 1 to ${MAX_NHASHES}.`, code);
  }
  if (nblocks < 1n || nblocks > BigInt(MAX_NBLOCKS)) {
    throw invalid(`The number of blocks is ${nblocks}; it must be from 1 to ${MAX_NBLOCKS}.`, code);
  }
  h.nblocks = Number(nblocks);
  if (bytes.length !== HEADER_BYTES + BLOCK_BYTES * h.nblocks) {
    throw invalid(`The value has ${bytes.length} bytes; ${h.nblocks} blocks need ${HEADER_BYTES + BLOCK_BYTES * h.nblocks}.`, code);
  }
  if (dv.getBigUint64(56, true) !== 0n) throw invalid('The reserved header field is not 0.', code);
  if (h.capacity < 0n) throw invalid(`The capacity is negative (${h.capacity}).`, code);
  if (!(h.fpr >= 0 && h.fpr < 1)) throw invalid(`The target false-positive rate ${h.fpr} is not in [0, 1).`, code);
  if (h.inserted > MAX_INSERTED) throw invalid(`The inserted count ${h.inserted} is more than 2^63 - 1.`, code);
  if (h.family === FAMILY.none && h.inserted !== 0n) {
    throw invalid('The filter has no element family but counts inserted values.', code);
  }
  let nonportable;
  if (h.family === FAMILY.record) {
    if (!recordDetailValid(h.detail)) {
      throw invalid(`The family detail 0x${h.detail.toString(16)} does not name 1 to 8 record fields.`, code);
    }
    nonportable = recordHasOther(h.detail);
  } else if (h.family === FAMILY.other) {
    if (h.detail === 0) throw invalid('The filter of a non-portable type names type OID 0.', code);
    if (PORTABLE_TYPE_OIDS.has(h.detail)) {
      throw invalid(`The filter of a non-portable type names type OID ${h.detail} `
        + `(${PORTABLE_TYPE_OIDS.get(h.detail)}), which has a portable family.`, code);
    }
    nonportable = true;
  } else {
    if (h.detail !== 0) throw invalid(`The family detail is 0x${h.detail.toString(16)}; it must be 0 for this family.`, code);
    nonportable = false;
  }
  if ((h.flags & ~FLAG_NONPORTABLE) !== 0 || ((h.flags & FLAG_NONPORTABLE) !== 0) !== nonportable) {
    throw invalid(`The flags 0x${h.flags.toString(16)} are unknown or disagree with the element family.`, code);
  }
  return h;
}

/** Write the header fields into the first 64 bytes of `bytes`. */
function writeHeader(bytes, h) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  for (let i = 0; i < 4; i++) bytes[i] = MAGIC[i];
  dv.setUint16(4, 1, true);
  bytes[6] = 1;
  bytes[7] = 1;
  bytes[8] = h.family;
  bytes[9] = h.flags;
  dv.setUint16(10, h.nhashes, true);
  dv.setUint32(12, h.detail, true);
  dv.setBigInt64(16, h.seed, true);
  dv.setBigUint64(24, BigInt(h.nblocks), true);
  dv.setBigUint64(32, h.inserted, true);
  dv.setBigInt64(40, h.capacity, true);
  dv.setFloat64(48, h.fpr, true);
  dv.setBigUint64(56, 0n, true);
}

module.exports = {
  readHeader, writeHeader, HEADER_BYTES, BLOCK_BYTES, MAX_NBLOCKS, MAX_NHASHES, MAX_INSERTED, FLAG_NONPORTABLE,
};
