'use strict';
// The text form of a filter (docs/FORMAT.md §5):
//   bloomfilter:1 layout=blocked hash=xxh3_64 family=... nhashes=... nbits=...
//   seed=... capacity=... fpr=... inserted=... bits=<base64>
// Parsing accepts what the server's input function accepts (the same
// tokens, number syntax and base64 rules), and builds the value's bytes.

const { BloomFilterError, NonPortableError, SQLSTATE } = require('./errors');
const { FAMILY, FAMILY_NAMES, MAX_RECORD_FIELDS, recordHasOther, familyText } = require('./families');
const { readHeader, writeHeader, HEADER_BYTES, BLOCK_BYTES, MAX_NBLOCKS, MAX_NHASHES, FLAG_NONPORTABLE } = require('./header');
const base64 = require('./base64');

const PREFIX = 'bloomfilter:1';
const U64_MAX = 2n ** 64n - 1n;
const I64_MAX = 2n ** 63n - 1n;

function bad(detail) {
  return new BloomFilterError('invalid input syntax for type bloomfilter', SQLSTATE.INVALID_TEXT, detail);
}

// " key=value" at position p; returns [value, position after it] or null
function token(s, p, key) {
  if (s[p] !== ' ' || !s.startsWith(key + '=', p + 1)) return null;
  const start = p + key.length + 2;
  let end = s.indexOf(' ', start);
  if (end < 0) end = s.length;
  return [s.slice(start, end), end];
}

// 1 to 20 decimal digits, no sign, at most 2^64 - 1
function parseU64(v) {
  if (v.length === 0 || v.length > 20 || !/^[0-9]+$/.test(v)) return null;
  const n = BigInt(v);
  return n <= U64_MAX ? n : null;
}

function parseI64(v) {
  const neg = v[0] === '-';
  const u = parseU64(neg ? v.slice(1) : v);
  if (u === null || u > (neg ? I64_MAX + 1n : I64_MAX)) return null;
  return neg ? -u : u;
}

function familyId(name) {
  const i = FAMILY_NAMES.indexOf(name);
  return i;
}

// "integer", "record(integer,text)"; family other names a server type
function parseFamily(v) {
  const paren = v.indexOf('(');
  const f = familyId(paren < 0 ? v : v.slice(0, paren));
  if (f < 0) return null;
  if (f !== FAMILY.record && f !== FAMILY.other) return paren < 0 ? { family: f, detail: 0 } : null;
  if (paren < 0 || v[v.length - 1] !== ')') return null;
  if (f === FAMILY.other) {
    throw new NonPortableError(`The text form names PostgreSQL type ${v.slice(paren + 1, -1)}, which only a server can resolve; read the filter's bytes (::bytea) instead.`);
  }
  const inner = v.slice(paren + 1, -1);
  if (inner === '') return null;
  const names = inner.split(',');
  let detail = 0;
  for (let i = 0; i < names.length; i++) {
    const ff = familyId(names[i]);
    if (ff <= 0 || ff === FAMILY.record || i >= MAX_RECORD_FIELDS) return null;
    detail |= ff << (4 * i);
  }
  return { family: f, detail: detail >>> 0 };
}

// fpr= as bloomfilter output prints it (decimal, optional exponent); the
// canonical check in parseText refuses every other spelling
const FPR_TEXT = /^-?\d+(\.\d+)?(e[+-]\d+)?$/;

function parseFpr(v) {
  return FPR_TEXT.test(v) ? Number(v) : null;
}

