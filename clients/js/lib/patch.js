'use strict';
// Change sets of a filter ("BLMP" patches: docs/FORMAT.md, "Change sets"):
// byte ranges of the value that changed since a position, or the whole
// value.  Applying one builds a new value and never touches the old one, so
// that a reader can swap the result in at once.
//
//   0  magic "BLMP"     4  u16 version 1   6  u8 flags (bit 0 = full)
//   7  u8 reserved 0    8  u64 total length after applying
//   16 u32 runs         20 u32 reserved 0
//   24 runs: u64 offset, u32 length, u32 reserved 0, then length bytes

const { BloomFilterError, SQLSTATE } = require('./errors');
const { HEADER_BYTES, BLOCK_BYTES, MAX_NBLOCKS } = require('./header');

const PATCH_HEADER = 24;
const RUN_HEADER = 16;
const MAGIC = [0x42, 0x4c, 0x4d, 0x50]; // "BLMP"
// the largest value: a growing filter or a union (FORMAT.md §9.1, §10.1)
// of 64 layers holding 2^23 blocks together, with its header and theirs
// (a plain filter is smaller)
const MAX_TOTAL = HEADER_BYTES + 64 * HEADER_BYTES + BLOCK_BYTES * MAX_NBLOCKS;

/** A patch that cannot be applied: the caller must fetch the whole value. */
class PatchError extends BloomFilterError {
  constructor(detail) {
    super('invalid bloomfilter patch', SQLSTATE.INVALID_BINARY, detail);
    this.name = 'PatchError';
  }
}

/**
 * Decode and check a patch: {full, total, runs: [{offset, data}]}.  Runs
 * must lie inside the value, in increasing order, without overlap; a full
 * patch's runs must cover the whole value.  `data` are views into `bytes`.
 */
function parsePatch(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('a patch is a Uint8Array');
  if (bytes.length < PATCH_HEADER) throw new PatchError(`The patch has ${bytes.length} bytes, fewer than its 24-byte header.`);
  for (let i = 0; i < 4; i++) {
    if (bytes[i] !== MAGIC[i]) throw new PatchError('The patch does not start with the magic "BLMP".');
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const version = dv.getUint16(4, true);
  const flags = bytes[6];
  if (version !== 1) throw new PatchError(`Patch version ${version} is unknown; this reader knows version 1.`);
  if ((flags & ~1) !== 0 || bytes[7] !== 0 || dv.getUint32(20, true) !== 0) {
    throw new PatchError('The patch has unknown flags or non-zero reserved fields.');
  }
  const total64 = dv.getBigUint64(8, true);
  if (total64 > BigInt(MAX_TOTAL)) throw new PatchError(`The patched value would have ${total64} bytes, more than any filter.`);
  const total = Number(total64);
  const nruns = dv.getUint32(16, true);
  const runs = [];
  let p = PATCH_HEADER;
  let end = 0; // end of the previous run
  for (let i = 0; i < nruns; i++) {
    if (p + RUN_HEADER > bytes.length) throw new PatchError(`Run ${i + 1} of ${nruns} is cut off.`);
    const offset64 = dv.getBigUint64(p, true);
    const length = dv.getUint32(p + 8, true);
    if (dv.getUint32(p + 12, true) !== 0) throw new PatchError(`Run ${i + 1} has a non-zero reserved field.`);
    if (offset64 + BigInt(length) > total64) throw new PatchError(`Run ${i + 1} ends past the value's ${total} bytes.`);
    const offset = Number(offset64);
    if (i > 0 && (offset < end || offset <= runs[i - 1].offset)) {
      throw new PatchError(`Run ${i + 1} overlaps or precedes the run before it.`);
    }
    p += RUN_HEADER;
    if (p + length > bytes.length) throw new PatchError(`The bytes of run ${i + 1} are cut off.`);
    runs.push({ offset, data: bytes.subarray(p, p + length) });
    p += length;
    end = offset + length;
  }
  if (p !== bytes.length) throw new PatchError(`${bytes.length - p} bytes follow the last run.`);
  const full = (flags & 1) === 1;
  if (full) {
    let covered = 0;
    for (const r of runs) {
      if (r.offset !== covered) break;
      covered += r.data.length;
    }
    if (covered !== total) throw new PatchError('A full patch does not cover the whole value.');
  }
  return { full, total, runs };
}

/**
 * The value after applying the patch to `current` (the local copy's bytes,
 * or null when there is none): a new Uint8Array.  Throws PatchError when
 * the patch is invalid or does not fit the local copy.
 */
function applyPatch(current, patch) {
  const { full, total, runs } = patch instanceof Uint8Array ? parsePatch(patch) : patch;
  let out;
  if (full) {
    out = new Uint8Array(total);
  } else {
    if (current === null || current === undefined) throw new PatchError('A partial patch needs a local copy; fetch the whole value.');
    if (current.length !== total) {
      throw new PatchError(`The patch is for a value of ${total} bytes, the local copy has ${current.length}; fetch the whole value.`);
    }
    out = new Uint8Array(current);
  }
  for (const r of runs) out.set(r.data, r.offset);
  return out;
}

module.exports = { parsePatch, applyPatch, PatchError };
