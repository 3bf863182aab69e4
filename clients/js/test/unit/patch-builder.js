'use strict';
// Builds change sets ("BLMP" patches, API contract §1) for the tests, and a
// fake server that answers changes(since) from snapshots of a filter.

function makePatch({ full = false, total, runs = [], version = 1, flags, reserved7 = 0, reserved20 = 0, runReserved = 0, extra = 0 }) {
  const size = 24 + runs.reduce((n, [, d]) => n + 16 + d.length, 0) + extra;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set([0x42, 0x4c, 0x4d, 0x50]);
  dv.setUint16(4, version, true);
  out[6] = flags === undefined ? (full ? 1 : 0) : flags;
  out[7] = reserved7;
  dv.setBigUint64(8, BigInt(total), true);
  dv.setUint32(16, runs.length, true);
  dv.setUint32(20, reserved20, true);
  let p = 24;
  for (const [offset, data] of runs) {
    dv.setBigUint64(p, BigInt(offset), true);
    dv.setUint32(p + 8, data.length, true);
    dv.setUint32(p + 12, runReserved, true);
    out.set(data, p + 16);
    p += 16 + data.length;
  }
  return out;
}

// Changed 64-byte pages between two values, merged, as the server sends
// whole changed index pages (here: blocks) and always the header.
function diffRuns(from, to) {
  const runs = [];
  for (let p = 0; p < to.length; p += 64) {
    let same = true;
    for (let i = p; i < p + 64 && same; i++) same = from[i] === to[i];
    if (same && p !== 0) continue;
    const last = runs[runs.length - 1];
    if (last && last[0] + last[1] === p) last[1] += 64;
    else runs.push([p, 64]);
  }
  return runs.map(([o, n]) => [o, to.subarray(o, o + n)]);
}

// A server filter with positions: every change() snapshot gets a new LSN.
class FakeServer {
  constructor(filter) {
    this.filter = filter;
    this.lsn = 1;
    this.snapshots = new Map();
    this.fail = null; // an Error to throw instead of answering
    this.calls = [];
  }

  async changes(since) {
    this.calls.push(since);
    if (this.fail) throw this.fail;
    const value = this.filter.toBytes();
    const lsn = `0/${(this.lsn++).toString(16).toUpperCase()}`;
    this.snapshots.set(lsn, value);
    const old = since === null ? undefined : this.snapshots.get(since);
    if (old === undefined || old.length !== value.length) {
      return { nextLsn: lsn, fullRefresh: true, patch: makePatch({ full: true, total: value.length, runs: [[0, value]] }) };
    }
    return { nextLsn: lsn, fullRefresh: false, patch: makePatch({ total: value.length, runs: diffRuns(old, value) }) };
  }
}

module.exports = { makePatch, diffRuns, FakeServer };
