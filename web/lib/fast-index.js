// Browser, worker and bundler entry of `attention-explorer/fast`: only the output-only path, on
// its own small module (attention-fast.wasm, ~40 KB gzipped with this JS) for pages that want
// attention's numbers at scale and not the step-by-step trace.
import createFastModule from './attention-fast.js';
import { createFastEngine } from './fast.js';
import { linkRelaxed, relaxedKernels } from './relaxed.js';
import { browserUrl, fetchBytes, loadModule } from './load.js';

export { version } from './load.js';

/**
 * Loads the fast-only module: `{ attention(input), fastKernels(), heapStats(), version }`.
 * @param {{ wasmUrl?: string | URL, relaxedSimd?: boolean }} [options] where attention-fast.wasm is; relaxedSimd: false
 *   keeps the SIMD128 products where relaxed SIMD (fused multiply-add) is available
 * @type {typeof import('./fast-index.js').loadFastAttention}
 */
export async function loadFastAttention(options = {}) {
  const url = browserUrl(options.wasmUrl, new URL('./attention-fast.wasm', import.meta.url));
  // Relaxed SIMD where the engine has it, unless { relaxedSimd: false } asks for the SIMD128 products.
  const kernels = options.relaxedSimd === false ? null : await relaxedKernels();
  return createFastEngine(
    ...(await loadModule(createFastModule, () => fetchBytes(url), url.href, kernels ? linkRelaxed(kernels) : undefined)),
  );
}
