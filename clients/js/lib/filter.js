'use strict';
// A bloomfilter value held locally: parsed from its bytes or text form,
// tested and extended with the server's typed hashing, combined, and
// described with the server's estimates (docs/FORMAT.md §1-§6).  A value of
// the growing form (§9) or a union (§10) is a BloomFilter too: it holds its
// layers, each a plain BloomFilter over its part of the bytes, and answers
// true when any layer does; adding to a growing filter and set algebra are
// left to the server, and a union is read-only.

const { BloomFilterError, NonPortableError, SQLSTATE } = require('./errors');
const { FAMILY, FAMILY_NAMES, recordFields, familyText } = require('./families');
const {
  readHeader, writeHeader, HEADER_BYTES, BLOCK_BYTES, MAX_NBLOCKS, MAX_NHASHES, MAX_INSERTED, FLAG_NONPORTABLE,
} = require('./header');
const { parseText, formatText } = require('./text');
const { canonicalBytes, inferFamily, inferRecordFields, isNull } = require('./encode');
const { testHash, setHash } = require('./probe');
const { xxh3 } = require('./xxh3');
const stats = require('./stats');
const {
  isLayered, isGrowingText, readGrowing, parseGrowingText, formatGrowingText, refuseGrowing,
} = require('./growing');

const I64_MAX = 2n ** 63n - 1n;

// the 64-bit hash split into 32-bit halves without BigInt arithmetic
const H = new DataView(new ArrayBuffer(8));

function u64(x) {
  return BigInt.asUintN(64, BigInt(x));
}

function toBytes(b) {
  if (b instanceof Uint8Array) return b;
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  throw new TypeError('expected a Uint8Array, Buffer or ArrayBuffer');
}

// the family (and record fields) a value gives an empty filter
function familyOf(value) {
  const family = inferFamily(value);
  const fields = family === FAMILY.record ? inferRecordFields(value) : null;
  let detail = 0;
  if (fields) fields.forEach((f, i) => { detail |= f << (4 * i); });
  return { family, fields, detail: detail >>> 0 };
}

// a sum of non-negative BigInts that stops at max, as the server's bf_info does
function capped(values, max) {
  let sum = 0n;
  for (const v of values) sum = v > max - sum ? max : sum + v;
  return sum;
}

class BloomFilter {
  /**
   * Use BloomFilter.fromBytes, fromText or empty. `value` is owned by the
   * filter.  A plain filter has `header` (or reads it); a growing one or a
   * union has `growing`, what readGrowing found in `value`.
   */
  constructor(value, header, growing = null) {
    this._value = value;
    this._grow = growing;
    if (growing) {
      // the layers share the bytes; layer 0 gives family, seed and flags
      this._layers = growing.layers.map(({ offset, length, h }) => new BloomFilter(value.subarray(offset, offset + length), h));
      this._h = this._layers[0]._h;
    } else {
      this._layers = null;
      this._h = header || readHeader(value);
    }
    this._sync();
  }

  _sync() {
    const h = this._h;
    this._fields = h.family === FAMILY.record ? recordFields(h.detail) : null;
    this._seed = BigInt.asUintN(64, h.seed);
    this._portable = (h.flags & FLAG_NONPORTABLE) === 0;
  }

  /** Parse the bytes of `filter::bytea` (or binary COPY / a binary result); they are copied. */
  static fromBytes(bytes) {
    return wrap(new Uint8Array(toBytes(bytes))); // a copy, even of a Buffer
  }

  /** Parse the text form (`filter::text`), plain, growing or a union. */
  static fromText(text) {
    if (typeof text === 'string' && isGrowingText(text)) {
      const { bytes, g } = parseGrowingText(text);
      return new BloomFilter(bytes, null, g);
    }
    return new BloomFilter(parseText(text));
  }

  /** Bytes or text, whichever `input` is. */
  static from(input) {
    return typeof input === 'string' ? BloomFilter.fromText(input) : BloomFilter.fromBytes(input);
  }

