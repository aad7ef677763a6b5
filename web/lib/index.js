// Browser, worker and bundler entry of `attention-explorer` (package.json "default" condition).
// The .wasm is found next to this file with new URL(..., import.meta.url), which bundlers such as
// Vite follow and rewrite; `wasmUrl` overrides it.
import createAttentionModule from './attention.js';
import { instantiate } from './engine.js';

export { STEP_TITLES, createEngine, stringify, toJSON, version } from './engine.js';
export { findPreset, numpyLine, numpyLines, presetProblem, presets } from './presets.js';
export { cellLatex, heatColours, heatmapSvg, matrixCsv, matrixLatex, numpyScript, parseCsv, problemContext, pytorchScript, solutionLatex, stepCsv, stepFileName, stepFormula, stepLatex, stepSymbol, texNumber, traceCsv, traceJson } from './export.js';

function resolve(wasmUrl) {
  if (wasmUrl === undefined || wasmUrl === null) return new URL('./attention.wasm', import.meta.url);
  const base = globalThis.document?.baseURI ?? globalThis.location?.href ?? import.meta.url;
  return new URL(String(wasmUrl), base);
}

/**
 * Loads the WebAssembly core and returns the engine (run, runAll, explain, parseMatrix, random).
 * @param {{ wasmUrl?: string | URL }} [options]
 */
export async function loadAttention(options = {}) {
  const url = resolve(options.wasmUrl);
  return instantiate(createAttentionModule, async () => {
    const response = await fetch(url, { credentials: 'same-origin' });
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
    return response.arrayBuffer();
  }, url.href);
}
