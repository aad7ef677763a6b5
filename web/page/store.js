// The explorer page's one store (the package's createStore, as the playground's): the page state,
// what is on screen but not in the link, and the last result, changed only by actions.js. However
// many actions one event dispatches, each subscribed view and effect redraws at most once, in the
// order main.js mounted them.
import { createStore } from 'attention-explorer/store';
import { initialPage, load } from './actions.js';
import { exerciseHiddenSteps } from './state.js';

// The redraw runs at the end of the task that dispatched (a microtask), not at the next animation
// frame as the playground's: what an event changed is in the DOM when the event returns, which the
// page's handlers that move the focus or read layout after an action, and its browser tests, rely
// on. An edit is drawn in the same frame either way.
export const store = createStore(initialPage(), { schedule: queueMicrotask });

/**
 * What the results are drawn from: the step cards and every view drawn with them (pipeline,
 * glance, heads, stepper, practice, the share panel), each subscribed to these same parts so that
 * it redraws with the cards (their labels, result.ctx) and only then.
 */
export function resultParts(page) {
  const { state, ui } = page;
  return [page.result, state.tokens, state.decimals, state.hide, state.collapsed, state.exercise, state.options, ui.revealed, ui.choosing];
}

/** Ids of the steps not shown: hidden by the link (?hide=step:...) or by an exercise. */
export function hiddenStepIds(page) {
  return [...(page.state.hide.steps ?? []), ...exerciseHiddenSteps(page.state, page.ui.revealed)];
}

/** The open cell's parts: the results' (it is marked in the cards they drew) and the cell itself. */
export const selectionParts = (page) => [...resultParts(page), page.state.open];

/** A whole new state (a link, an example, an exercise, a lesson), drawn now: its caller may scroll to it. */
export function loadState(state) {
  store.dispatch(load, state);
  store.flush();
}
