// Types of `attention-explorer/fast`: the output-only path on its own small module.
import type { FastInput, FastResult, HeapStats, LoadOptions } from './index.js';

export type { FastInput, FastResult, HeapStats, LoadOptions };

export interface FastEngine {
  readonly version: string;
  /** The same output-only attention as Engine.attention (docs/performance.md). */
  attention(input: FastInput): FastResult;
  /**
   * Which kernels `attention` runs: "wasm-relaxed-simd" (the products with fused multiply-add,
   * where the engine has relaxed SIMD), "wasm-simd128" or "eigen".
   */
  fastKernels(): 'wasm-relaxed-simd' | 'wasm-simd128' | 'eigen';
  /** Diagnostic for leak checks; not part of the computation API. */
  heapStats(): HeapStats;
}

export interface FastLoadOptions extends LoadOptions {
  /**
   * Use relaxed SIMD's fused multiply-add where the engine validates it (default true); false
   * keeps the SIMD128 products everywhere. The two agree to float32 / float64 rounding.
   */
  relaxedSimd?: boolean;
}

/** Loads attention-fast.wasm (wasmUrl: where it is; in Node also a file path). */
export function loadFastAttention(options?: FastLoadOptions): Promise<FastEngine>;
export const version: string;
