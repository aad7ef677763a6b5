// The backward pass, step by step, from dO (editable, default all ones); a number of a gradient
// explains itself (a Walkthrough, walk.js).
import { narrateGradientStep, numpyScript, solutionLatex, traceCsv, traceJson } from 'attention-explorer';
import { setWalk } from '../actions.js';
import { $, app } from '../app.js';
import { explanationHtml } from '../explain.js';
import { html, setHtml } from 'attention-explorer/html';
import { errorWords, stepFormula, stepTitle } from 'attention-explorer/i18n';
import { mathHtml } from '../math.js';
import { axisLabels } from '../steps.js';
import { store } from '../store.js';
import { current, matrixHtml, practiceEngine, restart, walkState } from './walk.js';
import { t } from '../language.js';

export const title = 'explorer.practice.gradients.title';

export function compute(engine, result) {
  const walk = walkState();
  const { trace, problem } = result;
  const shape = [trace.output.length, trace.output[0].length];
  // A dO of another shape than the output (an edit changed it) is dropped for good.
  if (walk.dO && (walk.dO.length !== shape[0] || walk.dO[0].length !== shape[1])) store.dispatch(setWalk, { dO: null });
  const { dO } = walkState();
  const gradients = engine.gradients(problem, dO ? { dO } : {});
  // With one head, the heads' dQ, dK, dV put side by side are head 1's again: left out (they
  // would repeat three steps, each number "dV₁,₁ = dV₁,₁").
  const steps = gradients.steps;
  const sameAsHead = (x) =>
    gradients.meta.heads === 1 &&
    (x.head === null || x.head === undefined) &&
    x.inputs.length === 1 &&
    steps[x.inputs[0]]?.id === x.id &&
    String(steps[x.inputs[0]].shape) === String(x.shape);
  const order = steps.map((s, i) => (s.id.startsWith('d') && !sameAsHead(s) ? i : -1)).filter((i) => i >= 0);
  return { gradients, order, positions: order.length };
}

export function where(view, i) {
  return t('explorer.practice.gradients.step', { n: String(i + 1), count: String(view.positions) });
}

export function sentence(view, index, labels) {
  return narrateGradientStep(view.gradients, view.order[index], labels, t);
}

export function body(view) {
  const { gradients, order } = view;
  const { ctx } = app.result;
  const index = order[walkState().index];
  const step = gradients.steps[index];
  const gctx = { ...ctx, steps: gradients.steps };
  const head =
    step.head != null &&
    step.head >= 0 &&
    gradients.meta.heads > 1 &&
    html` <span class="head-tag">${t('explorer.card.head', { head: String(step.head + 1) })}</span>`;
  return html`<article class="step pr-gradient" data-step="${step.id}" data-head="${step.head ?? -1}" data-index="${index}">
    <header class="step-head"><h3>${stepTitle(step, t)}${head}</h3><span class="shape">${step.shape[0]} × ${step.shape[1]}</span></header>
    <div class="formula">${mathHtml(stepFormula(step, t).tex, true)}</div>
    <div class="matrix-wrap">${matrixHtml(step, axisLabels(step, gctx), gctx)}</div>
  </article><div id="pr-drill" class="pr-drill" aria-live="polite"></div>`;
}

/** One tab stop in a gradient's table: its first number. */
export function drawn(view) {
  const first = $('practice-body').querySelector('.pr-gradient td[data-r]');
  if (first) first.tabIndex = 0;
}

export function controls(view) {
  parseFailure = null; // the cells are drawn again from dO
  const { trace } = app.result;
  const out = trace.output;
  const dO = walkState().dO ?? out.map((r) => r.map(() => 1));
  const rows = dO.map(
    (row, r) =>
      html`<tr>${row.map(
        (v, c) =>
          html`<td><input class="pr-do-cell" id="pr-do-${r}-${c}" data-r="${r}" data-c="${c}" size="4" value="${v}" aria-label="${t('explorer.practice.gradients.cell', { row: String(r + 1), column: String(c + 1) })}"></td>`,
      )}</tr>`,
  );
  return html`<p class="pr-do-caption" id="pr-do-caption">${t('explorer.practice.gradients.dO')}</p><table class="pr-do" aria-labelledby="pr-do-caption"><tbody>${rows}</tbody></table><button type="button" id="pr-do-ones">${t('explorer.practice.gradients.ones')}</button><p id="pr-do-error" class="error" role="alert" hidden></p>`;
}

export function controlsKey() {
  const { trace } = app.result;
  return `gradients ${trace.output.length}x${trace.output[0].length}`;
}