  /**
   * A new empty filter of nbits (a multiple of 512) and nhashes, as
   * bf_create_sized makes it; capacity and fpr are only recorded.
   */
  static empty({ nbits, nhashes, seed = 0n, capacity = 0n, fpr = 0 }) {
    const nblocks = nbits / 512;
    if (!Number.isInteger(nblocks) || nblocks < 1 || nblocks > MAX_NBLOCKS) {
      throw new BloomFilterError('invalid filter size', SQLSTATE.INVALID_PARAMETER,
        `nbits must be a positive multiple of 512 of at most ${512 * MAX_NBLOCKS}.`);
    }
    if (!Number.isInteger(nhashes) || nhashes < 1 || nhashes > MAX_NHASHES) {
      throw new BloomFilterError('invalid number of hashes', SQLSTATE.INVALID_PARAMETER,
        `nhashes must be from 1 to ${MAX_NHASHES}.`);
    }
    const value = new Uint8Array(HEADER_BYTES + BLOCK_BYTES * nblocks);
    writeHeader(value, {
      family: 0, flags: 0, nhashes, detail: 0, seed: BigInt.asIntN(64, BigInt(seed)),
      nblocks, inserted: 0n, capacity: BigInt(capacity), fpr,
    });
    return new BloomFilter(value, readHeader(value, SQLSTATE.INVALID_PARAMETER));
  }

  get family() { return this._h.family === FAMILY.other ? 'other' : familyText(this._h.family, this._h.detail); }
  get familyId() { return this._h.family; }
  /** Field family names of a record filter, else null. */
  get fields() { return this._fields ? this._fields.map((f) => FAMILY_NAMES[f]) : null; }
  /** Bits set per value; null for a growing filter or a union, whose layers differ (see layers). */
  get nhashes() { return this._layers ? null : this._h.nhashes; }
  /** Blocks (of every layer of a growing filter or a union). */
  get nblocks() { return this._layers ? this._layers.reduce((n, l) => n + l.nblocks, 0) : this._h.nblocks; }
  get nbits() { return 512 * this.nblocks; }
  /** The seed as stored: a signed 64-bit BigInt. */
  get seed() { return this._h.seed; }
  /** The capacity sized for (0n: sized explicitly); of a growing filter or a union, of its layers (so far). */
  get capacity() { return this._layers ? capped(this._layers.map((l) => l.capacity), I64_MAX) : this._h.capacity; }
  /** The rate sized for (0: sized explicitly); of a growing filter, the whole filter's; of a union, its header's bound. */
  get targetFpr() { return this._grow ? this._grow.fpr : this._h.fpr; }
  /** Adds that changed a bit (summed over the layers of a growing filter or a union). */
  get inserted() { return this._layers ? capped(this._layers.map((l) => l.inserted), MAX_INSERTED) : this._h.inserted; }
  get portable() { return this._portable; }
  /** Size of the value in bytes (header and bits). */
  get byteLength() { return this._value.length; }
  /** True for the growing form (bf_create_growing, FORMAT.md §9). */
  get isGrowing() { return this._layers !== null && !this._grow.union; }
  /** True for a union (bf_union_layered, a distributed table's filter; FORMAT.md §10). */
  get isUnion() { return this._layers !== null && this._grow.union; }
  /** 'blocked', 'growing' or 'union', as bf_info's layout. */
  get layout() { return this._layers === null ? 'blocked' : this._grow.union ? 'union' : 'growing'; }
  /** Growth factor of a growing filter's layers; null for a plain filter or a union. */
  get growth() { return this.isGrowing ? this._grow.growth : null; }
  /** Tightening ratio of a growing filter's rates; null for a plain filter or a union. */
  get ratio() { return this.isGrowing ? this._grow.ratio : null; }
  /** Each layer's header fields, as bf_layers: one for a plain filter. */
  get layers() {
    return (this._layers || [this]).map((l) => ({
      nbits: l.nbits, nhashes: l.nhashes, capacity: l.capacity, targetFpr: l.targetFpr, inserted: l.inserted,
    }));
  }

  _requirePortable() {
    if (!this._portable) {
      throw new NonPortableError(`The filter holds values of family ${familyText(this._h.family, this._h.detail)}, ` +
        'hashed by PostgreSQL internals that a client cannot compute; ask the server (bf_contains).');
    }
  }

  _hashOf(value) {
    return xxh3(canonicalBytes(this._h.family, this._fields, value), this._seed);
  }

  /** The unsigned 64-bit hash this filter uses for the value. */
  hash(value) {
    this._requirePortable();
    if (this._h.family === FAMILY.none) {
      const { family, fields } = familyOf(value);
      return xxh3(canonicalBytes(family, fields, value), this._seed);
    }
    return this._hashOf(value);
  }

