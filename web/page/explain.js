// The worked calculation of one cell, from engine.explain(): the core describes every kind of
// calculation (its TeX lines, its sentences as message ids, its numbers and its term table); this module only
// lays them out, with the page's number format and the tokens' names. No kind is written here.
import { fillExplanation } from 'attention-explorer';
import { explanationWords } from 'attention-explorer/i18n';
import { html } from 'attention-explorer/html';
import { fmt, tex } from './format.js';
import { mathHtml } from './math.js';
import { rich, t } from './language.js';

const MAX_TERMS_IN_FORMULA = 3;
const MAX_TABLE_ROWS = 64;

/** A table of terms: `caption` an html``, the headers and cells text. */
function termTable(caption, headers, rows, highlight = -1) {
  const shown = rows.slice(0, MAX_TABLE_ROWS);
  const body = shown.map(
    (cells, i) =>
      html`<tr${i === highlight && html` class="hl"`}><th scope="row">${cells[0]}</th>${cells.slice(1).map((c) => html`<td>${c}</td>`)}</tr>`,
  );
  const more =
    rows.length > shown.length &&
    html`<tr><td colspan="${headers.length}" class="hint">${t('explorer.drill.moreTerms', { count: rows.length - shown.length, n: String(rows.length - shown.length) })}</td></tr>`;
  return html`<table class="terms"><caption>${caption}</caption><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${body}${more}</tbody></table>`;
}

/**
 * HTML for an explanation. `where`: { step (the trace's step), rowLabel, colLabel, queryLabel,
 * keyLabel, keyLabels[] and queryLabels[] (the names, for a table of keys or of queries), heads, decimals }.
 */
export function explanationHtml(e, where) {
  const d = where.decimals;
  const { head, row, col, value } = e;
  const target = html`<p class="drill-target">${rich('explorer.drill.target', {
    step: t(where.step.title_id),
    head: where.heads > 1 && head != null && head >= 0 ? String(head + 1) : 'none',
    row: String(row + 1),
    rowLabel: where.rowLabel,
    col: String(col + 1),
    colLabel: where.colLabel,
    lbl: (/** @type {unknown[]} */ chunks) => html`<span class="lbl">${chunks}</span>`,
  })}</p><p class="drill-value">= <strong>${fmt(value, d)}</strong></p>`;

  // The token a step of tokens × features is about: the label of its queries or keys axis.
  const tokenLabel = ['queries', 'keys'].includes(where.step.axes[0]) ? where.rowLabel : where.colLabel;
  const labels = { query: where.queryLabel, key: where.keyLabel, token: tokenLabel };
  // The core's sentence with its numbers filled in as text, and each token's name (marked off by
  // NULs, which no sentence holds) in a span.
  const words = (template) => {
    const parts = fillExplanation(template, e, { number: (x) => fmt(x, d), label: (name) => `\u0000${name}\u0000` }).split('\u0000');
    return html`${parts.map((part, i) => (i % 2 ? html`<span class="lbl">${labels[part] ?? ''}</span>` : part))}`;
  };
  // The sentence and the terms' caption and headers in the page's language: the core names the
  // messages, the catalogue has the words.
  const said = explanationWords(e, t);
  const text = said.text && html`<p>${words(said.text)}</p>`;
  let equations = null;
  if (said.lines.length > 1) {
    const [cell, ...rhs] = said.lines.map((line) => fillExplanation(line, e, { number: (x) => tex(x, d), maxTerms: MAX_TERMS_IN_FORMULA }));
    // One inline formula per line, in display style: KaTeX breaks an inline formula after a
    // top-level relation or operator (=, +), so a long sum wraps in a narrow panel or on a phone
    // instead of scrolling; a display-mode block (an aligned one too) never breaks.
    const lines = rhs.map((r, i) => html`<div class="drill-line">${mathHtml(`\\displaystyle ${i === 0 ? cell : '{}'} = ${r}`)}</div>`);
    equations = html`<div class="drill-eq">${lines}</div>`;
  }
  const { terms } = e;
  let table = null;
  if (terms) {
    const names = { key: where.keyLabels, query: where.queryLabels }[terms.index];
    const rowName = (k) => names?.[k] ?? String(k + 1);
    const rows = terms.columns[0].map((_, k) => [rowName(k), ...terms.columns.map((column) => fmt(column[k], d))]);
    table = termTable(words(said.terms.caption), said.terms.headers, rows, terms.highlight);
  }
  return html`${target}${text}${equations}${table}`;
}
