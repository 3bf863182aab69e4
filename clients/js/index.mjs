// ES module entry: the same exports as index.js.
import cjs from './index.js';

export const {
  BloomFilter, BloomWindow, micros, typed, Typed, bfHash, setXxh3, BloomFilterError, NonPortableError,
  PatchError, parsePatch, applyPatch, Refresher, bloomfilterOid, registerBloomfilterType, registerBloomwindowType,
  trackedSource, indexSource, version,
} = cjs;
export default cjs;
