'use strict';
// From a 64-bit hash to a block and k bit positions, and testing or setting
// those bits (docs/FORMAT.md §2).  The arithmetic is mod 2^64; it is done on
// 32-bit halves (hi, lo) with Math.imul, because BigInt arithmetic allocates
// and would cost several times the whole lookup budget.

const BLOCK_BYTES = 64;
const HEADER_BYTES = 64;

// high 32 bits of the 64-bit product of two unsigned 32-bit numbers
function mulhi32(a, b) {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = ((a0 * b0) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) >>> 0;
}

// SplitMix64's multipliers and the golden-ratio increment, as (hi, lo)
const C1H = 0xbf58476d;
const C1L = 0x1ce4e5b9;
const C2H = 0x94d049bb;
const C2L = 0x133111eb;
const GOLDEN = 0x9e3779b97f4a7c15n;

// (j + 1) * GOLDEN mod 2^64 for j = i / 7, i < 64: hi at 2j, lo at 2j + 1
const STEPS = new Uint32Array(20);
for (let j = 0; j < 10; j++) {
  const v = BigInt.asUintN(64, BigInt(j + 1) * GOLDEN);
  STEPS[2 * j] = Number(v >> 32n);
  STEPS[2 * j + 1] = Number(v & 0xffffffffn);
}

// mix64(h + (j + 1) * GOLDEN), result in MIX[0] (hi) and MIX[1] (lo)
const MIX = new Uint32Array(2);
function mixStep(hi, lo, j) {
  let zl = (lo + STEPS[2 * j + 1]) >>> 0;
  let zh = (hi + STEPS[2 * j] + (zl < lo ? 1 : 0)) >>> 0;
  // z = (z ^ (z >> 30)) * C1
  let xl = (zl ^ ((zl >>> 30) | (zh << 2))) >>> 0;
  let xh = (zh ^ (zh >>> 30)) >>> 0;
  zl = Math.imul(xl, C1L) >>> 0;
  zh = (mulhi32(xl, C1L) + Math.imul(xh, C1L) + Math.imul(xl, C1H)) >>> 0;
  // z = (z ^ (z >> 27)) * C2
  xl = (zl ^ ((zl >>> 27) | (zh << 5))) >>> 0;
  xh = (zh ^ (zh >>> 27)) >>> 0;
  zl = Math.imul(xl, C2L) >>> 0;
  zh = (mulhi32(xl, C2L) + Math.imul(xh, C2L) + Math.imul(xl, C2H)) >>> 0;
  // z ^ (z >> 31)
  MIX[0] = zh ^ (zh >>> 31);
  MIX[1] = zl ^ ((zl >>> 31) | (zh << 1));
}

/**
 * True if every bit of the hash (hi, lo) is set.  `value` holds the whole
 * filter (header then bits).
 */
function testHash(value, nblocks, k, hi, lo) {
  const base = HEADER_BYTES + mulhi32(hi, nblocks) * BLOCK_BYTES;
  let xh = 0;
  let xl = 0;
  for (let i = 0; i < k; i++) {
    if (i % 7 === 0) {
      mixStep(hi, lo, i / 7);
      xh = MIX[0];
      xl = MIX[1];
    }
    const p = xl & 511;
    if ((value[base + (p >>> 3)] & (1 << (p & 7))) === 0) return false;
    xl = (xl >>> 9) | (xh << 23);
    xh >>>= 9;
  }
  return true;
}

/** Sets the bits of the hash (hi, lo); true if any was 0 before. */
function setHash(value, nblocks, k, hi, lo) {
  const base = HEADER_BYTES + mulhi32(hi, nblocks) * BLOCK_BYTES;
  let changed = false;
  let xh = 0;
  let xl = 0;
  for (let i = 0; i < k; i++) {
    if (i % 7 === 0) {
      mixStep(hi, lo, i / 7);
      xh = MIX[0];
      xl = MIX[1];
    }
    const p = xl & 511;
    const at = base + (p >>> 3);
    const m = 1 << (p & 7);
    if ((value[at] & m) === 0) {
      value[at] |= m;
      changed = true;
    }
    xl = (xl >>> 9) | (xh << 23);
    xh >>>= 9;
  }
  return changed;
}

/** The block and positions of a u64 hash, for tests and tools. */
function positions(h, nblocks, k) {
  const hi = Number(BigInt.asUintN(64, h) >> 32n);
  const lo = Number(h & 0xffffffffn);
  const out = [];
  let xh = 0;
  let xl = 0;
  for (let i = 0; i < k; i++) {
    if (i % 7 === 0) {
      mixStep(hi, lo, i / 7);
      xh = MIX[0];
      xl = MIX[1];
    }
    out.push(xl & 511);
    xl = (xl >>> 9) | (xh << 23);
    xh >>>= 9;
  }
  return { block: mulhi32(hi, nblocks), positions: out };
}

module.exports = { testHash, setHash, positions, mulhi32, BLOCK_BYTES, HEADER_BYTES };
