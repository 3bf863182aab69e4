'use strict';
// The package's surface: CommonJS and ES module entries export the same
// names, index.d.ts declares each of them, and (when TypeScript is
// installed) the declarations compile against test/types/usage.ts.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '../..');
const cjs = require(root);

test('ESM and CommonJS export the same names', async () => {
  const esm = await import(path.join(root, 'index.mjs'));
  const names = Object.keys(esm).filter((n) => n !== 'default').sort();
  assert.deepStrictEqual(names, Object.keys(cjs).sort());
  assert.strictEqual(esm.BloomFilter, cjs.BloomFilter);
});

test('index.d.ts declares every export', () => {
  const dts = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8');
  for (const name of Object.keys(cjs)) {
    assert.match(dts, new RegExp(`export declare (function|class|const) ${name}\\b`), name);
  }
});

test('the version is the package\'s', () => {
  assert.strictEqual(cjs.version, require(path.join(root, 'package.json')).version);
});

test('the declarations type-check', { skip: !fs.existsSync(path.join(root, 'node_modules/typescript')) && 'typescript not installed' }, () => {
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'test/types')], { stdio: 'pipe' });
});
