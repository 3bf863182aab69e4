'use strict';
// BloomWindow beyond the conformance file: adds replayed against the
// server's bytes, the time boundaries of FORMAT.md §7.3, times before 2000.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { BloomWindow, micros, typed } = require('../..');

const FILE = path.join(__dirname, '../../../../test/conformance/conformance.json');
const windows = Object.fromEntries(JSON.parse(fs.readFileSync(FILE, 'utf8')).windows.map((w) => [w.name, w]));
const bytesOf = (name) => new Uint8Array(Buffer.from(windows[name].bytes, 'base64'));
const T0 = micros(new Date(Date.UTC(2026, 0, 5))); // generate.py's T0
const MIN = 60000000n;
const HOUR = 60n * MIN;

// the window of the same parameters before anything was added
function emptied(raw) {
  const b = raw.slice();
  const dv = new DataView(b.buffer);
  const n = dv.getUint16(6, true);
  dv.setBigInt64(16, -(1n << 63n), true);
  dv.setBigUint64(24, 0n, true);
  const size = (b.length - 64) / (n + 1);
  for (let j = 0; j <= n; j++) {
    const o = 64 + j * size;
    b[o + 8] = 0;
    b[o + 9] = 0;
    dv.setUint32(o + 12, 0, true);
    dv.setBigUint64(o + 32, 0n, true);
    b.fill(0, o + 64, o + size);
  }
  return BloomWindow.fromBytes(b);
}

test('adds at the server\'s times give the server\'s bytes', () => {
  let raw = bytesOf('4 hours in 4 slices, int8 keys, spread over the window');
  let w = emptied(raw);
  for (let k = 1n; k <= 40n; k++) w.add(typed('int8', k), T0 + 7n * k * MIN);
  assert.deepStrictEqual(w.toBytes(), raw);

  raw = bytesOf('7 days in 7 slices, text keys, an idle gap and an ignored add');
  w = emptied(raw);
  for (let k = 1n; k <= 20n; k++) w.add(`seen-${k}`, T0 + 5n * k * HOUR);
  w.add('late', T0 + 100n * 24n * HOUR);
  assert.strictEqual(w.add('too-old', T0 + 24n * HOUR), false);
  assert.strictEqual(w.info().ignored, 1n);
  assert.deepStrictEqual(w.toBytes(), raw);
});

test('kept for the window, gone a slice after', () => {
  // W = 4 h in 4 slices of 1 h
  const w = emptied(bytesOf('4 hours in 4 slices, int8 keys, spread over the window'));
  const t = T0 + 25n * MIN;
  const key = typed('int8', 123456789n);
  w.add(key, t);
  for (const dt of [0n, 1n, HOUR, 4n * HOUR - 1n]) assert.ok(w.contains(key, t + dt), `t + ${dt}`);
  for (const dt of [5n * HOUR, 720n * HOUR, -HOUR]) assert.ok(!w.contains(key, t + dt), `t + ${dt}`);
  // a Date is the same instant, at millisecond precision
  assert.ok(w.contains(key, new Date(Date.UTC(2026, 0, 5, 0, 25))));
  assert.ok(!w.contains(key, new Date(Date.UTC(2026, 0, 5, 5, 25))));
});

test('times before 2000 use floor division', () => {
  const w = emptied(bytesOf('1 minute in 1 slice, times before 2000'));
  w.add(7, -1n);
  assert.strictEqual(w.info().newestSlice, -1n);
  for (const [at, want] of [[-MIN, true], [-1n, true], [MIN - 1n, true], [MIN, false]]) {
    assert.strictEqual(w.contains(7, at), want, `at ${at}`);
  }
  assert.deepStrictEqual(w.slices().map((s) => s.startMicros), [-2n * MIN, -MIN]);
  assert.strictEqual(micros(new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999))), -1000n);
});

test('times and text', () => {
  const e = windows['empty window'];
  const w = BloomWindow.fromText(e.text);
  assert.strictEqual(w.contains(1, new Date()), false);
  assert.throws(() => w.contains(1, 1.5), TypeError);
  assert.throws(() => w.contains(1, '2026-01-05'), TypeError);
  assert.throws(() => BloomWindow.fromText(e.text.replace('ignored=0', 'ignored=00')), (err) => err.code === '22P02');
  assert.throws(() => BloomWindow.fromText(e.text.replace('bloomwindow:1', 'bloomwindow:2')), (err) => err.code === '22P02');
});
