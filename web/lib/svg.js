// Heatmaps as standalone SVG documents, coloured with the page's scales (colours.js).

import { colourLegend, heatColours, legendScale } from './colours.js';
import { exactNumber, fixedNumber, formatNumber } from './format.js';
import { english, stepTitle } from './i18n.js';

const xml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);

// Masked cells as on the page: a hidden weight light grey, a −∞ entry hatched grey.
const MASKED = { fill: '#eceef1', text: '#4b5563' };
const hatch = (id) =>
  `<defs><pattern id="${id}" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
  '<rect width="8" height="8" fill="#e3e5e9"/><rect width="4" height="8" fill="#c9ccd2"/></pattern></defs>';

/** A generous width of `text` in px at `size` (system-ui; wide enough that nothing is clipped). */
const textWidth = (text, size, bold = false) => Math.ceil(String(text).length * size * (bold ? 0.62 : 0.58));

/**
 * A step (or any matrix) as an SVG heatmap (a string; standalone, with its own xmlns): its title,
 * the axes' names ("query ↓ key →"), row and column labels, the cells (masked ones grey, as on
 * the page) and a colour bar naming the scale's meaning.
 * Options: title, rowLabels, colLabels, axisTitles ({ rows, cols }), masked (true where hidden),
 * kind (the colour scale: default the step's own kind), cell (px), numbers (draw the values;
 * default when cells are large enough), decimals, colourBar (default true), t (the language of the
 * file's own words: the scale's meaning, a masked cell's tooltip, the default title; English by default).
 * @type {typeof import('./index.js').heatmapSvg}
 */
export function heatmapSvg(
  step,
  { title, rowLabels, colLabels, axisTitles, masked, kind, cell, numbers, decimals = 2, colourBar = true, t = english } = {},
) {
  const data = step.data;
  const nr = data.length,
    nc = data[0]?.length ?? 0;
  const k = kind ?? step.kind ?? 'signed';
  const size = cell ?? Math.max(4, Math.min(48, Math.floor(640 / Math.max(nr, nc))));
  const showNumbers = numbers ?? size >= 36;
  const pad = 8;
  const labelW = rowLabels ? 8 + Math.max(...rowLabels.map((l) => textWidth(l, 11))) : 0;
  const axisText = axisTitles ? `${axisTitles.rows} ↓  ${axisTitles.cols} →` : '';
  const titleH = title ? 24 : 0;
  const axisH = axisTitles ? 16 : 0;
  const labelH = colLabels ? 18 : 0;
  const legend = colourLegend(data, k);
  const meaning = t(`export.legend.${legendScale(k)}`);
  const ends = [legend.lo, legend.hi].map(
    (v) => (legend.lo < 0 && v > 0 ? '+' : '') + formatNumber(v, Math.min(decimals, 2), { fixedZero: true }),
  );
  const barW = 160;
  const barH = colourBar ? 40 : 0;
  const barTextW = textWidth(ends[0], 11) + barW + textWidth(ends[1], 11) + 24;
  const x0 = pad + labelW,
    y0 = pad + titleH + axisH + labelH;
  const gridRight = x0 + nc * size;
  const width =
    Math.max(
      gridRight,
      pad + (title ? textWidth(title, 14, true) : 0),
      pad + textWidth(axisText, 11),
      pad + (colourBar ? Math.max(barTextW, textWidth(meaning, 11)) : 0),
    ) + pad;
  const height = y0 + nr * size + barH + pad;
  const colour = heatColours(data, k);
  // Ids unique per step, so that the heatmaps of a whole trace can share one document.
  const id = `${step.id ?? 'm'}${step.head ?? ''}`.replace(/[^A-Za-z0-9_-]/g, '_');
  const NEG_INF = { fill: `url(#neg-inf-${id})`, text: '#222' };
  const fontSize = Math.max(8, Math.min(13, Math.floor(size / 3.6)));
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" role="img">`,
  );
  const name = stepTitle(step, t) ?? step.id ?? t('export.heatmap.matrix');
  out.push(`<title>${xml(title ?? `${name} ${nr}x${nc}`)}</title>`);
  out.push(hatch(`neg-inf-${id}`));
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  if (title) out.push(`<text x="${pad}" y="${pad + 15}" font-size="14" font-weight="600" fill="#111">${xml(title)}</text>`);
  if (axisTitles) out.push(`<text class="axes" x="${pad}" y="${pad + titleH + 12}" font-size="11" fill="#333">${xml(axisText)}</text>`);
  if (colLabels)
    colLabels.forEach((l, j) =>
      out.push(`<text x="${x0 + j * size + size / 2}" y="${y0 - 5}" font-size="11" text-anchor="middle" fill="#333">${xml(l)}</text>`),
    );
  if (rowLabels)
    rowLabels.forEach((l, i) =>
      out.push(`<text x="${x0 - 6}" y="${y0 + i * size + size / 2 + 4}" font-size="11" text-anchor="end" fill="#333">${xml(l)}</text>`),
    );
  for (let i = 0; i < nr; i++) {
    for (let j = 0; j < nc; j++) {
      const v = data[i][j];
      const hidden = masked?.[i]?.[j] === true;
      const c = v === -Infinity ? NEG_INF : hidden ? MASKED : colour(v);
      const x = x0 + j * size,
        y = y0 + i * size;
      // Per-cell tooltips only while the file stays small (256 × 256 cells would be megabytes).
      const at = `${i + 1},${j + 1}: ${exactNumber(v)}`;
      const tip = nr * nc <= 4096 ? `<title>${xml(hidden ? t('export.heatmap.masked', { cell: at }) : at)}</title></rect>` : '';
      out.push(
        `<rect x="${x}" y="${y}" width="${size}" height="${size}" fill="${c ? c.fill : '#999'}"${c ? '' : ' fill-opacity="0.5"'}${tip ? `>${tip}` : '/>'}`,
      );
      if (showNumbers) {
        const text = Number.isFinite(v) ? fixedNumber(v, decimals).replace('-', '−') : formatNumber(v);
        out.push(
          `<text x="${x + size / 2}" y="${y + size / 2 + fontSize / 3}" font-size="${fontSize}" text-anchor="middle" fill="${c ? c.text : '#111'}">${text}</text>`,
        );
      }
    }
  }
  if (colourBar) {
    const by = y0 + nr * size + 12;
    const bx = pad + textWidth(ends[0], 11) + 6;
    const stops = legend.colours
      .map((c, i) => `<stop offset="${(i / (legend.colours.length - 1)).toFixed(3)}" stop-color="${c}"/>`)
      .join('');
    out.push(`<g class="colour-bar"><linearGradient id="bar-${id}">${stops}</linearGradient>`);
    out.push(`<text x="${pad}" y="${by + 9}" font-size="11" fill="#333">${xml(ends[0])}</text>`);
    out.push(
      `<rect class="ramp" x="${bx}" y="${by}" width="${barW}" height="10" fill="url(#bar-${id})" stroke="#888" stroke-width="0.5"/>`,
    );
    out.push(`<text x="${bx + barW + 6}" y="${by + 9}" font-size="11" fill="#333">${xml(ends[1])}</text>`);
    out.push(`<text x="${pad}" y="${by + 24}" font-size="11" fill="#333">${xml(meaning)}</text></g>`);
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
