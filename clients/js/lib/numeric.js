'use strict';
// The canonical text of a numeric value (docs/FORMAT.md §3, family 3): the
// decimal as PostgreSQL prints it, without insignificant zeros.  Accepts
// what PostgreSQL's numeric input accepts in decimal notation (sign,
// point, exponent, NaN, Infinity), and JavaScript numbers and BigInts.

const { BloomFilterError, SQLSTATE } = require('./errors');

// the limits of PostgreSQL's numeric: digits before and after the point
const MAX_INT_DIGITS = 131072;
const MAX_FRAC_DIGITS = 16383;

const DECIMAL = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;
const SPECIAL = /^\s*([+-]?)(nan|inf|infinity)\s*$/i;

function bad(text) {
  return new BloomFilterError('invalid input syntax for type numeric', SQLSTATE.INVALID_TEXT,
    `"${String(text).slice(0, 60)}" is not a decimal number.`);
}

function overflow() {
  return new BloomFilterError('value overflows numeric format', SQLSTATE.OUT_OF_RANGE,
    'PostgreSQL numeric holds at most 131072 digits before the point and 16383 after it.');
}

function fromText(s) {
  const sp = SPECIAL.exec(s);
  if (sp) {
    if (sp[2].toLowerCase() === 'nan') {
      if (sp[1]) throw bad(s);
      return 'NaN';
    }
    return sp[1] === '-' ? '-Infinity' : 'Infinity';
  }
  const m = DECIMAL.exec(s);
  if (!m || (m[2] === '' && (m[3] === undefined || m[3] === ''))) throw bad(s);
  const frac = m[3] || '';
  let digits = m[2] + frac;
  let exp = -frac.length;
  if (m[4] !== undefined) {
    // beyond this any non-zero value overflows; zero stays zero
    const e = Number(m[4]);
    if (Math.abs(e) > 4 * MAX_INT_DIGITS) {
      if (/[1-9]/.test(digits)) throw overflow();
      return '0';
    }
    exp += e;
  }
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  const nz = digits.replace(/0+$/, '');
  exp += digits.length - nz.length;
  digits = nz;
  const point = digits.length + exp; // digits before the point
  if (point > MAX_INT_DIGITS || -exp > MAX_FRAC_DIGITS) throw overflow();
  let out;
  if (exp >= 0) out = digits + '0'.repeat(exp);
  else if (point > 0) out = digits.slice(0, point) + '.' + digits.slice(point);
  else out = '0.' + '0'.repeat(-point) + digits;
  return (m[1] === '-' ? '-' : '') + out;
}

/**
 * Canonical numeric text of a string, number, BigInt, or an object whose
 * toString() prints a decimal (decimal.js, big.js, ...).
 */
function numericText(value) {
  switch (typeof value) {
    case 'string':
      return fromText(value);
    case 'bigint':
      return value.toString();
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (value === Infinity) return 'Infinity';
      if (value === -Infinity) return '-Infinity';
      return fromText(String(value)); // shortest text that reads back the same
    case 'object':
      if (value !== null && typeof value.toString === 'function' &&
          value.toString !== Object.prototype.toString) {
        return fromText(value.toString());
      }
      break;
    default:
      break;
  }
  throw new TypeError(`cannot use ${typeof value} as a numeric value`);
}

module.exports = { numericText };
