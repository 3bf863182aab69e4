'use strict';
// Dates and timestamps as the server hashes them (docs/FORMAT.md §3,
// families 8-10): days or microseconds since 2000-01-01 00:00:00 in the
// proleptic Gregorian calendar, with the infinities at the int32/int64
// limits.  Reads PostgreSQL's ISO output ('2024-02-29', '0044-03-15 BC',
// '2024-02-29 13:45:00.25+05:30') and JavaScript Dates.

const { BloomFilterError, SQLSTATE } = require('./errors');

const DATE_NEG_INF = -(2 ** 31);
const DATE_POS_INF = 2 ** 31 - 1;
const TS_NEG_INF = -(2n ** 63n);
const TS_POS_INF = 2n ** 63n - 1n;
const US_PER_DAY = 86400000000n;
// days from 2000-01-01 of the server's limits: 4714-11-24 BC (Julian day 0),
// 5874897-12-31 for dates and 294276-12-31 for timestamps
const MIN_DAY = -2451545;
const MAX_DATE_DAY = 2145031948;
const MAX_TS_US = 9223371331199999999n;
// 2000-01-01 00:00:00 UTC in Unix milliseconds
const PG_EPOCH_MS = 946684800000;

/** Days from 2000-01-01 of the proleptic Gregorian y-m-d (astronomical y). */
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468 - 10957;
}

function isLeap(y) {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y, m) {
  return [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

function badFormat(type, s) {
  return new BloomFilterError(`invalid input syntax for type ${type}`, SQLSTATE.DATETIME_FORMAT,
    `"${String(s).slice(0, 60)}" is not an ISO ${type} as PostgreSQL prints it.`);
}

function outOfRange(type, s) {
  return new BloomFilterError(`${type} out of range`, SQLSTATE.DATETIME_OVERFLOW,
    `"${String(s).slice(0, 60)}" is outside the range PostgreSQL supports.`);
}

function special(s) {
  const t = s.trim().toLowerCase();
  if (t === 'infinity' || t === '+infinity') return 1;
  if (t === '-infinity') return -1;
  return 0;
}

// year, month, day of an ISO date with optional " BC": astronomical year
function civil(type, s, ys, ms, ds, bc) {
  let y = Number(ys);
  const m = Number(ms);
  const d = Number(ds);
  if (y === 0) throw badFormat(type, s);
  if (bc) y = 1 - y;
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) throw outOfRange(type, s);
  return daysFromCivil(y, m, d);
}

const DATE_RE = /^\s*(\d{4,})-(\d\d)-(\d\d)( BC)?\s*$/;

/** Days since 2000-01-01 of a date: ISO text, or a Date by its local calendar day. */
function dateDays(value) {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw badFormat('date', value);
    return daysFromCivil(value.getFullYear(), value.getMonth() + 1, value.getDate());
  }
  if (typeof value !== 'string') throw new TypeError(`cannot use ${typeof value} as a date`);
  const sp = special(value);
  if (sp) return sp > 0 ? DATE_POS_INF : DATE_NEG_INF;
  const m = DATE_RE.exec(value);
  if (!m) throw badFormat('date', value);
  const days = civil('date', value, m[1], m[2], m[3], m[4]);
  if (days < MIN_DAY || days > MAX_DATE_DAY) throw outOfRange('date', value);
  return days;
}

const TS_RE = new RegExp('^\\s*(\\d{4,})-(\\d\\d)-(\\d\\d)[ T](\\d\\d):(\\d\\d):(\\d\\d)(?:\\.(\\d{1,6}))?' +
  '(Z|[+-]\\d\\d(?::?\\d\\d(?::?\\d\\d)?)?)?( BC)?\\s*$');

function offsetSeconds(z) {
  if (z === 'Z') return 0;
  const sign = z[0] === '-' ? -1 : 1;
  const digits = z.slice(1).replace(/:/g, '');
  const h = Number(digits.slice(0, 2));
  const mi = Number(digits.slice(2, 4) || '0');
  const s = Number(digits.slice(4, 6) || '0');
  if (mi > 59 || s > 59) return NaN;
  return sign * (h * 3600 + mi * 60 + s);
}

/**
 * Microseconds since 2000-01-01 00:00:00 (timestamp: wall clock; timestamptz:
 * UTC) as a BigInt.  Text must carry an offset for timestamptz and none for
 * timestamp.  A Date is read by its local wall clock for timestamp (as
 * node-postgres builds it) and by its instant for timestamptz.
 */
function timestampMicros(value, withTz) {
  const type = withTz ? 'timestamptz' : 'timestamp';
  if (value instanceof Date) {
    const t = value.getTime();
    if (Number.isNaN(t)) throw badFormat(type, value);
    let ms = t - PG_EPOCH_MS;
    if (!withTz) ms -= value.getTimezoneOffset() * 60000;
    return BigInt(ms) * 1000n;
  }
  if (typeof value !== 'string') throw new TypeError(`cannot use ${typeof value} as a ${type}`);
  const sp = special(value);
  if (sp) return sp > 0 ? TS_POS_INF : TS_NEG_INF;
  const m = TS_RE.exec(value);
  if (!m) throw badFormat(type, value);
  if (withTz !== (m[8] !== undefined)) {
    throw new BloomFilterError(`invalid input syntax for type ${type}`, SQLSTATE.DATETIME_FORMAT,
      withTz ? `"${value}" has no UTC offset; write it as PostgreSQL prints it, e.g. "2024-01-02 03:04:05+00".`
        : `"${value}" has a UTC offset, which a timestamp without time zone does not have.`);
  }
  const days = civil(type, value, m[1], m[2], m[3], m[9]);
  const h = Number(m[4]);
  const mi = Number(m[5]);
  const s = Number(m[6]);
  const frac = m[7] ? Number(m[7].padEnd(6, '0')) : 0;
  if (mi > 59 || s > 60 || h > 24 || (h === 24 && (mi > 0 || s > 0 || frac > 0))) {
    throw outOfRange(type, value);
  }
  let secs = h * 3600 + mi * 60 + s;
  if (withTz) {
    const off = offsetSeconds(m[8]);
    if (Number.isNaN(off)) throw outOfRange(type, value);
    secs -= off;
  }
  const us = BigInt(days) * US_PER_DAY + BigInt(secs) * 1000000n + BigInt(frac);
  if (us < BigInt(MIN_DAY) * US_PER_DAY || us > MAX_TS_US) throw outOfRange(type, value);
  return us;
}

module.exports = { dateDays, timestampMicros, daysFromCivil };