/** Parse the text form into the value's bytes (header and bits). */
function parseText(s) {
  if (typeof s !== 'string') throw new TypeError('the text form must be a string');
  if (!s.startsWith(PREFIX)) throw bad(`The value does not start with "${PREFIX}".`);
  let p = PREFIX.length;
  const next = (key, check, what) => {
    const t = token(s, p, key);
    const v = t === null ? null : check(t[0]);
    if (v === null || v === false) throw bad(what);
    p = t[1];
    return v;
  };
  next('layout', (v) => v === 'blocked', 'Expected "layout=blocked" after the version.');
  next('hash', (v) => v === 'xxh3_64', 'Expected "hash=xxh3_64" after the layout.');
  const fam = next('family', parseFamily, 'Expected "family=" and a known element family after the hash.');
  const nhashes = next('nhashes', (v) => {
    const n = parseU64(v);
    return n !== null && n >= 1n && n <= BigInt(MAX_NHASHES) ? Number(n) : null;
  }, `Expected "nhashes=" and a number from 1 to ${MAX_NHASHES}.`);
  const nblocks = next('nbits', (v) => {
    const n = parseU64(v);
    return n !== null && n > 0n && n % 512n === 0n && n / 512n <= BigInt(MAX_NBLOCKS) ? Number(n / 512n) : null;
  }, `Expected "nbits=" and a positive multiple of 512 of at most ${512 * MAX_NBLOCKS}.`);
  const seed = next('seed', parseI64, 'Expected "seed=" and a bigint.');
  const capacity = next('capacity', (v) => {
    const n = parseI64(v);
    return n !== null && n >= 0n ? n : null;
  }, 'Expected "capacity=" and a non-negative bigint.');
  const fpr = next('fpr', (v) => {
    const x = parseFpr(v);
    return x !== null && x >= 0 && x < 1 ? { x } : null;
  }, 'Expected "fpr=" and a number in [0, 1).').x;
  const inserted = next('inserted', parseU64, 'Expected "inserted=" and a non-negative number.');
  const t = token(s, p, 'bits');
  if (t === null || t[1] !== s.length) throw bad('Expected "bits=" and base64 as the last field.');
  const nbytes = BLOCK_BYTES * nblocks;
  if (t[0].length !== base64.encodedLength(nbytes)) {
    throw bad(`The bits hold ${t[0].length} base64 characters; ${512 * nblocks} bits need ${base64.encodedLength(nbytes)}.`);
  }
  const bits = base64.decodeExact(t[0], nbytes);
  if (bits === null) throw bad('The bits are not valid base64.');
  const nonportable = fam.family === FAMILY.record && recordHasOther(fam.detail);
  const value = new Uint8Array(HEADER_BYTES + nbytes);
  writeHeader(value, {
    family: fam.family, flags: nonportable ? FLAG_NONPORTABLE : 0, nhashes, detail: fam.detail,
    seed, nblocks, inserted, capacity, fpr,
  });
  value.set(bits, HEADER_BYTES);
  const h = readHeader(value, SQLSTATE.INVALID_TEXT); // the rules of the binary form
  // one text per filter, as the server reads it: leading zeros, signs and
  // other spellings of the same numbers are refused
  if (formatText(h, bits) !== s) throw bad('The text is not the form bloomfilter output prints for this filter.');
  return value;
}

/** The shortest text that reads back to the same double, as PostgreSQL prints it. */
function formatFpr(x) {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  if (!Number.isFinite(x)) return String(x);
  const [mant, e] = x.toExponential().split('e');
  const exp = Number(e);
  const neg = mant[0] === '-';
  const digits = mant.replace('-', '').replace('.', '');
  let out;
  if (exp >= -4 && exp < 15) {
    if (exp < 0) out = '0.' + '0'.repeat(-exp - 1) + digits;
    else if (digits.length <= exp + 1) out = digits + '0'.repeat(exp + 1 - digits.length);
    else out = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
  } else {
    const m = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    const ae = Math.abs(exp);
    out = m + 'e' + (exp < 0 ? '-' : '+') + (ae < 10 ? '0' : '') + ae;
  }
  return (neg ? '-' : '') + out;
}

/** The text form of a filter from its header fields and bits. */
function formatText(h, bits) {
  if (h.family === FAMILY.other) {
    throw new NonPortableError('The text form of a filter of a non-portable type names the type, which only a server knows; use the bytes.');
  }
  return `${PREFIX} layout=blocked hash=xxh3_64 family=${familyText(h.family, h.detail)}` +
    ` nhashes=${h.nhashes} nbits=${512 * h.nblocks} seed=${h.seed} capacity=${h.capacity}` +
    ` fpr=${formatFpr(h.fpr)} inserted=${h.inserted} bits=${base64.encode(bits)}`;
}

module.exports = { parseText, formatText, formatFpr, parseFpr, token, parseI64, parseU64 };
