'use strict';
// The growing (layered) form of a bloomfilter value (docs/FORMAT.md §9):
// a 64-byte header ("BLMG") and L layers back to back, each a complete
// plain filter of §1.  This module reads and checks the bytes as the
// server does (bloom_grow.c) and reads and prints the text form
//   bloomgrowing:1 capacity=C fpr=P ratio=R growth=G layer=<§5 text> ...
// The union form (§10) has the same bytes under the magic "BLMU", without
// the sizing chain (layers of any sizes, the capacity their sum), and the
// text form
//   bloomunion:1 capacity=C fpr=P layer=<§5 text> ...
// BloomFilter (filter.js) holds the layers and answers lookups.

const { BloomFilterError, SQLSTATE } = require('./errors');
const { readHeader, HEADER_BYTES, BLOCK_BYTES, MAX_NBLOCKS } = require('./header');
const { parseText, formatText, formatFpr, parseFpr, token, parseI64, parseU64 } = require('./text');

const MAGIC = [0x42, 0x4c, 0x4d, 0x47]; // "BLMG"
const UNION_MAGIC = [0x42, 0x4c, 0x4d, 0x55]; // "BLMU"
const PREFIX = 'bloomgrowing:1';
const UNION_PREFIX = 'bloomunion:1';
const MAX_LAYERS = 64;
const MIN_GROWTH = 2;
const MAX_GROWTH = 16;
const I64_MAX = 2n ** 63n - 1n;

function invalid(detail, code) {
  return new BloomFilterError('invalid bloomfilter value', code, detail);
}

function bad(detail) {
  return new BloomFilterError('invalid input syntax for type bloomfilter', SQLSTATE.INVALID_TEXT, detail);
}

function hasMagic(bytes, magic) {
  return bytes.length >= 4 && magic.every((x, i) => bytes[i] === x);
}

/** True when the bytes start with the magic of the growing form or of a union. */
function isLayered(bytes) {
  return hasMagic(bytes, MAGIC) || hasMagic(bytes, UNION_MAGIC);
}

