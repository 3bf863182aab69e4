'use strict';
// What the server computes from a filter's bits (docs/FORMAT.md §6): bits
// set, the rate of the bits as they are, the cardinality estimate and the
// inserted count of a combined filter; and the compatibility check of set
// algebra, naming the first difference as the server does.

const { BloomFilterError, SQLSTATE } = require('./errors');
const { FAMILY, familyText } = require('./families');

const B = 512;

function popcount32(v) {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

/** Bits set in a Uint32Array. */
function popcount(words) {
  let n = 0;
  for (let i = 0; i < words.length; i++) n += popcount32(words[i]);
  return n;
}

/** §6.2: mean over the blocks of (bits set / 512)^k, and the bits set. */
function fillFpr(words, nblocks, k) {
  const pw = new Float64Array(B + 1);
  for (let c = 0; c <= B; c++) pw[c] = Math.pow(c / B, k);
  let sum = 0;
  let total = 0;
  for (let b = 0, w = 0; b < nblocks; b++) {
    let c = 0;
    for (const end = w + 16; w < end; w++) c += popcount32(words[w]);
    total += c;
    sum += pw[c];
  }
  return { fpr: sum / nblocks, bitsSet: total };
}

// probability that one element sets a given bit of the filter
function bitHitProbability(nblocks, k) {
  return -Math.expm1(k * Math.log1p(-1 / B)) / nblocks;
}

/** §6.1: estimated distinct elements from the bits set. */
function cardinality(bitsSet, nblocks, k) {
  const m = nblocks * B;
  if (bitsSet === 0) return 0;
  if (bitsSet >= m) return Infinity;
  return Math.log1p(-bitsSet / m) / Math.log1p(-bitHitProbability(nblocks, k));
}

/** §6.4: the rounded estimate, finite even with every bit set (a BigInt). */
function estimateInserted(bitsSet, nblocks, k) {
  const m = nblocks * B;
  if (bitsSet === 0) return 0n;
  const x = Math.min(bitsSet, m - 0.5);
  return BigInt(Math.round(Math.log1p(-x / m) / Math.log1p(-bitHitProbability(nblocks, k))));
}

/** Throw unless two headers can be combined bit by bit (§6.4). */
function checkCompatible(a, b) {
  let field = null;
  if (a.nblocks !== b.nblocks) field = ['nbits', 512 * a.nblocks, 512 * b.nblocks];
  else if (a.nhashes !== b.nhashes) field = ['nhashes', a.nhashes, b.nhashes];
  else if (a.seed !== b.seed) field = ['seed', a.seed, b.seed];
  if (field) {
    throw new BloomFilterError('cannot combine bloomfilters with different parameters', SQLSTATE.INVALID_PARAMETER,
      `The first filter has ${field[0]} ${field[1]}, the second has ${field[0]} ${field[2]}.`);
  }
  if (a.family !== FAMILY.none && b.family !== FAMILY.none &&
      (a.family !== b.family || a.detail !== b.detail)) {
    throw new BloomFilterError('cannot combine bloomfilters of different element families', SQLSTATE.DATATYPE_MISMATCH,
      `The first filter holds values of family ${familyText(a.family, a.detail)}, the second of family ${familyText(b.family, b.detail)}.`);
  }
}

module.exports = { popcount, fillFpr, cardinality, estimateInserted, checkCompatible };
