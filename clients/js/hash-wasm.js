'use strict';
// XXH3-64 from hash-wasm (WebAssembly): for browsers, and for platforms
// where @node-rs/xxhash has no prebuilt binary.  hash-wasm fixes a
// hasher's seed when it creates it, asynchronously, so seeds are prepared
// ahead: the filters of a table or index all use seed 0, the default.
//
//   const { setXxh3 } = require('pg-bloomfilter');
//   setXxh3(await require('pg-bloomfilter/hash-wasm').hashWasmXxh3());

async function hashWasmXxh3({ seeds = [0n] } = {}) {
  const { createXXHash3 } = require('hash-wasm');
  const hashers = new Map();
  async function prepare(seed) {
    const s = BigInt.asUintN(64, BigInt(seed));
    if (!hashers.has(s)) {
      hashers.set(s, await createXXHash3(Number(s & 0xffffffffn), Number(s >> 32n)));
    }
  }
  for (const s of seeds) await prepare(s);
  function xxh3(bytes, seed) {
    const h = hashers.get(seed);
    if (h === undefined) {
      throw new Error(`XXH3 seed ${BigInt.asIntN(64, seed)} is not prepared: await xxh3.prepare(seed) first`);
    }
    h.init();
    h.update(bytes);
    const d = h.digest('binary'); // the canonical (big-endian) bytes
    return new DataView(d.buffer, d.byteOffset, 8).getBigUint64(0, false);
  }
  xxh3.prepare = prepare;
  return xxh3;
}

module.exports = { hashWasmXxh3 };
