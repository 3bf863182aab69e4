// Type declarations of pg-bloomfilter (written by hand; checked by
// `npm run typecheck` against test/types/usage.ts).

/** XXH3-64 of the bytes with an unsigned 64-bit seed; returns the unsigned hash. */
export type Xxh3Function = (bytes: Uint8Array, seed: bigint) => bigint;

/** Element families of docs/FORMAT.md §3. */
export type FamilyName =
  | 'none' | 'integer' | 'float' | 'numeric' | 'text' | 'bytea' | 'uuid' | 'boolean'
  | 'date' | 'timestamp' | 'timestamptz' | 'enum' | 'record' | 'other';

/** Something with a decimal toString(), such as a decimal.js or big.js value. */
export interface DecimalLike { toString(): string }

/**
 * A key as JavaScript holds it.  A string is read in the filter's family
 * (as PostgreSQL prints values of that family); numbers, BigInts, booleans,
 * byte arrays and Dates in the families they belong to; an array is a
 * record (composite key), null an SQL NULL.
 */
export type KeyValue =
  | string | number | bigint | boolean | Uint8Array | ArrayBuffer | Date | DecimalLike
  | Typed | null | undefined | ReadonlyArray<KeyValue>;

/** A value with an explicit SQL type or family (see typed()). */
export declare class Typed {
  private constructor();
  readonly family: number;
  readonly value: KeyValue;
  readonly type: string;
}

/**
 * Pin a value's SQL type ('int4', 'float4', 'numeric', 'bpchar', 'uuid',
 * 'timestamptz', ...) or family ('integer', 'enum', ...).
 */
export declare function typed(type: string, value: KeyValue): Typed;

/** bf_hash(value, seed): the signed 64-bit hash the server computes. */
export declare function bfHash(value: KeyValue, seed?: bigint | number): bigint;

/** Replace the XXH3 implementation (e.g. by the hash-wasm adapter in a browser). */
export declare function setXxh3(fn: Xxh3Function): void;

/** An error with the SQLSTATE the server reports for the same mistake. */
export declare class BloomFilterError extends Error {
  readonly code: string;
  readonly detail?: string;
}

/** A filter of a type whose hashes only PostgreSQL can compute (family other). */
export declare class NonPortableError extends BloomFilterError {}

/** A change set that cannot be applied; fetch the whole value. */
export declare class PatchError extends BloomFilterError {}

/** bf_info, in camelCase.  Of a growing filter or a union: sums over its layers (FORMAT.md §9.5, §10.5). */
export interface FilterInfo {
  layout: FilterLayout;
  nbits: number;
  /** null for a growing filter or a union, whose layers differ. */
  nhashes: number | null;
  seed: bigint;
  bytes: number;
  capacity: bigint | null;
  targetFpr: number | null;
  inserted: bigint;
  bitsSet: number;
  fillRatio: number;
  estimatedCardinality: number;
  estimatedFpr: number;
  saturated: boolean;
  elementType: string;
  portable: boolean;
}

/** The form of a bloomfilter value, as bf_info's layout. */
export type FilterLayout = 'blocked' | 'growing' | 'union';

/** One layer of a filter (bf_layers): a plain filter is one layer. */
export interface LayerInfo {
  nbits: number;
  nhashes: number;
  /** 0n: sized explicitly. */
  capacity: bigint;
  /** 0: sized explicitly. */
  targetFpr: number;
  inserted: bigint;
}

/**
 * A bloomfilter value: plain (docs/FORMAT.md §1), growing (§9, made by
 * bf_create_growing) or a union (§10, bf_union_layered, the filter of a
 * distributed table), read by the same entry points.  A growing filter or a
 * union is tested, compared and inspected here; add, addHash, union and
 * intersect refuse it (BloomFilterError, SQLSTATE 0A000): a growing filter
 * is added to on the server, and a union is read-only.
 */
