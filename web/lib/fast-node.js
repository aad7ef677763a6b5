// Node entry of `attention-explorer/fast` (see fast-index.js); reads attention-fast.wasm itself.
import createFastModule from './attention-fast.js';
import { createFastEngine } from './fast.js';
import { loadModule } from './load.js';
import { nodeBytes, nodeUrl, nodeWhere } from './load-node.js';

export { version } from './load.js';

/**
 * Loads the fast-only module: `{ attention(input), fastKernels(), heapStats(), version }`.
 * @param {{ wasmUrl?: string | URL }} [options] a file path, file: URL or http(s): URL of attention-fast.wasm
 */
export async function loadFastAttention(options = {}) {
  const url = nodeUrl(options.wasmUrl, new URL('./attention-fast.wasm', import.meta.url));
  return createFastEngine(...(await loadModule(createFastModule, () => nodeBytes(url), nodeWhere(url))));
}
