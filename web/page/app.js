// What the page's modules share: the engine, and reading the store's page state and last result.
// Nothing writes them here: state changes are actions dispatched to the store (store.js).
import { setHtml } from 'attention-explorer/html';
import { store } from './store.js';

/**
 * The page's elements that are more than an HTMLElement (form controls, details, buttons), by id,
 * so that `$('opt-heads').value` type-checks: those of web/page's HTML files and of the templates
 * in its modules (tests/js/page-elements.test.mjs keeps this list equal to their tags).
 * @typedef {{
 *   'answer-number': HTMLInputElement,
 *   'answer-text': HTMLTextAreaElement,
 *   'app-pristine': HTMLTemplateElement,
 *   'copy-embed': HTMLButtonElement,
 *   'copy-link': HTMLButtonElement,
 *   'copy-teacher-link': HTMLButtonElement,
 *   'embed-height': HTMLInputElement,
 *   'embed-options': HTMLDetailsElement,
 *   'embed-preview-toggle': HTMLButtonElement,
 *   'embed-snippet': HTMLTextAreaElement,
 *   'embed-width': HTMLSelectElement,
 *   'ex-cells': HTMLInputElement,
 *   'ex-check': HTMLButtonElement,
 *   'ex-choose': HTMLButtonElement,
 *   'ex-iframe': HTMLIFrameElement,
 *   'ex-kind': HTMLSelectElement,
 *   'ex-leave': HTMLButtonElement,
 *   'ex-new': HTMLButtonElement,
 *   'ex-reveal': HTMLButtonElement,
 *   'ex-seed': HTMLInputElement,
 *   'ex-start': HTMLButtonElement,
 *   'ex-student-link': HTMLButtonElement,
 *   'ex-tol': HTMLInputElement,
 *   'exercise-setup': HTMLDetailsElement,
 *   'export-preview': HTMLTextAreaElement,
 *   'export-what': HTMLSelectElement,
 *   'lesson-file': HTMLInputElement,
 *   'lesson-name': HTMLInputElement,
 *   'lesson-open': HTMLButtonElement,
 *   'lesson-save': HTMLButtonElement,
 *   'open-full': HTMLAnchorElement,
 *   'opt-alibi': HTMLInputElement,
 *   'opt-attention': HTMLSelectElement,
 *   'opt-cache': HTMLInputElement,
 *   'opt-causal': HTMLInputElement,
 *   'opt-decay': HTMLInputElement,
 *   'opt-decimals': HTMLInputElement,
 *   'opt-diff-norm': HTMLInputElement,
 *   'opt-feature-map': HTMLSelectElement,
 *   'opt-fully-masked': HTMLSelectElement,
 *   'opt-gate': HTMLSelectElement,
 *   'opt-gate-bias': HTMLInputElement,
 *   'opt-heads': HTMLInputElement,
 *   'opt-kvheads': HTMLInputElement,
 *   'opt-lambda': HTMLInputElement,
 *   'opt-lambda-init': HTMLInputElement,
 *   'opt-latent-queries': HTMLSelectElement,
 *   'opt-latent-rope': HTMLInputElement,
 *   'opt-layout': HTMLSelectElement,
 *   'opt-mask': HTMLSelectElement,
 *   'opt-mask-fill': HTMLInputElement,
 *   'opt-modern': HTMLDetailsElement,
 *   'opt-normalize': HTMLInputElement,
 *   'opt-positional': HTMLSelectElement,
 *   'opt-precision': HTMLSelectElement,
 *   'opt-qk-eps': HTMLInputElement,
 *   'opt-qk-gk': HTMLInputElement,
 *   'opt-qk-gq': HTMLInputElement,
 *   'opt-qk-norm': HTMLSelectElement,
 *   'opt-rope': HTMLSelectElement,
 *   'opt-rope-base': HTMLInputElement,
 *   'opt-rope-dims': HTMLInputElement,
 *   'opt-scale': HTMLSelectElement,
 *   'opt-scale-custom': HTMLInputElement,
 *   'opt-sigmoid-bias': HTMLInputElement,
 *   'opt-sink-logit': HTMLInputElement,
 *   'opt-sink-tokens': HTMLInputElement,
 *   'opt-softcap': HTMLInputElement,
 *   'opt-variants': HTMLDetailsElement,
 *   'opt-window-left': HTMLInputElement,
 *   'opt-window-right': HTMLInputElement,
 *   'pg-copy-link': HTMLButtonElement,
 *   'pg-explorer-link': HTMLAnchorElement,
 *   'pg-frame': HTMLIFrameElement,
 *   'pg-lang': HTMLSelectElement,
 *   'pg-load': HTMLInputElement,
 *   'pg-open-lesson': HTMLInputElement,
 *   'pg-save': HTMLButtonElement,
 *   'pg-save-lesson': HTMLButtonElement,
 *   'pr-block-k': HTMLInputElement,
 *   'pr-block-q': HTMLInputElement,
 *   'pr-chunk': HTMLInputElement,
 *   'pr-costs': HTMLTableElement,
 *   'pr-do-ones': HTMLButtonElement,
 *   'pr-next': HTMLButtonElement,
 *   'pr-precision': HTMLSelectElement,
 *   'pr-prev': HTMLButtonElement,
 *   'pr-row': HTMLInputElement,
 *   'pr-row-reset': HTMLButtonElement,
 *   'pr-subtract': HTMLInputElement,
 *   'practice-close': HTMLButtonElement,
 *   'practice-open': HTMLButtonElement,
 *   'lang-menu': HTMLSelectElement,
 *   'preset': HTMLSelectElement,
 *   'setup-fold': HTMLButtonElement,
 *   'status-timings': HTMLButtonElement,
 *   'step-all': HTMLButtonElement,
 *   'step-check': HTMLButtonElement,
 *   'step-mode': HTMLButtonElement,
 *   'step-next': HTMLButtonElement,
 *   'step-prev': HTMLButtonElement,
 *   'step-reveal': HTMLButtonElement,
 *   'stepper-answer': HTMLFormElement,
 *   'teacher': HTMLDetailsElement,
 *   'teacher-ask': HTMLInputElement,
 *   'teacher-col': HTMLInputElement,
 *   'teacher-kind': HTMLSelectElement,
 *   'teacher-row': HTMLInputElement,
 *   'teacher-say': HTMLTextAreaElement,
 *   'teacher-text': HTMLInputElement,
 *   'teacher-tol': HTMLInputElement,
 *   'to-problem': HTMLButtonElement,
 *   'tokens-k': HTMLInputElement,
 *   'tokens-n': HTMLInputElement,
 *   'tokens-q': HTMLInputElement,
 *   'use-bias': HTMLInputElement,
 *   'use-bo': HTMLInputElement,
 *   'use-wo': HTMLInputElement,
 * }} PageElements
 */

