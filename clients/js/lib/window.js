'use strict';
// A sliding-window filter (`bloomwindow`, docs/FORMAT.md §7) held locally:
// parsed from its bytes or text form as the server reads them, and tested
// or extended at a time.  Slice i covers [i·S, (i+1)·S) microseconds since
// 2000-01-01 UTC and lives in slot i mod (N+1), a plain BloomFilter.

const { BloomFilter, familyOf, toBytes } = require('./filter');
const { BloomFilterError, SQLSTATE } = require('./errors');
const { HEADER_BYTES, BLOCK_BYTES, MAX_NBLOCKS, MAX_INSERTED } = require('./header');
const { formatFpr } = require('./text');
const { isNull } = require('./encode');

const MAGIC = [0x42, 0x4c, 0x4d, 0x57]; // "BLMW"
const NO_SLICE = -(1n << 63n);
const MAX_SLICES = 1024;
const MAX_SPAN_US = 1n << 61n;
// the range of timestamptz in microseconds since 2000-01-01 (end excluded)
const TIME_MIN = -211813488000000000n;
const TIME_END = 9223371331200000000n;
const EPOCH_UNIX_US = 946684800000000n;
const PREFIX = 'bloomwindow:1';

function floorDiv(a, b) {
  const q = a / b;
  return (a % b !== 0n && a < 0n) ? q - 1n : q;
}

/**
 * A time as BigInt microseconds since 2000-01-01 00:00:00 UTC: a Date
 * (millisecond precision), a BigInt or an integer number of microseconds.
 */
function micros(at) {
  if (at instanceof Date) {
    const ms = at.getTime();
    if (Number.isNaN(ms)) throw new TypeError('an invalid Date');
    return BigInt(ms) * 1000n - EPOCH_UNIX_US;
  }
  if (typeof at === 'bigint') return at;
  if (Number.isSafeInteger(at)) return BigInt(at);
  throw new TypeError('a time is a Date, or a BigInt or integer of microseconds since 2000-01-01 UTC');
}

function invalid(detail, code = SQLSTATE.INVALID_BINARY) {
  return new BloomFilterError('invalid bloomwindow value', code, detail);
}

/* the bytes of a window: its 64-byte header, then each slot's filter bytes */
function windowBytes(n, s, newest, ignored, capacity, fpr, slots) {
  const out = new Uint8Array(HEADER_BYTES + slots.reduce((a, x) => a + x.length, 0));
  const dv = new DataView(out.buffer);
  MAGIC.forEach((x, i) => { out[i] = x; });
  dv.setUint16(4, 1, true);
  dv.setUint16(6, n, true);
  dv.setBigInt64(8, s, true);
  dv.setBigInt64(16, newest, true);
  dv.setBigUint64(24, ignored, true);
  dv.setBigInt64(32, capacity, true);
  dv.setFloat64(40, fpr, true);
  slots.reduce((off, x) => { out.set(x, off); return off + x.length; }, HEADER_BYTES);
  return out;
}

function sameBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

class BloomWindow {
  /** Use BloomWindow.fromBytes or fromText. */
  constructor(fields, slots) {
    Object.assign(this, fields);
    this._slots = slots;
  }