export function bind() {
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('.pr-do-cell')))
    input.addEventListener('change', readDO);
  $('pr-do-ones').addEventListener('click', () => {
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('.pr-do-cell'))) input.value = '1';
    parseFailure = null;
    showError(null);
    restart({ dO: null });
  });
}

// A cell of dO's grid that is not a number (engine.parseCell's error): shown until the grid reads
// or is drawn again, whatever the computations in between say.
let parseFailure = null;

/**
 * The error under dO's grid, and its cell marked as the input editors mark theirs (aria-invalid):
 * the error is about dO (a cell that is not a number, or the core's "dO: row 2, column 1 is inf"),
 * its row and column from 1. Another error, or none, clears them.
 */
export function showError(error) {
  const shown = parseFailure ?? (error?.field === 'dO' ? error : null);
  for (const input of document.querySelectorAll('.pr-do-cell[aria-invalid]')) {
    input.removeAttribute('aria-invalid');
    input.removeAttribute('aria-describedby');
  }
  const box = $('pr-do-error');
  if (!box) return;
  box.hidden = !shown;
  box.textContent = shown ? errorWords(shown, t) : '';
  if (!shown || !(shown.row > 0 && shown.column > 0)) return;
  const cell = document.querySelector(`.pr-do-cell[data-r="${shown.row - 1}"][data-c="${shown.column - 1}"]`);
  cell?.setAttribute('aria-invalid', 'true');
  cell?.setAttribute('aria-describedby', 'pr-do-error');
}

/** dO from its grid, each cell read as the page's grids read a number (engine.parseCell). */
async function readDO() {
  const engine = await practiceEngine();
  try {
    const dO = app.result.trace.output.map((r) => r.map(() => 1));
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('.pr-do-cell'))) {
      const [r, c] = [Number(input.dataset.r), Number(input.dataset.c)];
      dO[r][c] = engine.parseCell(input.value, 'dO', r + 1, c + 1);
    }
    parseFailure = null;
    showError(null);
    restart({ dO });
  } catch (err) {
    parseFailure = err;
    showError(null);
  }
}

export const exporters = {
  file: 'attention-gradients',
  latex: (view, opts) => solutionLatex(app.result.problem, view.gradients, { ...opts, title: t('explorer.practice.gradients.latexTitle') }),
  csv: (view) => traceCsv(view.gradients),
  json: (view) => traceJson(view.gradients),
  numpy: (view) => numpyScript(app.result.problem, view.gradients, { gradients: true, recipe: app.state.recipe || undefined }),
};

/** Worked calculation of a gradient cell (the walkthroughs module explains gradient steps). */
async function explainCell(td) {
  const card = td.closest('.pr-gradient');
  const drill = $('pr-drill');
  if (!card || !drill) return;
  const engine = await practiceEngine();
  const { gradients } = current.view;
  const step = gradients.steps[Number(card.dataset.index)];
  const [row, col] = [Number(td.dataset.r), Number(td.dataset.c)];
  const problem = walkState().dO ? { ...app.result.problem, dO: walkState().dO } : app.result.problem;
  let e;
  try {
    e = engine.explain(problem, { step: step.id, head: step.head, row, col });
  } catch (err) {
    setHtml(drill, html`<p class="hint">${errorWords(err, t)}</p>`);
    return;
  }
  const labels = axisLabels(step, { ...app.result.ctx, steps: gradients.steps });
  setHtml(
    drill,
    explanationHtml(e, {
      step,
      rowLabel: labels.rows[row],
      colLabel: labels.cols[col],
      queryLabel: app.result.ctx.tokensQ[row],
      keyLabel: app.result.ctx.tokensK[col],
      keyLabels: app.result.ctx.tokensK,
      queryLabels: app.result.ctx.tokensQ,
      heads: gradients.meta.heads,
      decimals: app.result.ctx.decimals,
    }),
  );
}

/** A click on a gradient's number explains it. */
export function onClick(e) {
  const td = /** @type {HTMLElement} */ (e.target).closest('.pr-gradient td[data-r]');
  if (td) explainCell(td);
}

/** In a gradient's table the arrow keys move between numbers and Enter explains one. */
export function onKey(e) {
  const td = /** @type {HTMLElement} */ (e.target).closest?.('.pr-gradient td[data-r]');
  if (!td) return;
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    explainCell(td);
    return;
  }
  const move = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
  if (!move) return;
  e.preventDefault();
  e.stopPropagation(); // the walk's own arrow keys wait until the focus leaves the table
  const next = td
    .closest('table')
    .querySelector(`td[data-r="${Number(td.dataset.r) + move[0]}"][data-c="${Number(td.dataset.c) + move[1]}"]`);
  if (!next) return;
  td.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}
