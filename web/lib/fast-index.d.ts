// Types of `attention-explorer/fast`: the output-only path on its own small module.
import type { FastInput, FastResult, HeapStats, LoadOptions } from './index.js';

export type { FastInput, FastResult, HeapStats, LoadOptions };

export interface FastEngine {
  readonly version: string;
  /** The same output-only attention as Engine.attention (docs/performance.md). */
  attention(input: FastInput): FastResult;
  /** Which kernels `attention` runs: "wasm-simd128" or "eigen". */
  fastKernels(): 'wasm-simd128' | 'eigen';
  /** Diagnostic for leak checks; not part of the computation API. */
  heapStats(): HeapStats;
}

/** Loads attention-fast.wasm (wasmUrl: where it is; in Node also a file path). */
export function loadFastAttention(options?: LoadOptions): Promise<FastEngine>;
export const version: string;
