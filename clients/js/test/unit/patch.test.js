'use strict';
// Applying change sets (API contract §1) on synthetic patches: what is
// applied, and every patch a reader must reject.

const test = require('node:test');
const assert = require('node:assert');
const { parsePatch, applyPatch, PatchError } = require('../..');
const { makePatch } = require('./patch-builder');

const current = Uint8Array.from({ length: 256 }, (_, i) => i);
const bytes = (n, v) => new Uint8Array(n).fill(v);

test('a full patch replaces the value', () => {
  const p = makePatch({ full: true, total: 100, runs: [[0, bytes(60, 1)], [60, bytes(40, 2)]] });
  const out = applyPatch(current, p);
  assert.strictEqual(out.length, 100);
  assert.deepStrictEqual(out, Uint8Array.from([...bytes(60, 1), ...bytes(40, 2)]));
  assert.deepStrictEqual(applyPatch(null, p), out, 'needs no local copy');
});

test('a partial patch changes its ranges of a copy', () => {
  const p = makePatch({ total: 256, runs: [[0, bytes(64, 9)], [128, bytes(64, 7)], [250, bytes(6, 5)]] });
  const before = current.slice();
  const out = applyPatch(current, p);
  assert.deepStrictEqual(current, before, 'the current value is untouched');
  const want = current.slice();
  want.fill(9, 0, 64);
  want.fill(7, 128, 192);
  want.fill(5, 250, 256);
  assert.deepStrictEqual(out, want);
  assert.deepStrictEqual(applyPatch(current, makePatch({ total: 256 })), current, 'no runs: no change');
  const parsed = parsePatch(p);
  assert.deepStrictEqual(parsed.runs.map((r) => [r.offset, r.data.length]), [[0, 64], [128, 64], [250, 6]]);
  assert.strictEqual(parsed.full, false);
  assert.strictEqual(parsed.total, 256);
});

test('invalid patches are rejected', () => {
  const ok = { total: 256, runs: [[0, bytes(4, 1)], [8, bytes(4, 1)]] };
  const cases = {
    'bad magic': (() => { const p = makePatch(ok); p[3] = 0x46; return p; })(),
    'version 2': makePatch({ ...ok, version: 2 }),
    'unknown flag': makePatch({ ...ok, flags: 2 }),
    'reserved byte 7': makePatch({ ...ok, reserved7: 1 }),
    'reserved word 20': makePatch({ ...ok, reserved20: 1 }),
    'run reserved': makePatch({ ...ok, runReserved: 1 }),
    'run past the end': makePatch({ total: 256, runs: [[250, bytes(7, 1)]] }),
    'offset past the end': makePatch({ total: 256, runs: [[2 ** 40, bytes(1, 1)]] }),
    overlapping: makePatch({ total: 256, runs: [[0, bytes(8, 1)], [4, bytes(8, 1)]] }),
    'out of order': makePatch({ total: 256, runs: [[8, bytes(4, 1)], [0, bytes(4, 1)]] }),
    'same offset twice': makePatch({ total: 256, runs: [[8, bytes(0, 1)], [8, bytes(4, 1)]] }),
    'trailing bytes': makePatch({ ...ok, extra: 1 }),
    'cut in a run header': makePatch(ok).subarray(0, 24 + 10),
    'cut in run data': makePatch(ok).subarray(0, 24 + 16 + 2),
    'header only, runs announced': makePatch(ok).subarray(0, 24),
    'shorter than the header': makePatch(ok).subarray(0, 23),
    'total too large': makePatch({ total: 64 + 64 * 64 + 64 * 2 ** 23 + 1 }),
    'full with a gap': makePatch({ full: true, total: 8, runs: [[0, bytes(4, 1)], [5, bytes(3, 1)]] }),
    'full too short': makePatch({ full: true, total: 8, runs: [[0, bytes(4, 1)]] }),
  };
  for (const [name, p] of Object.entries(cases)) {
    assert.throws(() => applyPatch(current, p), PatchError, name);
  }
  assert.throws(() => applyPatch(current, makePatch({ total: 255 })), PatchError, 'length differs from the local copy');
  assert.throws(() => applyPatch(null, makePatch({ total: 256 })), PatchError, 'partial without a local copy');
  assert.throws(() => parsePatch('BLMP'), TypeError);
  // the largest value is a union (or growing filter) of 64 layers holding
  // 2^23 blocks together, longer than the largest plain filter
  const largest = 64 + 64 * 64 + 64 * 2 ** 23;
  assert.strictEqual(parsePatch(makePatch({ total: largest, runs: [[largest - 4, bytes(4, 1)]] })).total, largest);
});
