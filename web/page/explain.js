// The worked calculation of one cell, from engine.explain(): the core describes every kind of
// calculation (its TeX lines, its sentences, its numbers and its term table); this module only
// lays them out, with the page's number format and the tokens' names. No kind is written here.
import { fillExplanation } from 'attention-explorer';
import { fmt, tex, escapeHtml } from './format.js';
import { mathHtml } from './math.js';

const MAX_TERMS_IN_FORMULA = 3;
const MAX_TABLE_ROWS = 64;

function termTable(caption, headers, rows, highlight = -1) {
  const shown = rows.slice(0, MAX_TABLE_ROWS);
  let html = `<table class="terms"><caption>${caption}</caption><thead><tr>${headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>`;
  shown.forEach((cells, i) => {
    html += `<tr${i === highlight ? ' class="hl"' : ''}><th scope="row">${cells[0]}</th>${cells
      .slice(1)
      .map((c) => `<td>${c}</td>`)
      .join('')}</tr>`;
  });
  if (rows.length > shown.length)
    html += `<tr><td colspan="${headers.length}" class="hint">… and ${rows.length - shown.length} more terms</td></tr>`;
  return html + '</tbody></table>';
}

/**
 * HTML for an explanation. `where`: { step (the trace's step), rowLabel, colLabel, queryLabel,
 * keyLabel, keyLabels[] and queryLabels[] (the names, for a table of keys or of queries), heads, decimals }.
 */
export function explanationHtml(e, where) {
  const d = where.decimals;
  const { head, row, col, value } = e;
  const headTxt = where.heads > 1 && head != null && head >= 0 ? `, head ${head + 1}` : '';
  let html = `<p class="drill-target"><strong>${escapeHtml(where.step.title)}</strong>${headTxt}: row ${row + 1} <span class="lbl">(${escapeHtml(where.rowLabel)})</span>, column ${col + 1} <span class="lbl">(${escapeHtml(where.colLabel)})</span></p>`;
  html += `<p class="drill-value">= <strong>${fmt(value, d)}</strong></p>`;

  // The token a step of tokens × features is about: the label of its queries or keys axis.
  const tokenLabel = ['queries', 'keys'].includes(where.step.axes[0]) ? where.rowLabel : where.colLabel;
  const labels = { query: where.queryLabel, key: where.keyLabel, token: tokenLabel };
  const words = (template) =>
    fillExplanation(escapeHtml(template), e, {
      number: (x) => fmt(x, d),
      label: (name) => `<span class="lbl">${escapeHtml(labels[name] ?? '')}</span>`,
    });
  if (e.text) html += `<p>${words(e.text)}</p>`;
  if (e.lines.length > 1) {
    const [cell, ...rhs] = e.lines.map((line) => fillExplanation(line, e, { number: (x) => tex(x, d), maxTerms: MAX_TERMS_IN_FORMULA }));
    // One inline formula per line, in display style: KaTeX breaks an inline formula after a
    // top-level relation or operator (=, +), so a long sum wraps in a narrow panel or on a phone
    // instead of scrolling; a display-mode block (an aligned one too) never breaks.
    const lines = rhs.map((r, i) => `<div class="drill-line">${mathHtml(`\\displaystyle ${i === 0 ? cell : '{}'} = ${r}`)}</div>`);
    html += `<div class="drill-eq">${lines.join('')}</div>`;
  }
  const { terms } = e;
  if (terms) {
    const names = { key: where.keyLabels, query: where.queryLabels }[terms.index];
    const rowName = (k) => escapeHtml(names?.[k] ?? String(k + 1));
    const rows = terms.columns[0].map((_, k) => [rowName(k), ...terms.columns.map((column) => fmt(column[k], d))]);
    html += termTable(words(terms.caption), terms.headers, rows, terms.highlight);
  }
  return html;
}