  /**
   * False if the value was definitely never added; true if it probably
   * was.  NULL (null, undefined) is never in a filter.
   */
  contains(value) {
    if (!this._portable) this._requirePortable();
    if (this._h.family === FAMILY.none || isNull(value)) return false;
    H.setBigUint64(0, this._hashOf(value), true);
    return this._test(H.getUint32(4, true), H.getUint32(0, true));
  }

  /** As contains, for a hash already computed (an unsigned or signed 64-bit BigInt). */
  containsHash(h) {
    if (this._h.family === FAMILY.none) return false;
    H.setBigUint64(0, u64(h), true);
    return this._test(H.getUint32(4, true), H.getUint32(0, true));
  }

  // the hash (hi, lo) against the bits; a growing filter or a union: against any layer (§9.2, §10.2)
  _test(hi, lo) {
    const layers = this._layers;
    if (layers === null) return testHash(this._value, this._h.nblocks, this._h.nhashes, hi, lo);
    for (let i = 0; i < layers.length; i++) {
      if (layers[i]._test(hi, lo)) return true;
    }
    return false;
  }

  /**
   * Add a value (the filter changes in place).  An empty filter takes the
   * value's family.  Returns true if a bit changed; adding NULL does nothing.
   */
  add(value) {
    if (this._layers) throw refuseGrowing(this._grow, 'add');
    this._requirePortable();
    if (isNull(value)) return false;
    if (this._h.family === FAMILY.none) {
      const { family, fields, detail } = familyOf(value);
      const h = xxh3(canonicalBytes(family, fields, value), this._seed);
      this._adopt(family, detail);
      return this._addHash(h);
    }
    return this._addHash(this._hashOf(value));
  }

  /** An empty filter takes the family of its first value. */
  _adopt(family, detail) {
    this._h.family = family;
    this._h.detail = detail;
    this._value[8] = family;
    new DataView(this._value.buffer, this._value.byteOffset + 12, 4).setUint32(0, detail, true);
    this._sync();
  }

  /** As add, for a hash already computed; the filter must have a family. */
  addHash(h) {
    if (this._layers) throw refuseGrowing(this._grow, 'addHash');
    if (this._h.family === FAMILY.none) {
      throw new BloomFilterError('the filter has no element family yet', SQLSTATE.INVALID_PARAMETER,
        'Add a value first, so that the filter knows how its values are hashed.');
    }
    return this._addHash(u64(h));
  }

  _addHash(h) {
    H.setBigUint64(0, h, true);
    const changed = setHash(this._value, this._h.nblocks, this._h.nhashes, H.getUint32(4, true), H.getUint32(0, true));
    if (changed) {
      if (this._h.inserted < MAX_INSERTED) this._h.inserted += 1n;
      new DataView(this._value.buffer, this._value.byteOffset + 32, 8).setBigUint64(0, this._h.inserted, true);
    }
    return changed;
  }

  /** Bitwise OR with a compatible filter, as bf_union: a new filter. */
  union(other) {
    return this._combine(other, false);
  }

  /** Bitwise AND with a compatible filter, as bf_intersect: a new filter. */
  intersect(other) {
    return this._combine(other, true);
  }

  _combine(other, intersect) {
    if (!(other instanceof BloomFilter)) throw new TypeError('expected a BloomFilter');
    for (const f of [this, other]) if (f._layers) throw refuseGrowing(f._grow, intersect ? 'intersect' : 'union');
    stats.checkCompatible(this._h, other._h);
    const value = new Uint8Array(this._value);
    const a = new Uint32Array(value.buffer, HEADER_BYTES);
    const b = other._words();
    if (intersect) for (let i = 0; i < a.length; i++) a[i] &= b[i];
    else for (let i = 0; i < a.length; i++) a[i] |= b[i];
    const h = { ...this._h };
    if (intersect && other._h.inserted < h.inserted) h.inserted = other._h.inserted;
    if (h.family === FAMILY.none && other._h.family !== FAMILY.none) {
      h.family = other._h.family;
      h.detail = other._h.detail;
      h.flags = other._h.flags;
    }
    const est = stats.estimateInserted(stats.popcount(a), h.nblocks, h.nhashes);
    if (h.family === FAMILY.none) h.inserted = 0n;
    else if (intersect) h.inserted = est < h.inserted ? est : h.inserted;
    else h.inserted = est;
    writeHeader(value, h);
    return new BloomFilter(value, h);
  }

  // the bits as 32-bit words (their order within a word does not matter here)
  _words() {
    if ((this._value.byteOffset & 3) === 0) {
      return new Uint32Array(this._value.buffer, this._value.byteOffset + HEADER_BYTES, this._h.nblocks * 16);
    }
    return new Uint32Array(new Uint8Array(this._value.subarray(HEADER_BYTES)).buffer);
  }

