// Compiled (never run) by `npm run typecheck`: uses every declaration the
// way the README does, so that index.d.ts stays in step with the code.
import {
  BloomFilter, BloomWindow, micros, typed, bfHash, setXxh3, BloomFilterError, NonPortableError, PatchError,
  parsePatch, applyPatch, Refresher, bloomfilterOid, registerBloomfilterType, registerBloomwindowType,
  trackedSource, indexSource, version, ChangeSource, Queryable, FilterInfo, LayerInfo,
} from '../../index';
import { hashWasmXxh3 } from '../../hash-wasm';

declare const bytes: Uint8Array;
declare const pool: Queryable;
declare function log(...args: unknown[]): void;

async function main(): Promise<void> {
  const f: BloomFilter = BloomFilter.fromBytes(bytes);
  const g = BloomFilter.fromText(f.toText());
  const e = BloomFilter.empty({ nbits: 1024, nhashes: 7, seed: 0n });
  const ok: boolean = f.contains(42) || f.contains(42n) || f.contains('x') ||
    f.contains([1n, 'attr']) || f.contains(typed('numeric', '1.50')) || f.contains(null) ||
    f.contains(new Date()) || f.contains(new Uint8Array(3)) || f.contains({ toString: () => '1.5' });
  const h: bigint = f.hash(1) + bfHash(typed('int4', 1), 5n) + bfHash('x');
  f.containsHash(h);
  e.add([typed('text', null), 1]);
  e.addHash(h);
  const u: BloomFilter = f.union(g).intersect(g);
  const info: FilterInfo = u.info();
  const n: number = info.bitsSet + u.fpr() + u.cardinality() + f.nbits + f.nblocks + (f.nhashes ?? 0);
  // a growing filter (bf_create_growing) is read by the same entry points
  const layers: LayerInfo[] = f.layers;
  const grown: boolean = f.isGrowing && layers.length > 1 && f.growth !== null && (f.ratio ?? 0) < 1 &&
    layers[0].nhashes + layers[0].nbits > 0 && layers[0].capacity >= 0n && layers[0].targetFpr < 1 && layers[0].inserted >= 0n;
  const layout: 'blocked' | 'growing' | 'union' = info.layout;
  // so is a union (bf_union_layered, a distributed table's filter)
  const united: boolean = f.isUnion && f.layout === layout;
  log(grown, layout, united);
  const s: bigint = f.seed + f.inserted + f.capacity;
  const fam: string = f.family;
  const sat: boolean = u.saturated() && u.equals(f) && f.portable && ok;
  const copy: Uint8Array = applyPatch(f.toBytes(), parsePatch(bytes));
  const src: ChangeSource = trackedSource(pool, 'users', 'id');
  indexSource(pool, 'users_bf_idx');
  const r = new Refresher(src, { interval: 500, onError: (err) => log(err) });
  await r.start();
  const st = r.status();
  const age: number | null = st.ageMs;
  r.contains(1);
  r.stop();
  const oid: number = await bloomfilterOid(pool);
  await registerBloomfilterType(pool, { setTypeParser() {} });
  await registerBloomwindowType(pool, { setTypeParser() {} });
  const x = await hashWasmXxh3();
  await x.prepare(5n);
  setXxh3(x);
  try { f.contains(1); } catch (err) {
    if (err instanceof NonPortableError || err instanceof PatchError || err instanceof BloomFilterError) {
      const code: string = err.code;
      log(code);
    }
  }
  log(n, s, fam, sat, copy, age, oid, version);
}
main();

// sliding windows
const win: BloomWindow = BloomWindow.fromText('bloomwindow:1 ...');
const seenNow: boolean = win.contains(typed('int8', 42n), new Date());
const seenAt: boolean = win.contains('x', micros(new Date()) - 1000n);
const newest: bigint | null = win.info().newestSlice;
const starts: bigint[] = win.slices().map((s) => s.startMicros);
void seenNow; void seenAt; void newest; void starts;
