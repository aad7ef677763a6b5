// The online softmax, one row entry by entry; "subtract the max" off shows overflow (a Walkthrough, walk.js).
import { narrateOnlineSoftmax } from 'attention-explorer';
import { setWalk } from '../actions.js';
import { $, app } from '../app.js';
import { html } from 'attention-explorer/html';
import { warningsIn } from 'attention-explorer/i18n';
import { store } from '../store.js';
import { recordTable, restart, walkState } from './walk.js';
import { rich, t } from '../language.js';

export const title = 'explorer.practice.softmax.title';

/** The softmax's input for head 1, first query: the row the forward softmax reads. */
function firstScoresRow(trace) {
  const weights = trace.steps.find((s) => s.id === 'weights' && (s.head ?? 0) === 0);
  const input = trace.steps[weights.inputs[0]];
  return input.axes[0] === 'queries' ? input.data[0] : input.data.map((r) => r[0]);
}

export function compute(engine, result) {
  const walk = walkState();
  const { trace } = result;
  const row = walk.row === null ? firstScoresRow(trace) : engine.parseMatrix(walk.row, 'row');
  const values = walk.row === null ? row : row.length === 1 ? row[0] : null;
  if (!values) throw new Error(t('explorer.practice.softmax.oneRow', { rows: row.length, rowsText: String(row.length) }));
  const settings = { subtractMax: walk.subtractMax, precision: walk.precision ?? trace.meta.precision };
  const softmax = engine.onlineSoftmax(values, settings);
  return { softmax, settings, positions: softmax.steps.length + 1 };
}

export function where(view, i) {
  const count = view.softmax.steps.length;
  return i < count
    ? t('explorer.practice.softmax.entry', { n: String(i + 1), count: String(count) })
    : t('explorer.practice.softmax.weights');
}

export function sentence(view, index, labels) {
  return narrateOnlineSoftmax(view.softmax, index, view.settings, t);
}

export function body(view) {
  const { softmax } = view;
  const i = walkState().index;
  const n = softmax.steps.length;
  const shown = (key) => softmax.steps.map((s, j) => (j <= i ? s[key] : undefined));
  const sup = (chunks) => html`<sup>${chunks}</sup>`;
  const rows = [
    { name: 'x', id: 'x', values: softmax.steps.map((s) => s.x) },
    { name: t('explorer.practice.softmax.max'), id: 'm', values: shown('m_after') },
    { name: t('explorer.practice.softmax.rescale', { sup }), id: 'rescale', values: shown('rescale') },
    { name: t('explorer.practice.softmax.sum'), id: 'l', values: shown('l_after') },
  ];
  if (i >= n) rows.push({ name: t('explorer.practice.softmax.weight', { sup }), id: 'weight', values: softmax.weights });
  const warn = i >= n && softmax.warnings.length > 0 && html`<p class="warning" id="pr-overflow">⚠ ${warningsIn(softmax, t).join(' ')}</p>`;
  const table = recordTable(
    t('explorer.practice.softmax.caption', { subtract: view.settings.subtractMax ? 'yes' : 'no', precision: view.settings.precision }),
    softmax.steps.map((s) => t('explorer.practice.softmax.column', { n: String(s.j + 1) })),
    rows,
    i < n ? i : -1,
  );
  return html`${table}${warn}`;
}

export function controls(view) {
  const walk = walkState();
  const { trace } = app.result;
  const precision = walk.precision ?? trace.meta.precision;
  return html`<label for="pr-row">${t('explorer.practice.softmax.row')}</label> <input id="pr-row" type="text" size="28" spellcheck="false" placeholder="${t('explorer.practice.softmax.rowPlaceholder')}" value="${walk.row ?? ''}">
      <button type="button" id="pr-row-reset">${t('explorer.practice.softmax.rowReset')}</button>
      <label><input type="checkbox" id="pr-subtract"${walk.subtractMax && ' checked'}> ${t('explorer.practice.softmax.subtract')}</label>
      <label for="pr-precision">${t('explorer.practice.softmax.in')}</label> <select id="pr-precision"><option value="float64"${precision === 'float64' && ' selected'}>float64</option><option value="float32"${precision === 'float32' && ' selected'}>float32</option></select>
      <p class="hint">${rich('explorer.practice.softmax.hint', { example: '1 100 3', limit: '88.7' })}</p>`;
}

export function controlsKey() {
  const { trace } = app.result;
  return `softmax ${trace.meta.precision}`;
}

export function bind() {
  $('pr-row').addEventListener('change', (e) =>
    restart({ row: /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value.trim() || null }),
  );
  $('pr-row-reset').addEventListener('click', () => {
    $('pr-row').value = '';
    restart({ row: null });
  });
  $('pr-subtract').addEventListener('change', (e) =>
    store.dispatch(setWalk, { subtractMax: /** @type {HTMLInputElement} */ (e.target).checked }),
  );
  $('pr-precision').addEventListener('change', (e) =>
    store.dispatch(setWalk, { precision: /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value }),
  );
}
