// Node entry of `attention-explorer` (package.json "node" condition). The glue is built for web
// and worker only, so Node reads the .wasm bytes itself (load-node.js).
import createAttentionModule from './attention.js';
import { instantiate } from './engine.js';
import { nodeBytes, nodeUrl, nodeWhere } from './load-node.js';

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
 * attention), with the walkthroughs module (decode, tiles, onlineSoftmax, gradients, explain of
 * gradient cells) loaded too unless `walkthroughs: false` (then `await engine.loadWalkthroughs()`
 * loads it), and the model module (engine.model: a transformer that trains) unless `model: false`.
 * @param {{ wasmUrl?: string | URL, walkthroughsUrl?: string | URL, modelUrl?: string | URL, walkthroughs?: boolean, model?: boolean }} [options]
 *   file paths, file: URLs or http(s): URLs of attention.wasm and attention-walkthroughs.wasm
 * @type {typeof import('./index.js').loadAttention}
 */
export async function loadAttention(options = {}) {
  const url = nodeUrl(options.wasmUrl, new URL('./attention.wasm', import.meta.url));
  const walkthroughsUrl = nodeUrl(options.walkthroughsUrl, new URL('./attention-walkthroughs.wasm', import.meta.url));
  const modelUrl = nodeUrl(options.modelUrl, new URL('./attention-model.wasm', import.meta.url));
  return instantiate(
    createAttentionModule,
    () => nodeBytes(url),
    nodeWhere(url),
    {
      createModule: (settings) => import('./attention-walkthroughs.js').then((glue) => glue.default(settings)),
      loadBytes: () => nodeBytes(walkthroughsUrl),
      where: nodeWhere(walkthroughsUrl),
      now: options.walkthroughs !== false,
    },
    {
      createModule: (settings) => import('./attention-model.js').then((glue) => glue.default(settings)),
      loadBytes: () => nodeBytes(modelUrl),
      where: nodeWhere(modelUrl),
      now: options.model !== false,
    },
  );
}