export declare class BloomFilter {
  private constructor();
  /** Parse `filter::bytea` (or a binary result); the bytes are copied. */
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView): BloomFilter;
  /** Parse the text form `filter::text`. */
  static fromText(text: string): BloomFilter;
  /** fromText for a string, else fromBytes. */
  static from(input: string | Uint8Array | ArrayBuffer | ArrayBufferView): BloomFilter;
  /** A new empty filter, as bf_create_sized makes it. */
  static empty(options: {
    nbits: number; nhashes: number; seed?: bigint | number;
    capacity?: bigint | number; fpr?: number;
  }): BloomFilter;

  /** 'integer', 'record(integer,text)', 'other', 'none', ... */
  readonly family: string;
  readonly familyId: number;
  /** Field family names of a record filter, else null. */
  readonly fields: FamilyName[] | null;
  /** null for a growing filter or a union, whose layers differ (see layers). */
  readonly nhashes: number | null;
  /** Of every layer, for a growing filter or a union. */
  readonly nblocks: number;
  readonly nbits: number;
  readonly seed: bigint;
  /** Of a growing filter or a union: of its layers (so far). */
  readonly capacity: bigint;
  /** Of a growing filter: the whole filter's target; of a union: its header's bound. */
  readonly targetFpr: number;
  /** Of a growing filter or a union: summed over its layers. */
  readonly inserted: bigint;
  readonly portable: boolean;
  readonly byteLength: number;
  /** True for a growing filter (bf_create_growing). */
  readonly isGrowing: boolean;
  /** True for a union (bf_union_layered, a distributed table's filter): read-only. */
  readonly isUnion: boolean;
  /** The form, as bf_info's layout. */
  readonly layout: FilterLayout;
  /** A growing filter's growth factor; null for a plain filter or a union. */
  readonly growth: number | null;
  /** A growing filter's tightening ratio; null for a plain filter or a union. */
  readonly ratio: number | null;
  /** Each layer's parameters, as bf_layers (one for a plain filter). */
  readonly layers: LayerInfo[];

  /** False if the value was definitely never added; true if it probably was. */
  contains(value: KeyValue): boolean;
  /** contains() for a hash computed already (signed or unsigned 64-bit). */
  containsHash(hash: bigint): boolean;
  /** The unsigned 64-bit hash of the value in this filter. */
  hash(value: KeyValue): bigint;
  /** Add a value in place; true if a bit changed.  Refused for a growing filter or a union. */
  add(value: KeyValue): boolean;
  addHash(hash: bigint): boolean;
  /** bf_union: a new filter.  Refused for growing filters and unions. */
  union(other: BloomFilter): BloomFilter;
  /** bf_intersect: a new filter. */
  intersect(other: BloomFilter): BloomFilter;
  /** The = operator: same parameters and bits (a filter never equals one of another form). */
  equals(other: BloomFilter): boolean;
  bitsSet(): number;
  /** bf_fpr: the false-positive rate of the bits as they are. */
  fpr(): number;
  /** bf_cardinality. */
  cardinality(): number;
  /** bf_saturated. */
  saturated(): boolean;
  info(): FilterInfo;
  /** The value's bytes (a copy). */
  toBytes(): Uint8Array;
  /** The text form. */
  toText(): string;
}

/** A time: a Date (millisecond precision), or microseconds since 2000-01-01 UTC (exact). */
export type WindowTime = Date | bigint | number;

/** Microseconds since 2000-01-01 00:00:00 UTC of a time. */
export declare function micros(at: WindowTime): bigint;

export interface WindowInfo {
  slices: number;
  sliceMicros: bigint;
  windowMicros: bigint;
  capacityPerWindow: bigint;
  targetFpr: number;
  /** Index of the newest slice stored; null while nothing was added. */
  newestSlice: bigint | null;
  ignored: bigint;
  nbitsPerSlice: number;
  nhashes: number;
  seed: bigint;
  family: string;
  byteLength: number;
}

export interface WindowSlice {
  startMicros: bigint;
  endMicros: bigint;
  /** The first time at which no lookup consults the slice. */
  expiresMicros: bigint;
  inserted: bigint;
  filter: BloomFilter;
}