/**
 * An element of the page by id: its own element type for the ids of PageElements, else an
 * HTMLElement (null when absent, which the page's ids are not).
 * @template {string} K
 * @param {K} id
 * @returns {K extends keyof PageElements ? PageElements[K] : HTMLElement}
 */
export const $ = (id) => /** @type {any} */ (document.getElementById(id));

export const app = {
  /** The package's engine (loadAttention), once loaded. */
  engine: null,
  /** The page state (state.js), frozen: change it with an action (actions.js). */
  get state() {
    return store.get().state;
  },
  /** The last problem that computed: { trace, problem, ctx, steps }, or null. */
  get result() {
    return store.get().result;
  },
};

const written = new WeakMap();
/**
 * Sets an element's HTML unless it is what this last wrote there: a list rebuilt after every
 * edit (the share panel's) keeps its nodes, and the browser its layout, when nothing changed.
 * @param {Element} el
 * @param {import('attention-explorer/html').Html} markup an html`` (setHtml's)
 */
export function writeHtml(el, markup) {
  const text = String(markup);
  if (written.get(el) === text) return;
  setHtml(el, markup);
  written.set(el, text);
}

/**
 * Runs `fn` once the frame showing what is in the DOM now was presented: the task after the next
 * animation frame. Reading layout there costs nothing (the frame laid the page out), and what it
 * writes is drawn in the frame after.
 */
export function afterFrame(fn) {
  requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => fn();
    channel.port2.postMessage(null);
  });
}

/**
 * For asynchronous work whose result is stale once a later call has started (writing the link of
 * the state as it is now, reading a link from the address): `const started = latestOnly()`, then
 * per call `const current = started()` and, after each await, `if (!current()) return`.
 */
export function latestOnly() {
  let last = 0;
  return () => {
    const mine = ++last;
    return () => mine === last;
  };
}

/**
 * Runs `fn` once the browser is idle, or after `timeoutMs` at the latest (without
 * requestIdleCallback: after 50 ms). Returns a function that cancels it (a no-op once it ran).
 */
export function whenIdle(fn, timeoutMs) {
  if (typeof requestIdleCallback === 'function') {
    const handle = requestIdleCallback(fn, { timeout: timeoutMs });
    return () => cancelIdleCallback(handle);
  }
  const handle = setTimeout(fn, 50);
  return () => clearTimeout(handle);
}

// Views below the steps that need not be redrawn while they are off screen: drawn when they come
// within 600 px of it (the last redraw asked for wins).
const seen = { observer: null, near: new WeakSet(), pending: new WeakMap() };

/** Runs `draw` now if `el` is on screen or near it (or cannot be observed), else once it comes near. */
export function drawWhenSeen(el, draw) {
  if (!el || typeof IntersectionObserver === 'undefined') {
    draw();
    return;
  }
  seen.observer ??= new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) {
          seen.near.delete(e.target);
          continue;
        }
        seen.near.add(e.target);
        const pending = seen.pending.get(e.target);
        seen.pending.delete(e.target);
        pending?.();
      }
    },
    { rootMargin: '600px 0px' },
  );
  seen.observer.observe(el); // again is a no-op; the first report comes after the next frame
  if (seen.near.has(el)) {
    seen.pending.delete(el);
    draw();
  } else seen.pending.set(el, draw);
}
