// Heatmaps as standalone SVG documents, coloured with the page's scales (colours.js).

import { heatColours } from './colours.js';
import { exactNumber, fixedNumber, formatNumber } from './format.js';

const xml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);

/**
 * A step (or any matrix) as an SVG heatmap (a string; standalone, with its own xmlns).
 * Options: title, rowLabels, colLabels, kind (the colour scale: default the step's own kind),
 * cell (px), numbers (draw the values; default when cells are large enough), decimals.
 */
export function heatmapSvg(step, { title, rowLabels, colLabels, kind, cell, numbers, decimals = 2 } = {}) {
  const data = step.data;
  const nr = data.length, nc = data[0]?.length ?? 0;
  const k = kind ?? step.kind ?? 'signed';
  const size = cell ?? Math.max(4, Math.min(48, Math.floor(640 / Math.max(nr, nc))));
  const showNumbers = numbers ?? size >= 36;
  const labelW = rowLabels ? 8 + 7 * Math.max(...rowLabels.map((l) => String(l).length)) : 0;
  const titleH = title ? 24 : 0;
  const labelH = colLabels ? 18 : 0;
  const width = labelW + nc * size + 2;
  const height = titleH + labelH + nr * size + 2;
  const colour = heatColours(data, k);
  const fontSize = Math.max(8, Math.min(13, Math.floor(size / 3.6)));
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" role="img">`);
  out.push(`<title>${xml(title ?? `${step.title ?? step.id ?? 'matrix'} ${nr}x${nc}`)}</title>`);
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  if (title) out.push(`<text x="${labelW}" y="16" font-size="14" font-weight="600" fill="#111">${xml(title)}</text>`);
  const y0 = titleH + labelH, x0 = labelW;
  if (colLabels) colLabels.forEach((l, j) => out.push(`<text x="${x0 + j * size + size / 2}" y="${titleH + 13}" font-size="11" text-anchor="middle" fill="#333">${xml(l)}</text>`));
  if (rowLabels) rowLabels.forEach((l, i) => out.push(`<text x="${labelW - 6}" y="${y0 + i * size + size / 2 + 4}" font-size="11" text-anchor="end" fill="#333">${xml(l)}</text>`));
  for (let i = 0; i < nr; i++) {
    for (let j = 0; j < nc; j++) {
      const v = data[i][j];
      const c = colour(v);
      const x = x0 + j * size, y = y0 + i * size;
      // Per-cell tooltips only while the file stays small (256 × 256 cells would be megabytes).
      const tip = nr * nc <= 4096 ? `<title>${i + 1},${j + 1}: ${exactNumber(v)}</title></rect>` : '';
      out.push(`<rect x="${x}" y="${y}" width="${size}" height="${size}" fill="${c ? c.fill : '#999'}"${c ? '' : ' fill-opacity="0.5"'}${tip ? `>${tip}` : '/>'}`);
      if (showNumbers) {
        const text = Number.isFinite(v) ? fixedNumber(v, decimals).replace('-', '−') : formatNumber(v);
        out.push(`<text x="${x + size / 2}" y="${y + size / 2 + fontSize / 3}" font-size="${fontSize}" text-anchor="middle" fill="${c ? c.text : '#111'}">${text}</text>`);
      }
    }
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