  /** Parse the bytes of `window::bytea` (or a binary result); they are copied. */
  static fromBytes(input) {
    const b = new Uint8Array(toBytes(input));
    if (b.length < 2 * HEADER_BYTES) throw invalid(`The value is ${b.length} bytes, shorter than a window's header and a slot's.`);
    if (!MAGIC.every((x, i) => b[i] === x)) throw invalid('The value does not start with the magic bytes "BLMW".');
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const version = dv.getUint16(4, true);
    const n = dv.getUint16(6, true);
    const s = dv.getBigInt64(8, true);
    const newest = dv.getBigInt64(16, true);
    const ignored = dv.getBigUint64(24, true);
    const capacity = dv.getBigInt64(32, true);
    const fpr = dv.getFloat64(40, true);
    const nblocks = dv.getBigUint64(HEADER_BYTES + 24, true);
    if (version !== 1) throw invalid(`Window format version ${version} is not 1.`);
    if (n < 1 || n > MAX_SLICES) throw invalid(`${n} slices is not between 1 and ${MAX_SLICES}.`);
    if (s < 1n || s * BigInt(n) > MAX_SPAN_US) throw invalid(`Slice width ${s} microseconds is out of range.`);
    if (newest !== NO_SLICE && (newest < floorDiv(TIME_MIN, s) || newest > floorDiv(TIME_END - 1n, s))) {
      throw invalid(`Newest slice ${newest} lies outside the range of timestamptz.`);
    }
    if (ignored > MAX_INSERTED) throw invalid(`Ignored ${ignored} is 2^63 or more.`);
    if (b.subarray(48, 64).some((x) => x !== 0)) throw invalid('The reserved header bytes are not zero.');
    if (capacity < 1n) throw invalid(`Capacity ${capacity} is not positive.`);
    if (!(fpr > 0 && fpr < 1)) throw invalid(`Target fpr ${fpr} is not in (0, 1).`);
    if (nblocks < 1n || nblocks > BigInt(MAX_NBLOCKS) || BigInt(n + 1) * nblocks > BigInt(MAX_NBLOCKS)) {
      throw invalid(`Slots of ${nblocks} blocks are too large for ${n} slices.`);
    }
    const size = HEADER_BYTES + BLOCK_BYTES * Number(nblocks);
    if (b.length !== HEADER_BYTES + (n + 1) * size) {
      throw invalid(`The window is ${b.length} bytes; ${n + 1} slots of ${nblocks} blocks need ${HEADER_BYTES + (n + 1) * size}.`);
    }
    const first = b.subarray(HEADER_BYTES, 2 * HEADER_BYTES);
    const slots = [];
    for (let j = 0; j <= n; j++) {
      const raw = b.subarray(HEADER_BYTES + j * size, HEADER_BYTES + (j + 1) * size);
      slots.push(new BloomFilter(raw.slice()));
      if (!sameBytes(raw.subarray(0, 32), first.subarray(0, 32)) || !sameBytes(raw.subarray(40, 64), first.subarray(40, 64))) {
        throw invalid(`Slot ${j} differs from slot 0 in more than inserted.`);
      }
    }
    const s0 = slots[0];
    if (s0.capacity !== capacity || s0.targetFpr !== fpr / (n + 1)) {
      throw invalid("Slot 0 is not sized for the window's capacity and fpr.");
    }
    if ((s0.familyId === 0) !== (newest === NO_SLICE)) throw invalid("The slots' element family disagrees with the newest slice.");
    if (newest === NO_SLICE && ignored !== 0n) throw invalid(`An empty window counts ${ignored} ignored adds.`);
    return new BloomWindow({ _n: BigInt(n), _s: s, _newest: newest, _ignored: ignored, _capacity: capacity, _fpr: fpr }, slots);
  }

  /** Parse the text form (`window::text`), as the server's input function does. */
  static fromText(text) {
    const parts = String(text).split(' slot=');
    const toks = parts[0].split(' ');
    const keys = ['slices', 'slice_us', 'capacity', 'fpr', 'newest', 'ignored'];
    if (toks.length !== keys.length + 1 || toks[0] !== PREFIX || !keys.every((k, i) => toks[i + 1].startsWith(`${k}=`))) {
      throw invalid(`The value is not the text form of a bloomwindow ("${PREFIX} slices=... slot=...").`, SQLSTATE.INVALID_TEXT);
    }
    const v = toks.slice(1).map((t) => t.slice(t.indexOf('=') + 1));
    let w;
    try {
      const slots = parts.slice(1).map((t) => BloomFilter.fromText(t).toBytes());
      w = BloomWindow.fromBytes(windowBytes(Number(v[0]), BigInt(v[1]), v[4] === 'none' ? NO_SLICE : BigInt(v[4]),
        BigInt(v[5]), BigInt(v[2]), Number(v[3]), slots));
    } catch (e) {
      if (e instanceof BloomFilterError) throw invalid(e.detail || e.message, SQLSTATE.INVALID_TEXT);
      throw invalid(`A number of the text form is not valid: ${e.message}.`, SQLSTATE.INVALID_TEXT);
    }
    // one text per window: other spellings of the same numbers are refused
    if (w.toText() !== text) throw invalid('Not the text that bloomwindow output prints for this window.', SQLSTATE.INVALID_TEXT);
    return w;
  }

  /** Bytes or text, whichever `input` is. */
  static from(input) {
    return typeof input === 'string' ? BloomWindow.fromText(input) : BloomWindow.fromBytes(input);
  }

