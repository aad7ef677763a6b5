// The step cards: drawn from the last good result (steps.js renderSteps) with what the views
// drawn with them read besides the trace (result.ctx: token names, decimals, what is hidden or
// folded), and the trace's warnings. Subscribed after the loop computed the result (main.js).
import { $, app, writeHtml } from './app.js';
import { hiddenStepIds, resultParts, store } from './store.js';
import { decimalsOf, tokenLists, traceCounts } from './state.js';
import { renderSteps } from './steps.js';
import { html } from 'attention-explorer/html';
import { warningsIn } from 'attention-explorer/i18n';
import { t } from './language.js';

/** What the step views need besides the trace: token names, decimals, what is hidden or folded. */
function stepContext(trace) {
  const { state } = app;
  const meta = trace.meta;
  const tokens = tokenLists(state, traceCounts(trace));
  return {
    meta,
    options: app.result?.problem?.options ?? {}, // the problem's, e.g. for the mask's components
    steps: trace.steps,
    layout: state.options.layout,
    scaleMode: state.options.scale,
    tokensQ: tokens.q,
    tokensK: tokens.k,
    decimals: decimalsOf(state),
    hiddenSteps: hiddenStepIds(store.get()),
    collapsed: state.collapsed,
  };
}

/** Redraws the step cards and the trace's warnings from the last good result. */
function renderStepCards() {
  const list = $('step-list');
  // Keep the drill-down panel out of the list while it is redrawn.
  const drill = $('drill');
  if (drill.parentElement !== $('results')) $('results').appendChild(drill);
  const result = app.result;
  if (!result) {
    list.replaceChildren();
    return;
  }
  result.ctx = stepContext(result.trace);
  result.steps = renderSteps(list, result.trace, result.ctx);
  const warnings = warningsIn(result.trace, t);
  writeHtml($('warnings'), html`${warnings.map((w) => html`<p class="warning">⚠ ${w}</p>`)}`);
}

/** The cards follow the results (store.js resultParts). */
export function mountCards() {
  store.subscribe(resultParts, renderStepCards);
}
