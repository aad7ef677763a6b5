// Node entry of `attention-explorer/fast` (see fast-index.js); reads attention-fast.wasm itself.
import createFastModule from './attention-fast.js';
import { createFastEngine } from './fast.js';
import { linkRelaxed, relaxedKernels } from './relaxed.js';
import { loadModule } from './load.js';
import { nodeBytes, nodeUrl, nodeWhere } from './load-node.js';

export { version } from './load.js';

/**
 * Loads the fast-only module: `{ attention(input), fastKernels(), heapStats(), version }`.
 * @param {{ wasmUrl?: string | URL, relaxedSimd?: boolean }} [options] a file path, file: URL or http(s): URL of
 *   attention-fast.wasm; relaxedSimd: false keeps the SIMD128 products where relaxed SIMD is available
 * @type {typeof import('./fast-index.js').loadFastAttention}
 */
export async function loadFastAttention(options = {}) {
  const url = nodeUrl(options.wasmUrl, new URL('./attention-fast.wasm', import.meta.url));
  // Relaxed SIMD where the engine has it, unless { relaxedSimd: false } asks for the SIMD128 products.
  const kernels = options.relaxedSimd === false ? null : await relaxedKernels();
  return createFastEngine(
    ...(await loadModule(createFastModule, () => nodeBytes(url), nodeWhere(url), kernels ? linkRelaxed(kernels) : undefined)),
  );
}