  /**
   * Same parameters and bits (the inserted counts aside), as the =
   * operator (§6.5, §9.5, §10.5): a filter never equals one of another form.
   */
  equals(other) {
    if (!(other instanceof BloomFilter) || other._value.length !== this._value.length ||
        other.layout !== this.layout) return false;
    const a = this._value;
    const b = other._value;
    // every byte but each layer's inserted (offsets 32-39 of the layer); equal
    // bytes before a layer's end mean the same layers in b
    let from = 0;
    for (const { offset } of this._grow ? this._grow.layers : [{ offset: 0 }]) {
      for (let i = from; i < offset + 32; i++) if (a[i] !== b[i]) return false;
      from = offset + 40;
    }
    for (let i = from; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** Number of bits set (in every layer). */
  bitsSet() {
    if (this._layers) return this._layers.reduce((n, l) => n + l.bitsSet(), 0);
    return stats.popcount(this._words());
  }

  /**
   * The fill and the estimates of §6.1-6.2; of a growing filter or a
   * union, summed over the layers, the rate that of any layer answering
   * (§9.5).
   */
  _fill() {
    if (this._layers === null) {
      const h = this._h;
      const { fpr, bitsSet } = stats.fillFpr(this._words(), h.nblocks, h.nhashes);
      return { fpr, bitsSet, cardinality: stats.cardinality(bitsSet, h.nblocks, h.nhashes) };
    }
    let fpr = 0;
    let bitsSet = 0;
    let cardinality = 0;
    for (const l of this._layers) {
      const f = l._fill();
      bitsSet += f.bitsSet;
      cardinality += f.cardinality;
      fpr = fpr + f.fpr - fpr * f.fpr;
    }
    return { fpr, bitsSet, cardinality };
  }

  /** The false-positive rate of the bits as they are (§6.2), as bf_fpr. */
  fpr() {
    return this._fill().fpr;
  }

  /** Estimated number of distinct values added (§6.1), as bf_cardinality. */
  cardinality() {
    return this._fill().cardinality;
  }

  /** True when the current rate exceeds the target (§6.3), as bf_saturated. */
  saturated() {
    return this.info().saturated;
  }

  /** Parameters, fill and estimates, as bf_info. */
  info() {
    const h = this._h;
    const { fpr, bitsSet, cardinality } = this._fill();
    const nbits = this.nbits;
    const capacity = this.capacity;
    const target = this.targetFpr;
    return {
      layout: this.layout,
      nbits,
      nhashes: this.nhashes,
      seed: h.seed,
      bytes: this._value.length,
      capacity: capacity === 0n ? null : capacity,
      targetFpr: target === 0 ? null : target,
      inserted: this.inserted,
      bitsSet,
      fillRatio: bitsSet / nbits,
      estimatedCardinality: cardinality,
      estimatedFpr: fpr,
      // a layered value is past its header's rate, even a union's 0 (§9.5, §10.5)
      saturated: target > 0 || this._layers ? fpr > target : bitsSet > nbits / 2,
      elementType: h.family === FAMILY.other ? `other(oid ${h.detail})` : familyText(h.family, h.detail),
      portable: this.portable,
    };
  }

  /** A copy of the value's bytes (what `::bytea` holds). */
  toBytes() {
    return new Uint8Array(this._value);
  }

  /** The text form, as the server prints it. */
  toText() {
    if (this._grow) return formatGrowingText(this._grow, this._value);
    return formatText(this._h, this._value.subarray(HEADER_BYTES));
  }

  toString() {
    if (this._layers) {
      return `BloomFilter(${this.family}, ${this.layout}, layers=${this._layers.length}, nbits=${this.nbits}, seed=${this.seed})`;
    }
    return `BloomFilter(${this.family}, nbits=${this.nbits}, nhashes=${this.nhashes}, seed=${this.seed})`;
  }
}

/**
 * A filter over `value` (owned by it), plain, growing or a union by its
 * magic, checked as the server reads bytes; `code` is the SQLSTATE of a bad value.
 */
function wrap(value, code = SQLSTATE.INVALID_BINARY) {
  if (isLayered(value)) return new BloomFilter(value, null, readGrowing(value, code));
  return new BloomFilter(value, readHeader(value, code));
}

module.exports = { BloomFilter, familyOf, toBytes, wrap };
