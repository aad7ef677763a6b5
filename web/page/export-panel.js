// Exports of the whole solution or one step, made by the package: LaTeX, CSV, JSON, NumPy,
// PyTorch, SVG, PNG, and the open cell's worked calculation.
import {
  cellLatex,
  heatmapSvg,
  numpyScript,
  pytorchScript,
  solutionLatex,
  stepCaption,
  stepCsv,
  stepFileName,
  stringify,
  traceCsv,
  traceJson,
} from 'attention-explorer';
import { maskedPositions } from 'attention-explorer/step-table';
import { $, app, writeHtml } from './app.js';
import { axisLabels, stepKey } from './steps.js';
import { html } from 'attention-explorer/html';
import { errorWords } from 'attention-explorer/i18n';
import { stepTex } from './copy-latex.js';
import { t } from './language.js';

/** The export buttons, in order; each is named by its message `explorer.export.format.<format>`. */
export const FORMATS = ['latex', 'csv', 'json', 'numpy', 'pytorch', 'svg', 'png', 'cell'];

/** An Error whose message is the page's (in its language). */
const exportError = (id, values) => new Error(t(id, values));

/** Downloads `text` (or a Blob) as the file `name`: the page's one download (the walkthroughs' exports use it too). */
export function download(name, text, type) {
  const blob = text instanceof Blob ? text : new Blob([text], { type });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
}

function svgFor(result, step) {
  const ctx = result.ctx;
  const one = (s) => {
    const labels = axisLabels(s, ctx);
    // Weights of keys the softmax's input hid (−∞) are drawn grey, as on the page.
    const before = maskedPositions(result.trace, s);
    return heatmapSvg(s, {
      title: t('explorer.export.heatmap-title', { caption: stepCaption(s, ctx.meta.heads, t), rows: s.shape[0], cols: s.shape[1] }),
      rowLabels: labels.rows,
      colLabels: labels.cols,
      axisTitles: { rows: labels.rowTitle, cols: labels.colTitle },
      masked: before?.map((row) => row.map((v) => v === -Infinity)),
      decimals: Math.min(ctx.decimals, 3),
      t,
    });
  };
  if (step) return one(step);
  // The whole trace: every step's heatmap, one under the other.
  const parts = result.trace.steps.map(one);
  let y = 0,
    width = 0;
  const inner = parts.map((svg) => {
    const w = Number(/width="(\d+)"/.exec(svg)[1]),
      h = Number(/height="(\d+)"/.exec(svg)[1]);
    const g = svg.replace('<svg ', `<svg x="0" y="${y}" `);
    y += h + 16;
    width = Math.max(width, w);
    return g;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}">\n<rect width="100%" height="100%" fill="#fff"/>\n${inner.join('\n')}</svg>\n`;
}

async function pngFromSvg(svg) {
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await img.decode();
  const scale = 2;
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth * scale;
  canvas.height = img.naturalHeight * scale;
  const g = canvas.getContext('2d');
  g.scale(scale, scale);
  g.drawImage(img, 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(exportError('explorer.export.no-png'))), 'image/png'),
  );
}

/** Makes one export: { name, text | blob, type }. `format`: latex csv json numpy pytorch svg png cell. */
async function makeExport(format, stepKeyOrAll = 'all') {
  const { state, result } = app;
  if (!result) throw exportError('explorer.export.nothing');
  const { trace, problem } = result;
  const step = stepKeyOrAll === 'all' ? null : trace.steps.find((s) => stepKey(s) === stepKeyOrAll);
  const d = result.ctx.decimals;
  const labels = step ? axisLabels(step, result.ctx) : null;
  switch (format) {
    case 'latex':
      return step
        ? { name: stepFileName(step, 'tex', trace.meta.heads), type: 'text/x-tex', text: stepTex(step, d) }
        : { name: 'attention-solution.tex', type: 'text/x-tex', text: solutionLatex(problem, trace, { decimals: d, standalone: true, t }) };
    case 'csv':
      return step
        ? {
            name: stepFileName(step, 'csv', trace.meta.heads),
            type: 'text/csv',
            text: stepCsv(step, { rowLabels: labels.rows, colLabels: labels.cols }),
          }
        : { name: 'attention-trace.csv', type: 'text/csv', text: traceCsv(trace) };
    case 'json':
      return step
        ? { name: stepFileName(step, 'json', trace.meta.heads), type: 'application/json', text: `${stringify(step)}\n` }
        : { name: 'attention-trace.json', type: 'application/json', text: `${traceJson(trace)}\n` };
    case 'numpy':
      return {
        name: 'attention_numpy.py',
        type: 'text/x-python',
        text: numpyScript(problem, trace, { recipe: state.recipe || undefined, t }),
      };
    case 'pytorch':
      return {
        name: 'attention_torch.py',
        type: 'text/x-python',
        text: pytorchScript(problem, trace, { recipe: state.recipe || undefined, t }),
      };
    case 'svg': {
      const svg = svgFor(result, step);
      return { name: step ? stepFileName(step, 'svg', trace.meta.heads) : 'attention-steps.svg', type: 'image/svg+xml', text: svg };
    }
    case 'png': {
      const blob = await pngFromSvg(svgFor(result, step));
      return { name: step ? stepFileName(step, 'png', trace.meta.heads) : 'attention-steps.png', type: 'image/png', blob };
    }
    case 'cell': {
      const open = state.open;
      if (!open) throw exportError('explorer.export.no-cell');
      const e = app.engine.explain(problem, { step: open.step, head: open.head, row: open.row, col: open.col });
      return {
        name: `${open.step}-cell-${open.row + 1}-${open.col + 1}.tex`,
        type: 'text/x-tex',
        text: `\\[\n${cellLatex(e, trace, { decimals: d })}\n\\]\n`,
      };
    }
    default:
      throw exportError('explorer.export.unknown', { format });
  }
}

/** The "Export" list: the whole solution, then every step of the current trace. */
export function fillExportSelect() {
  const result = app.result;
  const sel = $('export-what');
  if (!result || !sel) return;
  const keep = sel.value;
  writeHtml(
    sel,
    html`<option value="all">${t('explorer.export.all')}</option>${result.trace.steps.map(
      (s) => html`<option value="${stepKey(s)}">${stepCaption(s, result.ctx.meta.heads, t)}</option>`,
    )}`,
  );
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}

/** Makes the export chosen in the panel, downloads it and shows it in the preview box. */
export async function onExport(format) {
  const status = $('share-status');
  try {
    const out = await makeExport(format, $('export-what').value);
    const preview = $('export-preview');
    if (out.blob) {
      preview.value = t('explorer.export.png-done', { name: out.name, size: out.blob.size });
      download(out.name, out.blob);
    } else {
      preview.value = out.text;
      download(out.name, out.text, out.type);
    }
    preview.hidden = false;
    preview.dataset.format = format;
    status.textContent = t('explorer.export.done', { name: out.name });
  } catch (err) {
    status.textContent = t('explorer.export.failed', { error: errorWords(err, t) });
  }
}