/** A sliding-window filter (`bloomwindow`, docs/FORMAT.md §7). */
export declare class BloomWindow {
  private constructor();
  /** Parse `window::bytea` (or a binary result); the bytes are copied. */
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView): BloomWindow;
  /** Parse the text form `window::text`. */
  static fromText(text: string): BloomWindow;
  static from(input: string | Uint8Array | ArrayBuffer | ArrayBufferView): BloomWindow;
  /** False if the value was definitely not added in the window that ends at `at`. */
  contains(value: KeyValue, at: WindowTime): boolean;
  /** Add a value at `at` (as bf_window_add); true if a bit changed. */
  add(value: KeyValue, at: WindowTime): boolean;
  info(): WindowInfo;
  /** The slices stored, oldest first. */
  slices(): WindowSlice[];
  toBytes(): Uint8Array;
  toText(): string;
}

/** A decoded change set (API contract §1). */
export interface Patch {
  full: boolean;
  total: number;
  runs: Array<{ offset: number; data: Uint8Array }>;
}

export declare function parsePatch(bytes: Uint8Array): Patch;
/** The value after the patch: a new array; the current one is not changed. */
export declare function applyPatch(current: Uint8Array | null, patch: Uint8Array | Patch): Uint8Array;

/** What a source of changes returns: a patch (contract §1), or the whole value. */
export type Changes =
  | { nextLsn: string | null; fullRefresh: boolean; patch: Uint8Array }
  | { nextLsn: string | null; fullRefresh?: true; value: Uint8Array };

export interface ChangeSource {
  /** Changes since the position `since` (null: everything). */
  changes(since: string | null): Promise<Changes>;
}

export interface RefresherOptions {
  /** Milliseconds between refreshes; default 1000. */
  interval?: number;
  /** Age in ms after which status().stale is true; default 3 intervals. */
  staleAfter?: number;
  onRefresh?: (info: { full: boolean; bytes: number; lsn: string | null }) => void;
  onError?: (err: unknown) => void;
  /** Clock in ms (for tests); default Date.now. */
  now?: () => number;
}

export interface RefresherStatus {
  loaded: boolean;
  lsn: string | null;
  lastSuccessAt: Date | null;
  /** ms since the start of the last successful refresh; null before the first. */
  ageMs: number | null;
  stale: boolean;
  lastError: unknown;
  lastErrorAt: Date | null;
  consecutiveErrors: number;
  refreshes: number;
  fullRefreshes: number;
  bytesReceived: number;
  lastDurationMs: number | null;
  running: boolean;
}

export declare class Refresher {
  constructor(source: ChangeSource, options?: RefresherOptions);
  /** The current local copy; null before the first successful refresh. */
  readonly filter: BloomFilter | null;
  contains(value: KeyValue): boolean;
  /** Refresh now; resolves to false on failure (see status().lastError). */
  refresh(): Promise<boolean>;
  /** Start the timer; resolves after the first refresh or rejects with its error. */
  start(): Promise<this>;
  stop(): void;
  status(): RefresherStatus;
}

/** What node-postgres's Pool and Client have in common, as used here. */
export interface Queryable {
  query(config: { text: string; values?: unknown[]; binary?: boolean } | string): Promise<{ rows: any[] }>;
}

/** What pg.types and a TypeOverrides have in common. */
export interface TypeRegistry {
  setTypeParser(oid: number, format: 'text' | 'binary', parse: (value: any) => any): void;
}

/** The OID of the bloomfilter type in the connected database. */
export declare function bloomfilterOid(q: Queryable): Promise<number>;
/** Parse bloomfilter columns into BloomFilter objects (text and binary results). */
export declare function registerBloomfilterType(q: Queryable, types?: TypeRegistry): Promise<number>;
/** As registerBloomfilterType, for bloomwindow columns (BloomWindow objects). */
export declare function registerBloomwindowType(q: Queryable, types?: TypeRegistry): Promise<number>;
/** Changes of a column tracked with bf_track. */
export declare function trackedSource(q: Queryable, table: string, column: string): ChangeSource;
/** Changes of a bloomfilter index. */
export declare function indexSource(q: Queryable, index: string): ChangeSource;

export declare const version: string;
