'use strict';
// The 32-bit arithmetic of lib/probe.js against the spec's u64 pseudo-code
// (docs/FORMAT.md §2) written here with BigInt.

const test = require('node:test');
const assert = require('node:assert');
const { positions, mulhi32 } = require('../../lib/probe');

const M = (1n << 64n) - 1n;
function mix64(z) {
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M;
  return z ^ (z >> 31n);
}
function refPositions(h, nblocks, k) {
  const out = [];
  let x = 0n;
  for (let i = 0; i < k; i++) {
    if (i % 7 === 0) x = mix64((h + BigInt(Math.floor(i / 7) + 1) * 0x9E3779B97F4A7C15n) & M);
    out.push(Number(x & 511n));
    x >>= 9n;
  }
  return { block: Number(((h >> 32n) * BigInt(nblocks)) >> 32n), positions: out };
}

// a small deterministic generator (xorshift64*)
function rng(seed) {
  let s = BigInt(seed) | 1n;
  return () => {
    s ^= s >> 12n; s ^= (s << 25n) & M; s ^= s >> 27n;
    return (s * 0x2545F4914F6CDD1Dn) & M;
  };
}

test('positions and block equal the u64 pseudo-code', () => {
  const next = rng(42);
  const specials = [0n, 1n, M, 1n << 63n, (1n << 32n) - 1n, 1n << 32n, 0xffffffff00000000n];
  for (let i = 0; i < 20000; i++) {
    const h = i < specials.length ? specials[i] : next();
    const k = 1 + (i % 64);
    const nblocks = [1, 2, 3, 1031, 2 ** 23, 2 ** 23 - 1, 19532][i % 7];
    assert.deepStrictEqual(positions(h, nblocks, k), refPositions(h, nblocks, k), `h=${h} k=${k}`);
  }
});

test('mulhi32 is the high word of the product', () => {
  const next = rng(7);
  for (let i = 0; i < 20000; i++) {
    const r = next();
    const a = Number(r >> 32n);
    const b = Number(r & 0xffffffffn);
    assert.strictEqual(mulhi32(a, b), Number((BigInt(a) * BigInt(b)) >> 32n));
  }
  assert.strictEqual(mulhi32(0xffffffff, 0xffffffff), 0xfffffffe);
});
