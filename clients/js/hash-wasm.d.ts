import type { Xxh3Function } from './index';

/** XXH3-64 implemented by hash-wasm (WebAssembly), with the given seeds prepared (default: 0). */
export declare function hashWasmXxh3(options?: { seeds?: Array<bigint | number> }):
  Promise<Xxh3Function & { prepare(seed: bigint | number): Promise<void> }>;
