'use strict';
// bf_hash(value, seed) outside the server: the XXH3-64 of a value's
// canonical bytes (docs/FORMAT.md §2), as the signed bigint SQL returns.

const { canonicalBytes } = require('./encode');
const { familyOf } = require('./filter');
const { xxh3 } = require('./xxh3');

/**
 * The hash the server's bf_hash(value, seed) returns, a signed 64-bit
 * BigInt.  The family comes from the value (wrap it with typed() to choose:
 * a JavaScript string hashes as text, typed('numeric', '1.5') as numeric).
 */
function bfHash(value, seed = 0n) {
  const { family, fields } = familyOf(value);
  const h = xxh3(canonicalBytes(family, fields, value), BigInt.asUintN(64, BigInt(seed)));
  return BigInt.asIntN(64, h);
}

module.exports = { bfHash };
