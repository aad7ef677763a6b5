// Browser, worker and bundler entry of `attention-explorer/fast`: only the output-only path, on
// its own small module (attention-fast.wasm, ~40 KB gzipped with this JS) for pages that want
// attention's numbers at scale and not the step-by-step trace.
import createFastModule from './attention-fast.js';
import { createFastEngine } from './fast.js';
import { browserUrl, fetchBytes, loadModule } from './load.js';

export { version } from './load.js';

/**
 * Loads the fast-only module: `{ attention(input), fastKernels(), heapStats(), version }`.
 * @param {{ wasmUrl?: string | URL }} [options] where attention-fast.wasm is
 */
export async function loadFastAttention(options = {}) {
  const url = browserUrl(options.wasmUrl, new URL('./attention-fast.wasm', import.meta.url));
  return createFastEngine(...(await loadModule(createFastModule, () => fetchBytes(url), url.href)));
}
