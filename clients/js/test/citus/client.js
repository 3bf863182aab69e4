'use strict';
// A Refresher of one tracked column driven over stdin, for
// test/lib/citus_clients.sh (the clients against a table distributed by
// Citus, test/suites/92-citus.sh).  One process keeps one Refresher, so
// the refreshes after the first are incremental as an application's are.
//
//   node test/citus/client.js TABLE COLUMN     (connection: the PG* environment)
//
// Commands, one a line on stdin; one answer a line on stdout:
//   check KEYFILE   refresh, then test every key of KEYFILE (one a line;
//                   a BigInt for a filter of integers, else text); answers
//                     ok MODE NKEYS BYTES MD5 LAYOUT LSN
//                   MODE full or patch (how the refresh reached the copy),
//                   BYTES received by it, MD5 of the copy's bytes, LAYOUT
//                   blocked, growing or union, LSN the position it got; or
//                     fail REASON
//   quit            (or end of input) exit
// Not a test file of the suite (node --test test/unit/*.test.js).

const crypto = require('node:crypto');
const fs = require('node:fs');
const readline = require('node:readline');
const pg = require('pg');
const { Refresher, trackedSource } = require('../..');

const oneLine = (s) => String(s).replace(/\n/g, ' ');

let last = null; // the Refresher's onRefresh information of the last refresh

async function check(ref, keyfile) {
  last = null;
  const before = ref.status();
  if (!(await ref.refresh())) {
    const e = ref.status().lastError;
    return `fail refresh: ${oneLine(e && e.message)}${e && e.detail ? `: ${oneLine(e.detail)}` : ''}`;
  }
  const st = ref.status();
  if (last === null) return 'fail the refresh reported nothing (onRefresh not called)';
  const mode = last.full ? 'full' : 'patch';
  if (last.full !== (st.fullRefreshes > before.fullRefreshes)) return 'fail onRefresh and status() disagree';
  const f = ref.filter;
  const integer = f.family === 'integer';
  const text = fs.readFileSync(keyfile, 'utf8');
  const keys = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  let n = 0;
  for (const key of keys) {
    let v = key;
    if (integer) {
      try {
        v = BigInt(key);
      } catch (e) {
        return `fail key ${JSON.stringify(key)} is not an integer (the filter's family)`;
      }
    }
    if (!f.contains(v)) return `fail key ${JSON.stringify(key)} reported absent (${n} keys tested before it)`;
    n++;
  }
  const md5 = crypto.createHash('md5').update(f.toBytes()).digest('hex');
  return `ok ${mode} ${n} ${st.bytesReceived - before.bytesReceived} ${md5} ${f.layout} ${st.lsn === null ? '-' : st.lsn}`;
}

async function main() {
  const [table, column] = process.argv.slice(2);
  if (!table || !column) {
    process.stderr.write('usage: node test/citus/client.js TABLE COLUMN\n');
    process.exit(2);
  }
  const client = new pg.Client();
  await client.connect();
  const ref = new Refresher(trackedSource(client, table, column), { onRefresh: (info) => { last = info; } });
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const sp = line.indexOf(' ');
    const cmd = sp < 0 ? line : line.slice(0, sp);
    const arg = sp < 0 ? '' : line.slice(sp + 1);
    if (cmd === 'quit') break;
    if (cmd === '') continue;
    let answer;
    try {
      answer = cmd === 'check' ? await check(ref, arg) : `fail unknown command ${JSON.stringify(cmd)}`;
    } catch (e) {
      answer = `fail ${oneLine(e && e.stack ? e.stack : e)}`;
    }
    process.stdout.write(`${answer}\n`);
  }
  rl.close();
  await client.end();
}

main().catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