function zero(bytes, from, to) {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

/**
 * Decode and check a growing value or a union exactly as FORMAT.md §9.1
 * and §10.1 say.  Returns {union, growth, capacity, fpr, ratio, layers:
 * [{offset, length, h}]} (h: the layer's header as readHeader gives it).
 * `code` is the SQLSTATE to report (22P03 for bytes, 22P02 for text).
 */
function readGrowing(bytes, code = SQLSTATE.INVALID_BINARY) {
  const len = bytes.length;
  if (len < HEADER_BYTES) throw invalid(`The value has ${len} bytes, fewer than the ${HEADER_BYTES}-byte header.`, code);
  if (!isLayered(bytes)) {
    throw invalid('The value does not start with the magic "BLMG" of a growing bloomfilter or "BLMU" of a union.', code);
  }
  const union = hasMagic(bytes, UNION_MAGIC);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const version = dv.getUint16(4, true);
  const nlayers = dv.getUint16(6, true);
  const growth = dv.getUint32(8, true);
  const capacity = dv.getBigInt64(16, true);
  const fpr = dv.getFloat64(24, true);
  const ratio = dv.getFloat64(32, true);
  if (version !== 1) throw invalid(`Growing format version ${version} is unknown; this reader knows version 1.`, code);
  if (nlayers < 1 || nlayers > MAX_LAYERS) throw invalid(`The number of layers is ${nlayers}; it must be from 1 to ${MAX_LAYERS}.`, code);
  if (union) {
    // independent layers: no chain, and the rate only a bound in [0, 1]
    if (!(fpr >= 0 && fpr <= 1)) throw invalid(`The union's false-positive rate ${fpr} is not in [0, 1].`, code);
    if (!zero(bytes, 8, 16) || !zero(bytes, 32, HEADER_BYTES)) throw invalid('A reserved header field is not zero.', code);
  } else if (growth < MIN_GROWTH || growth > MAX_GROWTH) {
    throw invalid(`The growth factor is ${growth}; it must be from ${MIN_GROWTH} to ${MAX_GROWTH}.`, code);
  } else if (capacity < 1n) {
    throw invalid(`The capacity of the first layer is ${capacity}; it must be positive.`, code);
  } else if (!(fpr > 0 && fpr < 1)) {
    throw invalid(`The target false-positive rate ${fpr} is not in (0, 1).`, code);
  } else if (!(ratio > 0 && ratio < 1)) {
    throw invalid(`The tightening ratio ${ratio} is not in (0, 1).`, code);
  } else if (!zero(bytes, 12, 16) || !zero(bytes, 40, HEADER_BYTES)) {
    throw invalid('A reserved header field is not zero.', code);
  }

  const layers = [];
  let off = HEADER_BYTES;
  let blocks = 0;
  let capacities = 0n; // of a union's layers
  let wantCapacity = capacity;
  let wantFpr = fpr * (1 - ratio); // p_0; p_i = p_{i-1} * r, each rounded (§9.1)
  for (let i = 0; i < nlayers; i++) {
    if (len - off < HEADER_BYTES) throw invalid(`The value ends before layer ${i}.`, code);
    // a layer's own nblocks says where it ends; a bad one is its error
    const nb = new DataView(bytes.buffer, bytes.byteOffset + off + 24, 8).getBigUint64(0, true);
    let length = len - off;
    if (nb >= 1n && nb <= BigInt(MAX_NBLOCKS) && HEADER_BYTES + BLOCK_BYTES * Number(nb) <= len - off) {
      length = HEADER_BYTES + BLOCK_BYTES * Number(nb);
    }
    let h;
    try {
      h = readHeader(bytes.subarray(off, off + length), code);
    } catch (e) {
      if (e instanceof BloomFilterError) throw invalid(`Layer ${i} is not a valid bloomfilter: ${e.detail || e.message}`, code);
      throw e;
    }
    if (i > 0) {
      const h0 = layers[0].h;
      if (h.family !== h0.family || h.flags !== h0.flags || h.detail !== h0.detail || h.seed !== h0.seed) {
        throw invalid(`Layer ${i} differs from layer 0 in its seed, element family or flags.`, code);
      }
    }
    if (union) {
      capacities += h.capacity; // each at least 0 (§1)
      if (capacities > I64_MAX) throw invalid('The layers\' capacities add up to more than the largest bigint.', code);
    } else {
      if (i > 0) {
        if (wantCapacity > I64_MAX / BigInt(growth)) {
          throw invalid(`Layer ${i}'s capacity would be past the largest bigint.`, code);
        }
        wantCapacity *= BigInt(growth);
        wantFpr *= ratio;
      }
      if (!(wantFpr > 0) || h.capacity !== wantCapacity || h.fpr !== wantFpr) {
        throw invalid(`Layer ${i}'s capacity or false-positive rate disagrees with the growth and tightening ratio of the filter.`, code);
      }
    }
    blocks += h.nblocks;
    if (blocks > MAX_NBLOCKS) throw invalid(`The layers together hold more than ${MAX_NBLOCKS} blocks.`, code);
    layers.push({ offset: off, length, h });
    off += length;
  }
  if (off !== len) throw invalid(`The value has ${len} bytes; its ${nlayers} layers and header need ${off}.`, code);
  if (union && capacity !== capacities) {
    throw invalid(`The union's capacity ${capacity} is not the sum ${capacities} of its layers' capacities.`, code);
  }
  return { union, growth, capacity, fpr, ratio, layers };
}

/** The 64-byte header followed by the layers' bytes (a union's growth and ratio are 0). */
function growingBytes(g, layers) {
  const out = new Uint8Array(HEADER_BYTES + layers.reduce((a, x) => a + x.length, 0));
  const dv = new DataView(out.buffer);
  out.set(g.union ? UNION_MAGIC : MAGIC);
  dv.setUint16(4, 1, true);
  dv.setUint16(6, layers.length, true);
  dv.setUint32(8, g.growth, true);
  dv.setBigInt64(16, g.capacity, true);
  dv.setFloat64(24, g.fpr, true);
  dv.setFloat64(32, g.ratio, true);
  layers.reduce((off, x) => { out.set(x, off); return off + x.length; }, HEADER_BYTES);
  return out;
}

/** The text form of a checked growing value or union (g: what readGrowing returned). */
function formatGrowingText(g, bytes) {
  const head = g.union ? `${UNION_PREFIX} capacity=${g.capacity} fpr=${formatFpr(g.fpr)}`
    : `${PREFIX} capacity=${g.capacity} fpr=${formatFpr(g.fpr)} ratio=${formatFpr(g.ratio)} growth=${g.growth}`;
  return [head]
    .concat(g.layers.map(({ offset, length, h }) =>
      `layer=${formatText(h, bytes.subarray(offset + HEADER_BYTES, offset + length))}`))
    .join(' ');
}

/** True when the text is (meant to be) the growing form or a union, as the server's input function decides. */
function isGrowingText(s) {
  return s.startsWith(PREFIX + ' ') || s.startsWith(UNION_PREFIX + ' ');
}

/**
 * Parse the text form of a growing value or a union into the value's
 * bytes, with the checks of the binary form and only the one text output
 * prints.  Returns {bytes, g}.
 */
function parseGrowingText(s) {
  if (!isGrowingText(s)) throw bad(`The value does not start with "${PREFIX}" or "${UNION_PREFIX}".`);
  const union = s.startsWith(UNION_PREFIX + ' ');
  let p = (union ? UNION_PREFIX : PREFIX).length;
  const next = (key, check, what) => {
    const t = token(s, p, key);
    const v = t === null ? null : check(t[0]);
    if (v === null) throw bad(what);
    p = t[1];
    return v;
  };
  // a union's capacity is its layers' sum, 0 if they were sized explicitly
  const least = union ? 0n : 1n;
  const capacity = next('capacity', (v) => {
    const n = parseI64(v);
    return n !== null && n >= least ? n : null;
  }, `Expected "capacity=" and a bigint of at least ${least}.`);
  const fpr = next('fpr', parseFpr, 'Expected "fpr=" and a number.');
  const ratio = union ? 0 : next('ratio', parseFpr, 'Expected "ratio=" and a number.');
  const growth = union ? 0 : next('growth', (v) => {
    const n = parseU64(v);
    return n !== null && n >= BigInt(MIN_GROWTH) && n <= BigInt(MAX_GROWTH) ? Number(n) : null;
  }, `Expected "growth=" and a number from ${MIN_GROWTH} to ${MAX_GROWTH}.`);
  const layers = [];
  let blocks = 0;
  while (s.startsWith(' layer=', p)) {
    if (layers.length === MAX_LAYERS) throw bad(`More than ${MAX_LAYERS} layers.`);
    const start = p + 7;
    // a layer's text ends after its bits= field, the last of §5
    const bits = s.indexOf(' bits=', start);
    if (bits < 0) throw bad(`Layer ${layers.length} has no "bits=" field.`);
    let end = s.indexOf(' ', bits + 1);
    if (end < 0) end = s.length;
    let layer;
    try {
      layer = parseText(s.slice(start, end));
    } catch (e) {
      if (e instanceof BloomFilterError && e.code === SQLSTATE.INVALID_TEXT) {
        throw bad(`Layer ${layers.length}: ${e.detail || e.message}`);
      }
      throw e; // NonPortableError: a type name only the server resolves
    }
    blocks += (layer.length - HEADER_BYTES) / BLOCK_BYTES;
    if (blocks > MAX_NBLOCKS) throw bad(`The layers together hold more than ${MAX_NBLOCKS} blocks.`);
    layers.push(layer);
    p = end;
  }
  if (layers.length === 0) throw bad('Expected "layer=" fields, each a bloomfilter in its text form.');
  if (p !== s.length) throw bad(`Unexpected text after layer ${layers.length - 1}.`);
  const bytes = growingBytes({ union, growth, capacity, fpr, ratio }, layers);
  const g = readGrowing(bytes, SQLSTATE.INVALID_TEXT);
  // one text per value: other spellings of the same numbers are refused
  if (formatGrowingText(g, bytes) !== s) throw bad('The text is not the one bloomfilter output prints for the value it denotes.');
  return { bytes, g };
}

/** The error of everything a client does not do to a growing filter (g.union false) or a union. */
function refuseGrowing(g, what) {
  if (g.union) {
    return new BloomFilterError(`${what} does not take a union of bloomfilters`, SQLSTATE.NOT_SUPPORTED,
      'A union (bf_union_layered, or the filter of a distributed table, one layer per shard) is read-only: ' +
      'its layers were sized for other sets of keys. Add to the filters it was made from and read it again; ' +
      'a client reads, tests, compares and inspects it, and combining it is not supported.');
  }
  return new BloomFilterError(`${what} does not take a growing bloomfilter`, SQLSTATE.NOT_SUPPORTED,
    'Growing filters are added to on the server (bf_add, bf_add_all), which appends their layers as they fill; ' +
    'a client reads, tests, compares and inspects them, and combining them is not supported.');
}

module.exports = {
  isLayered, isGrowingText, readGrowing, growingBytes, parseGrowingText, formatGrowingText, refuseGrowing,
};
