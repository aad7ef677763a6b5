// Browser, worker and bundler entry of `attention-explorer` (package.json "default" condition).
// The .wasm is found next to this file with new URL(..., import.meta.url), which bundlers such as
// Vite follow and rewrite; `wasmUrl` overrides it (`walkthroughsUrl` the walkthroughs module's).
import createAttentionModule from './attention.js';
import { instantiate } from './engine.js';
import { browserUrl, fetchBytes } from './load.js';

export { createEngine, version } from './engine.js';
export { connectModelWorker } from './model-client.js';
export { stringify, toJSON } from './json.js';
export { findPreset, numpyLine, numpyLines, presetProblem, presets } from './presets.js';
export { narrate, narrateDecodeStep, narrateGradientStep, narrateOnlineSoftmax, narrateStep, narrateTile, weightSums } from './narrate.js';
export { dependents, precedents } from './lineage.js';
export {
  cellLatex,
  cellText,
  decodeCsv,
  decodeLatex,
  fillExplanation,
  heatColours,
  heatmapSvg,
  matrixCsv,
  matrixLatex,
  numpyScript,
  parseCsv,
  problemContext,
  positionsAxisLabels,
  pytorchScript,
  solutionLatex,
  stepCaption,
  stepCsv,
  stepFileName,
  stepLatex,
  texNumber,
  tilesCsv,
  tilesLatex,
  traceCsv,
  traceJson,
} from './export.js';
export { formatNumber, matrixToText } from './format.js';
export { colourLegend, colourLut, colourRange, colourScale } from './colours.js';

/**
 * Loads the WebAssembly core and returns the engine (run, runAll, explain, parseMatrix, random,
 * attention). The walkthroughs module (decode, tiles, onlineSoftmax, gradients, explain of
 * gradient cells) is loaded by `await engine.loadWalkthroughs()`, or at once with
 * `{ walkthroughs: true }`; its glue is imported only then, so it is not part of this entry's
 * download. The model module (engine.model: a transformer that trains) likewise, by
 * `await engine.loadModel()` or `{ model: true }`.
 * @param {{ wasmUrl?: string | URL, walkthroughsUrl?: string | URL, modelUrl?: string | URL, walkthroughs?: boolean, model?: boolean }} [options]
 * @type {typeof import('./index.js').loadAttention}
 */
export async function loadAttention(options = {}) {
  const url = browserUrl(options.wasmUrl, new URL('./attention.wasm', import.meta.url));
  const walkthroughsUrl = browserUrl(options.walkthroughsUrl, new URL('./attention-walkthroughs.wasm', import.meta.url));
  const modelUrl = browserUrl(options.modelUrl, new URL('./attention-model.wasm', import.meta.url));
  return instantiate(
    createAttentionModule,
    () => fetchBytes(url),
    url.href,
    {
      createModule: (settings) => import('./attention-walkthroughs.js').then((glue) => glue.default(settings)),
      loadBytes: () => fetchBytes(walkthroughsUrl),
      where: walkthroughsUrl.href,
      now: options.walkthroughs === true,
    },
    {
      createModule: (settings) => import('./attention-model.js').then((glue) => glue.default(settings)),
      loadBytes: () => fetchBytes(modelUrl),
      where: modelUrl.href,
      now: options.model === true,
    },
  );
}
