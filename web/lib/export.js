// Exports of a problem and its trace (and of engine.decode's and engine.tiles' results), one module per format: LaTeX (latex.js), CSV and JSON
// (data.js), NumPy and PyTorch scripts (python.js), SVG heatmaps (svg.js). Pure string building:
// no DOM, no wasm, no dependencies.
export { positionsAxisLabels, problemContext, stepCaption, stepFileName } from './context.js';
export { texNumber } from './format.js';
export { cellLatex, cellText, decodeLatex, fillExplanation, matrixLatex, solutionLatex, stepLatex, tilesLatex } from './latex.js';
export { decodeCsv, matrixCsv, parseCsv, stepCsv, tilesCsv, traceCsv, traceJson } from './data.js';
export { numpyScript, pytorchScript } from './python.js';
export { heatmapSvg } from './svg.js';
export { heatColours } from './colours.js';
