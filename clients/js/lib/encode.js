'use strict';
// Canonical bytes of a value (docs/FORMAT.md §3).  A JavaScript value is
// read in the family of the filter it is checked against, as an untyped SQL
// literal takes the type of its context: strings are parsed in any family
// (so PostgreSQL's text output always works), other values only in the
// families they naturally belong to.  typed(type, value) pins a family (and,
// for float4 and bpchar, the type's own rule).

const { BloomFilterError, SQLSTATE } = require('./errors');
const { FAMILY, FAMILY_NAMES, SQL_TYPES, MAX_RECORD_FIELDS } = require('./families');
const { numericText } = require('./numeric');
const { dateDays, timestampMicros } = require('./datetime');

const utf8 = new TextEncoder();

/** A value with an explicit SQL type or family. */
class Typed {
  constructor(family, value, type) {
    this.family = family;
    this.value = value;
    this.type = type;
  }
}

/**
 * Pin a value's type: typed('int4', 42), typed('float4', 0.1),
 * typed('bpchar', 'ab  '), typed('numeric', '1.50'), typed('enum', 'happy'),
 * or a family name (typed('timestamptz', date)).  null stays SQL NULL.
 */
function typed(type, value) {
  const t = String(type).toLowerCase();
  const fam = SQL_TYPES[t] !== undefined ? SQL_TYPES[t] : t;
  const id = FAMILY[fam];
  if (id === undefined || id === FAMILY.none || id === FAMILY.other) {
    throw new BloomFilterError('unsupported type', SQLSTATE.NOT_SUPPORTED,
      `"${type}" is not a type or family whose hashes a client can compute.`);
  }
  return new Typed(id, value, t);
}

function mismatch(family, what) {
  return new BloomFilterError('value does not match the filter\'s element family', SQLSTATE.DATATYPE_MISMATCH,
    `The filter holds values of family ${FAMILY_NAMES[family]}, and ${what} is not one.`);
}

function describe(v) {
  if (v instanceof Typed) return `a value typed ${v.type}`;
  if (v instanceof Uint8Array) return 'a byte array';
  if (v instanceof Date) return 'a Date';
  if (Array.isArray(v)) return 'an array (a record)';
  return `a ${typeof v}`;
}

// one reusable 8-byte buffer for the fixed-width families (the hot path)
const SCRATCH = new Uint8Array(8);
const SCRATCH_DV = new DataView(SCRATCH.buffer);
const INT_RANGES = {
  int2: [-32768n, 32767n], smallint: [-32768n, 32767n],
  int4: [-2147483648n, 2147483647n], integer: [-2147483648n, 2147483647n],
  int: [-2147483648n, 2147483647n],
};
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT_TEXT = /^\s*[+-]?\d+\s*$/;

function int64Bytes(big, type) {
  const [lo, hi] = INT_RANGES[type] || [INT64_MIN, INT64_MAX];
  if (big < lo || big > hi) {
    throw new BloomFilterError('integer out of range', SQLSTATE.OUT_OF_RANGE,
      `${big} does not fit in ${INT_RANGES[type] ? type : 'bigint'}.`);
  }
  SCRATCH_DV.setBigInt64(0, big, true);
  return SCRATCH;
}

function integerBytes(v, type) {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && !INT_RANGES[type]) {
      SCRATCH_DV.setUint32(0, v >>> 0, true);
      SCRATCH_DV.setUint32(4, Math.floor(v / 4294967296) >>> 0, true);
      return SCRATCH;
    }
    if (Number.isSafeInteger(v)) return int64Bytes(BigInt(v), type);
    if (Number.isInteger(v)) {
      throw new BloomFilterError('integer out of range', SQLSTATE.OUT_OF_RANGE,
        `${v} is beyond the integers a JavaScript number holds exactly; pass a BigInt or a string.`);
    }
    throw mismatch(FAMILY.integer, `the number ${v}`);
  }
  if (typeof v === 'bigint') return int64Bytes(v, type);
  if (typeof v === 'string') {
    if (!INT_TEXT.test(v)) {
      throw new BloomFilterError('invalid input syntax for type bigint', SQLSTATE.INVALID_TEXT,
        `"${v.slice(0, 60)}" is not an integer.`);
    }
    return int64Bytes(BigInt(v.trim()), type);
  }
  throw mismatch(FAMILY.integer, describe(v));
}

const FLOAT_SPECIAL = /^\s*([+-]?)(nan|inf|infinity)\s*$/i;
const FLOAT_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

function floatOf(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const sp = FLOAT_SPECIAL.exec(v);
    if (sp) {
      if (sp[2].toLowerCase() === 'nan') return NaN;
      return sp[1] === '-' ? -Infinity : Infinity;
    }
    if (FLOAT_TEXT.test(v)) return Number(v.trim());
    throw new BloomFilterError('invalid input syntax for type double precision', SQLSTATE.INVALID_TEXT,
      `"${v.slice(0, 60)}" is not a number.`);
  }
  throw mismatch(FAMILY.float, describe(v));
}