  _slot(i) {
    let m = i % (this._n + 1n);
    if (m < 0n) m += this._n + 1n;
    return this._slots[Number(m)];
  }

  /**
   * False if the value was definitely not added in the window that ends at
   * `at` (FORMAT.md §7.2-7.3); true if it probably was.
   */
  contains(value, at) {
    const t = micros(at);
    if (this._newest === NO_SLICE || isNull(value)) return false;
    const s0 = this._slots[0];
    s0._requirePortable();
    const h = s0._hashOf(value);
    const i = floorDiv(t, this._s);
    const hi = i < this._newest ? i : this._newest;
    const lo = (i > this._newest ? i : this._newest) - this._n;
    for (let s = lo; s <= hi; s++) {
      if (this._slot(s).containsHash(h)) return true;
    }
    return false;
  }

  /**
   * Add a value at `at`, as bf_window_add; true if a bit changed.  A time
   * older than the oldest slice kept is ignored and counted.
   */
  add(value, at) {
    const t = micros(at);
    if (isNull(value)) return false;
    const s0 = this._slots[0];
    const h = s0.hash(value);
    if (t < TIME_MIN || t >= TIME_END) {
      throw new BloomFilterError('time out of range', SQLSTATE.DATETIME_OVERFLOW, `The time ${t} is outside the range of timestamptz.`);
    }
    const i = floorDiv(t, this._s);
    if (this._newest === NO_SLICE || i > this._newest) {
      let lo = i - this._n;
      if (this._newest !== NO_SLICE && this._newest + 1n > lo) lo = this._newest + 1n;
      for (let s = lo; s <= i; s++) {
        const f = this._slot(s);
        f._value.fill(0, HEADER_BYTES);
        f._h.inserted = 0n;
        new DataView(f._value.buffer, f._value.byteOffset + 32, 8).setBigUint64(0, 0n, true);
      }
      this._newest = i;
    } else if (i < this._newest - this._n) {
      if (this._ignored < MAX_INSERTED) this._ignored += 1n;
      return false;
    }
    if (s0.familyId === 0) {
      const { family, detail } = familyOf(value);
      for (const f of this._slots) f._adopt(family, detail);
    }
    return this._slot(i)._addHash(h);
  }

  /** Parameters and state, as bf_window_info reports them. */
  info() {
    const s0 = this._slots[0];
    return {
      slices: Number(this._n),
      sliceMicros: this._s,
      windowMicros: this._n * this._s,
      capacityPerWindow: this._capacity,
      targetFpr: this._fpr,
      newestSlice: this._newest === NO_SLICE ? null : this._newest,
      ignored: this._ignored,
      nbitsPerSlice: s0.nbits,
      nhashes: s0.nhashes,
      seed: s0.seed,
      family: s0.family,
      byteLength: HEADER_BYTES + this._slots.reduce((a, f) => a + f.byteLength, 0),
    };
  }

  /** The slices stored, oldest first: their start, end and expiry (microseconds), inserted count and filter. */
  slices() {
    if (this._newest === NO_SLICE) return [];
    const out = [];
    for (let i = this._newest - this._n; i <= this._newest; i++) {
      const f = this._slot(i);
      out.push({ startMicros: i * this._s, endMicros: (i + 1n) * this._s, expiresMicros: (i + 1n + this._n) * this._s,
        inserted: f.inserted, filter: BloomFilter.fromBytes(f.toBytes()) });
    }
    return out;
  }

  /** The bytes `window::bytea` gives. */
  toBytes() {
    return windowBytes(Number(this._n), this._s, this._newest, this._ignored, this._capacity, this._fpr,
      this._slots.map((f) => f.toBytes()));
  }

  /** The text form, as `window::text` prints it. */
  toText() {
    const newest = this._newest === NO_SLICE ? 'none' : String(this._newest);
    return [PREFIX, `slices=${this._n}`, `slice_us=${this._s}`, `capacity=${this._capacity}`,
      `fpr=${formatFpr(this._fpr)}`, `newest=${newest}`, `ignored=${this._ignored}`]
      .concat(this._slots.map((f) => `slot=${f.toText()}`)).join(' ');
  }

  toString() {
    return this.toText();
  }
}

module.exports = { BloomWindow, micros };
