// Node entry of `attention-explorer` (package.json "node" condition). The glue is built for web
// and worker only, so Node reads the .wasm bytes itself and hands them over (TOOLCHAIN.md quirk 5).
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';

import createAttentionModule from './attention.js';
import { instantiate } from './engine.js';

export { STEP_TITLES, createEngine, stringify, toJSON, version } from './engine.js';
export { findPreset, numpyLine, numpyLines, presetProblem, presets } from './presets.js';
export { cellLatex, heatColours, heatmapSvg, matrixCsv, matrixLatex, numpyScript, parseCsv, problemContext, pytorchScript, solutionLatex, stepCsv, stepFileName, stepFormula, stepLatex, stepSymbol, texNumber, traceCsv, traceJson } from './export.js';

function resolve(wasmUrl) {
  if (wasmUrl === undefined || wasmUrl === null) return new URL('./attention.wasm', import.meta.url);
  if (wasmUrl instanceof URL) return wasmUrl;
  const text = String(wasmUrl);
  if (/^[a-z][a-z0-9+.-]*:/i.test(text) && !isAbsolute(text)) return new URL(text);
  return pathToFileURL(text);
}

/**
 * Loads the WebAssembly core and returns the engine (run, runAll, explain, parseMatrix, random).
 * @param {{ wasmUrl?: string | URL }} [options] a file path, file: URL or http(s): URL of attention.wasm
 */
export async function loadAttention(options = {}) {
  const url = resolve(options.wasmUrl);
  const where = url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href;
  return instantiate(createAttentionModule, async () => {
    if (url.protocol === 'file:') {
      return readFile(url).catch((error) => {
        throw error.code === 'ENOENT' ? new Error('no such file') : error;
      });
    }
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
    return response.arrayBuffer();
  }, where);
}
