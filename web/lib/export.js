// Exports of a problem and its trace, one module per format: LaTeX (latex.js), CSV and JSON
// (data.js), NumPy and PyTorch scripts (python.js), SVG heatmaps (svg.js). Pure string building:
// no DOM, no wasm, no dependencies.
export { positionsAxisLabels, problemContext, stepCaption, stepFileName } from './context.js';
export { texNumber } from './format.js';
export { cellLatex, cellText, fillExplanation, matrixLatex, solutionLatex, stepLatex } from './latex.js';
export { matrixCsv, parseCsv, stepCsv, traceCsv, traceJson } from './data.js';
export { numpyScript, pytorchScript } from './python.js';
export { heatmapSvg } from './svg.js';
export { heatColours } from './colours.js';
