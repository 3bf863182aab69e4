'use strict';
// The two XXH3-64 implementations the package can use agree: the native
// default (@node-rs/xxhash) and the WebAssembly adapter (hash-wasm), on
// every length 0-300 and seeds at the edges; and the conformance hashes
// hold through the adapter.

const test = require('node:test');
const assert = require('node:assert');
const { bfHash, setXxh3, typed } = require('../..');
const { xxh3 } = require('../../lib/xxh3');
const { hashWasmXxh3 } = require('../../hash-wasm');

const SEEDS = [0n, 1n, 2n ** 63n, 2n ** 64n - 1n, 0x9e3779b97f4a7c15n];

test('native and WebAssembly XXH3 agree', async () => {
  const wasm = await hashWasmXxh3({ seeds: SEEDS });
  let x = 12345;
  for (let len = 0; len <= 300; len++) {
    const b = new Uint8Array(len);
    for (let i = 0; i < len; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      b[i] = x >>> 24;
    }
    for (const s of SEEDS) assert.strictEqual(wasm(b, s), xxh3(b, s), `len ${len} seed ${s}`);
  }
  assert.throws(() => wasm(new Uint8Array(1), 7n), /not prepared/);
  await wasm.prepare(7n);
  assert.strictEqual(wasm(new Uint8Array(1), 7n), xxh3(new Uint8Array(1), 7n));
});

test('setXxh3 replaces the implementation', async () => {
  const before = bfHash(typed('int8', 42), 5n);
  const wasm = await hashWasmXxh3({ seeds: [5n] });
  let calls = 0;
  setXxh3((b, s) => { calls++; return wasm(b, s); });
  try {
    assert.strictEqual(bfHash(typed('int8', 42), 5n), before);
    assert.strictEqual(calls, 1);
  } finally {
    setXxh3(require('../../lib/xxh3-native'));
  }
  assert.throws(() => setXxh3(null), TypeError);
});
