'use strict';
// The XXH3-64 function every hash goes through (docs/FORMAT.md §2), and the
// one place to replace it (e.g. by the hash-wasm adapter in a browser).

let impl = null;

function loadDefault() {
  let native;
  try {
    native = require('./xxh3-native.js');
  } catch (e) {
    native = null;
  }
  if (typeof native !== 'function') {
    throw new Error('no XXH3 implementation: @node-rs/xxhash is not available here; ' +
      "call setXxh3(await require('pg-bloomfilter/hash-wasm').hashWasmXxh3())");
  }
  return native;
}

/**
 * XXH3-64 of the bytes with the seed (an unsigned 64-bit BigInt); the
 * result is an unsigned 64-bit BigInt.
 */
function xxh3(bytes, seed) {
  if (impl === null) impl = loadDefault();
  return impl(bytes, seed);
}

/** Replace the XXH3 implementation: fn(bytes: Uint8Array, seed: bigint) => bigint. */
function setXxh3(fn) {
  if (typeof fn !== 'function') throw new TypeError('setXxh3 needs a function');
  impl = fn;
}

module.exports = { xxh3, setXxh3 };
