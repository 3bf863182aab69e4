'use strict';
// XXH3-64 with a 64-bit seed from @node-rs/xxhash (prebuilt native code for
// Node.js).  Bundlers for the browser replace this file by an empty module
// (package.json "browser"); there, use the hash-wasm adapter.
const { xxh3 } = require('@node-rs/xxhash');

module.exports = function xxh3Native(bytes, seed) {
  return xxh3.xxh64(bytes, seed);
};