function floatBytes(v, type) {
  let x = floatOf(v);
  if (type === 'float4' || type === 'real') x = Math.fround(x); // widened as the server does
  if (Number.isNaN(x)) {
    SCRATCH_DV.setUint32(0, 0, true);
    SCRATCH_DV.setUint32(4, 0x7ff80000, true);
  } else {
    SCRATCH_DV.setFloat64(0, x === 0 ? 0 : x, true);
  }
  return SCRATCH;
}

function bytesOf(v) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  return null;
}

function textBytes(v, type, family) {
  let b;
  if (typeof v === 'string') b = utf8.encode(v);
  else if ((b = bytesOf(v)) === null) throw mismatch(family, describe(v));
  if (type === 'bpchar' || type === 'char' || type === 'character') {
    let n = b.length;
    while (n > 0 && b[n - 1] === 0x20) n--;
    b = b.subarray(0, n);
  }
  return b;
}

function badBytea(v) {
  return new BloomFilterError('invalid input syntax for type bytea', SQLSTATE.INVALID_TEXT,
    `"${v.slice(0, 60)}" is neither \\x and hex digits nor the escape format.`);
}

// PostgreSQL's bytea input: '\x' and hex digits, or the escape format
function byteaFromText(s) {
  if (s.startsWith('\\x')) {
    const hex = s.slice(2);
    if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw badBytea(s);
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
    return out;
  }
  const raw = utf8.encode(s);
  const out = [];
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x5c) {
      out.push(raw[i]);
    } else if (raw[i + 1] === 0x5c) {
      out.push(0x5c);
      i++;
    } else if (i + 3 < raw.length && /^[0-3][0-7][0-7]$/.test(String.fromCharCode(raw[i + 1], raw[i + 2], raw[i + 3]))) {
      out.push(parseInt(String.fromCharCode(raw[i + 1], raw[i + 2], raw[i + 3]), 8));
      i += 3;
    } else {
      throw badBytea(s);
    }
  }
  return Uint8Array.from(out);
}

function byteaBytes(v) {
  if (typeof v === 'string') return byteaFromText(v);
  const b = bytesOf(v);
  if (b === null) throw mismatch(FAMILY.bytea, describe(v));
  return b;
}

const HEX = /^[0-9a-fA-F]{2}$/;

// PostgreSQL's uuid input: 32 hex digits, optionally in braces, with an
// optional hyphen after any group of four
function uuidBytes(v) {
  const b = bytesOf(v);
  if (b !== null) {
    if (b.length !== 16) throw mismatch(FAMILY.uuid, `a byte array of length ${b.length}`);
    return b;
  }
  if (typeof v !== 'string') throw mismatch(FAMILY.uuid, describe(v));
  const bad = () => new BloomFilterError('invalid input syntax for type uuid', SQLSTATE.INVALID_TEXT,
    `"${v.slice(0, 60)}" is not a UUID.`);
  let s = v;
  const braces = s[0] === '{';
  if (braces) s = s.slice(1);
  const out = new Uint8Array(16);
  let p = 0;
  for (let i = 0; i < 16; i++) {
    const pair = s.substr(p, 2);
    if (!HEX.test(pair)) throw bad();
    out[i] = parseInt(pair, 16);
    p += 2;
    if (s[p] === '-' && i % 2 === 1 && i < 15) p++;
  }
  if (braces) {
    if (s[p] !== '}') throw bad();
    p++;
  }
  if (p !== s.length) throw bad();
  return out;
}

const TRUE_TEXT = new Set(['t', 'true', 'y', 'yes', 'on', '1']);
const FALSE_TEXT = new Set(['f', 'false', 'n', 'no', 'off', '0']);

function boolBytes(v) {
  let b = v;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (TRUE_TEXT.has(t)) b = true;
    else if (FALSE_TEXT.has(t)) b = false;
    else {
      throw new BloomFilterError('invalid input syntax for type boolean', SQLSTATE.INVALID_TEXT,
        `"${v.slice(0, 60)}" is not a boolean.`);
    }
  }
  if (typeof b !== 'boolean') throw mismatch(FAMILY.boolean, describe(v));
  return Uint8Array.of(b ? 1 : 0);
}

function dateBytes(v) {
  if (typeof v !== 'string' && !(v instanceof Date)) throw mismatch(FAMILY.date, describe(v));
  const d = dateDays(v);
  SCRATCH_DV.setUint32(0, d >>> 0, true);
  SCRATCH_DV.setUint32(4, d < 0 ? 0xffffffff : 0, true);
  return SCRATCH;
}

function timestampBytes(v, family) {
  if (typeof v !== 'string' && !(v instanceof Date)) throw mismatch(family, describe(v));
  SCRATCH_DV.setBigInt64(0, timestampMicros(v, family === FAMILY.timestamptz), true);
  return SCRATCH;
}

// the families a JavaScript value may be read in when it is not a string
function assertFits(family, v) {
  switch (typeof v) {
    case 'string':
      return;
    case 'number':
      if (family === FAMILY.integer || family === FAMILY.float || family === FAMILY.numeric) return;
      break;
    case 'bigint':
      if (family === FAMILY.integer || family === FAMILY.numeric) return;
      break;
    case 'boolean':
      if (family === FAMILY.boolean) return;
      break;
    default:
      if (family === FAMILY.numeric || family === FAMILY.text || family === FAMILY.enum ||
          family === FAMILY.bytea || family === FAMILY.uuid || family === FAMILY.date ||
          family === FAMILY.timestamp || family === FAMILY.timestamptz) return;
  }
  throw mismatch(family, describe(v));
}

