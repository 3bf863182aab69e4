'use strict';
// Keeps a local copy of a server filter current.  Every `interval` it asks
// a source for the changes since the last position (API contract §1:
// bf_index_changes / bf_tracked_changes, or a full fetch), applies them to
// a copy and swaps the new filter in with one assignment, so a reader sees
// either the old filter or the new one, never a mix.  A failed refresh
// keeps the last good copy and is retried at the next tick; a patch that
// does not apply makes the next refresh fetch everything.
//
// The contract for readers: a key committed on the server after the start
// of the last successful refresh may be answered "absent" by the local
// copy, for at most `interval` plus the duration of one refresh (longer
// only while refreshes fail; status().ageMs says how long).

const { BloomFilterError } = require('./errors');
const { BloomFilter, wrap } = require('./filter');
const { parsePatch, applyPatch, PatchError } = require('./patch');

const DEFAULT_INTERVAL_MS = 1000;

function asBytes(b, what) {
  if (b instanceof Uint8Array) return b;
  throw new PatchError(`The source returned no ${what} (a Uint8Array).`);
}

class Refresher {
  /**
   * @param source   { changes(since: string | null) => Promise<{ nextLsn, fullRefresh, patch } | { nextLsn, value }> }
   * @param options  { interval (ms, default 1000), staleAfter (ms, default 3 intervals),
   *                   onRefresh(info), onError(err), now() (ms clock, for tests) }
   */
  constructor(source, options = {}) {
    if (!source || typeof source.changes !== 'function') throw new TypeError('a source needs a changes(since) method');
    this._source = source;
    this._interval = options.interval === undefined ? DEFAULT_INTERVAL_MS : options.interval;
    if (!(this._interval > 0)) throw new RangeError('interval must be a positive number of milliseconds');
    this._staleAfter = options.staleAfter === undefined ? 3 * this._interval : options.staleAfter;
    this._onRefresh = options.onRefresh || null;
    this._onError = options.onError || null;
    this._now = options.now || Date.now;
    this._filter = null;
    this._lsn = null;
    this._needFull = true;
    this._inflight = null;
    this._timer = null;
    this._running = false;
    this._stats = {
      lastSuccessAt: null, lastError: null, lastErrorAt: null, consecutiveErrors: 0,
      refreshes: 0, fullRefreshes: 0, bytesReceived: 0, lastDurationMs: null,
    };
  }

  /** The current local copy (null before the first successful refresh). */
  get filter() {
    return this._filter;
  }

  /** contains() on the current copy; throws while there is none yet. */
  contains(value) {
    const f = this._filter;
    if (f === null) {
      throw new BloomFilterError('no local copy of the filter yet', '55000',
        'The first refresh has not succeeded; see status().lastError.');
    }
    return f.contains(value);
  }

  /**
   * Refresh now (the timer calls this too); concurrent calls share one
   * refresh.  Resolves to true on success, false on failure (the error is
   * in status().lastError).
   */
  refresh() {
    if (this._inflight === null) {
      this._inflight = this._refreshOnce().finally(() => { this._inflight = null; });
    }
    return this._inflight;
  }

  async _refreshOnce() {
    const started = this._now();
    const since = this._needFull || this._filter === null ? null : this._lsn;
    try {
      const r = await this._source.changes(since);
      let value;
      let full;
      let received;
      if (r && r.value !== undefined && r.value !== null) {
        value = asBytes(r.value, 'value');
        full = true;
        received = value.length;
      } else {
        const bytes = asBytes(r && r.patch, 'patch');
        const patch = parsePatch(bytes);
        if (patch.full !== Boolean(r.fullRefresh)) throw new PatchError('full_refresh disagrees with the patch\'s full flag.');
        if (!patch.full && since === null) throw new PatchError('The source sent a partial patch for a full fetch.');
        value = applyPatch(patch.full ? null : this._filter._value, patch);
        full = patch.full;
        received = bytes.length;
      }
      const filter = full ? BloomFilter.fromBytes(value) : wrap(value); // plain, growing or a union
      // the swap: one assignment, after everything has been checked
      this._filter = filter;
      this._lsn = r.nextLsn === undefined ? null : r.nextLsn;
      this._needFull = this._lsn === null;
      const s = this._stats;
      s.lastSuccessAt = started;
      s.consecutiveErrors = 0;
      s.refreshes++;
      if (full) s.fullRefreshes++;
      s.bytesReceived += received;
      s.lastDurationMs = this._now() - started;
      if (this._onRefresh) this._onRefresh({ full, bytes: received, lsn: this._lsn });
      return true;
    } catch (err) {
      const s = this._stats;
      s.lastError = err;
      s.lastErrorAt = this._now();
      s.consecutiveErrors++;
      // a bad patch or value: do not build on the local copy again
      if (err instanceof BloomFilterError) this._needFull = true;
      if (this._onError) this._onError(err);
      return false;
    }
  }

  /**
   * Start refreshing every interval.  Resolves after the first refresh, or
   * rejects with its error; either way the refresher goes on trying until
   * stop().  The timer does not keep the process alive.
   */
  start() {
    if (!this._running) {
      this._running = true;
      this._first = this._tick();
    }
    return this._first.then((ok) => {
      if (!ok && this._filter === null) throw this._stats.lastError;
      return this;
    });
  }

  async _tick() {
    this._timer = null;
    const t0 = this._now();
    const ok = await this.refresh();
    if (this._running) {
      const delay = Math.max(0, this._interval - (this._now() - t0));
      this._timer = setTimeout(() => { this._tick(); }, delay);
      if (typeof this._timer.unref === 'function') this._timer.unref();
    }
    return ok;
  }

  /** Stop the timer (a refresh in progress completes). */
  stop() {
    this._running = false;
    if (this._timer !== null) clearTimeout(this._timer);
    this._timer = null;
  }

  /**
   * How current the copy is: ageMs counts from the start of the last
   * successful refresh (null before the first); stale when ageMs exceeds
   * staleAfter or there is no copy.
   */
  status() {
    const s = this._stats;
    const ageMs = s.lastSuccessAt === null ? null : this._now() - s.lastSuccessAt;
    return {
      loaded: this._filter !== null,
      lsn: this._lsn,
      lastSuccessAt: s.lastSuccessAt === null ? null : new Date(s.lastSuccessAt),
      ageMs,
      stale: ageMs === null || ageMs > this._staleAfter,
      lastError: s.lastError,
      lastErrorAt: s.lastErrorAt === null ? null : new Date(s.lastErrorAt),
      consecutiveErrors: s.consecutiveErrors,
      refreshes: s.refreshes,
      fullRefreshes: s.fullRefreshes,
      bytesReceived: s.bytesReceived,
      lastDurationMs: s.lastDurationMs,
      running: this._running,
    };
  }
}

module.exports = { Refresher, DEFAULT_INTERVAL_MS };
