'use strict';
// Replays a tape of test/stress.py (BF_STRESS_TAPE; test/stress_replay.sh
// sets it): every change set its reader got from bf_tracked_changes while
// writers and online rebuilds ran, through a Refresher, then looks every
// key the table held at the end up in the copy and in the table's
// bf_tracked_filter: none may be missing.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { BloomFilter, Refresher } = require('../../index');

test('stress tape: no key missing from bf_tracked_filter or the change-set copy', { skip: !process.env.BF_STRESS_TAPE }, async (t) => {
  const tape = JSON.parse(fs.readFileSync(process.env.BF_STRESS_TAPE, 'utf8'));
  for (const [name, f] of Object.entries(tape.filters)) {
    let i = 0;
    const source = {
      async changes(since) {
        const c = f.changes[i];
        if (c === undefined) throw new Error('tape ended');
        assert.strictEqual(since, c.since, `${name}: change set ${i}: asked since ${since}, recorded ${c.since}`);
        i++;
        return { nextLsn: c.next, fullRefresh: c.full, patch: Uint8Array.from(Buffer.from(c.patch, 'hex')) };
      },
    };
    // a change set that did not fit the recorded reader's copy fails this
    // refresh too, and the next one fetches the whole value, as it did
    const r = new Refresher(source);
    while (i < f.changes.length) {
      const fits = f.changes[i].fits;
      const ok = await r.refresh();
      assert.strictEqual(ok, fits, `${name}: change set ${i - 1}: ${r.status().lastError}`);
    }
    const whole = BloomFilter.fromBytes(Uint8Array.from(Buffer.from(f.whole, 'hex')));
    const missing = f.keys.filter((k) => !r.contains(k)).length;
    const missingWhole = f.keys.filter((k) => !whole.contains(k)).length;
    t.diagnostic(`seed ${tape.seed}, ${name}: ${f.keys.length} keys; missing from bf_tracked_filter ${missingWhole}, `
      + `from the copy of ${f.changes.length} change sets ${missing}`);
    assert.strictEqual(missingWhole, 0, `${name}: ${missingWhole} of ${f.keys.length} keys missing from bf_tracked_filter`);
    assert.strictEqual(missing, 0, `${name}: ${missing} of ${f.keys.length} keys missing from the copy`);
  }
});