/**
 * Canonical bytes of a non-NULL scalar in the given family; `type` is the
 * SQL type name of a typed value (for float4 and bpchar).  The result may
 * be a shared scratch buffer, valid until the next call.
 */
function scalarBytes(family, v, type) {
  switch (family) {
    case FAMILY.integer: return integerBytes(v, type);
    case FAMILY.float: return floatBytes(v, type);
    case FAMILY.numeric: return utf8.encode(numericText(v));
    case FAMILY.text:
    case FAMILY.enum: return textBytes(v, type, family);
    case FAMILY.bytea: return byteaBytes(v);
    case FAMILY.uuid: return uuidBytes(v);
    case FAMILY.boolean: return boolBytes(v);
    case FAMILY.date: return dateBytes(v);
    case FAMILY.timestamp:
    case FAMILY.timestamptz: return timestampBytes(v, family);
    default: throw mismatch(family, describe(v));
  }
}

// unwrap a typed value, checking its family against the expected one
function unwrap(family, v) {
  if (v instanceof Typed) {
    if (v.family !== family) throw mismatch(family, `a value typed ${v.type}`);
    return v;
  }
  if (family !== FAMILY.record) assertFits(family, v);
  return null;
}

function isNull(v) {
  return v === null || v === undefined || (v instanceof Typed && (v.value === null || v.value === undefined));
}

/** §3.2: a record's bytes from its field families and values (null = NULL). */
function recordBytes(fields, values) {
  if (!Array.isArray(values)) values = values instanceof Typed && Array.isArray(values.value) ? values.value : null;
  if (values === null || values.length !== fields.length) {
    throw new BloomFilterError('value does not match the filter\'s element family', SQLSTATE.DATATYPE_MISMATCH,
      `The filter holds records of ${fields.length} field(s); pass an array of ${fields.length} value(s).`);
  }
  const parts = [];
  let total = 0;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const v = values[i];
    let b = null;
    if (!isNull(v)) {
      if (f === FAMILY.record) throw mismatch(f, 'a nested record');
      const t = unwrap(f, v);
      b = scalarBytes(f, t ? t.value : v, t ? t.type : undefined).slice();
    }
    const head = new Uint8Array(5);
    head[0] = f;
    new DataView(head.buffer).setUint32(1, b === null ? 0xffffffff : b.length, true);
    parts.push(head);
    total += 5;
    if (b !== null) {
      parts.push(b);
      total += b.length;
    }
  }
  const out = new Uint8Array(total);
  let p = 0;
  for (const part of parts) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}

/**
 * Canonical bytes of a value for a filter of the given family; for a
 * record, `fields` are the field families.  Throws a 42804 error when the
 * value cannot be of that family.
 */
function canonicalBytes(family, fields, v) {
  if (family === FAMILY.record) {
    if (v instanceof Typed && v.family !== FAMILY.record) throw mismatch(family, `a value typed ${v.type}`);
    return recordBytes(fields, v);
  }
  const t = unwrap(family, v);
  return scalarBytes(family, t ? t.value : v, t ? t.type : undefined);
}

/** The family a value has on its own (to give an empty filter its family). */
function inferFamily(v) {
  if (v instanceof Typed) return v.family;
  if (Array.isArray(v)) return FAMILY.record;
  switch (typeof v) {
    case 'bigint': return FAMILY.integer;
    case 'number': return Number.isSafeInteger(v) ? FAMILY.integer : FAMILY.float;
    case 'string': return FAMILY.text;
    case 'boolean': return FAMILY.boolean;
    default:
      if (v instanceof Date) return FAMILY.timestamptz;
      if (bytesOf(v) !== null) return FAMILY.bytea;
  }
  throw new TypeError(`cannot tell the family of ${describe(v)}; wrap it with typed(type, value)`);
}

/** Field families of a record value given on its own (for an empty filter). */
function inferRecordFields(v) {
  const values = Array.isArray(v) ? v : v.value;
  if (!Array.isArray(values) || values.length < 1 || values.length > MAX_RECORD_FIELDS) {
    throw new BloomFilterError('a record has 1 to 8 fields', SQLSTATE.NOT_SUPPORTED,
      `Got ${Array.isArray(values) ? values.length : 'no'} field(s).`);
  }
  return values.map((x) => {
    if (x === null || x === undefined) {
      throw new TypeError('cannot tell the family of a NULL field; wrap it with typed(type, null)');
    }
    const f = inferFamily(x);
    if (f === FAMILY.record) {
      throw new BloomFilterError('a record cannot contain another record', SQLSTATE.NOT_SUPPORTED,
        'Flatten the nested row into its fields.');
    }
    return f;
  });
}

module.exports = { Typed, typed, canonicalBytes, inferFamily, inferRecordFields, isNull };
