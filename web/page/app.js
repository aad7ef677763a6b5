// What the page's modules share: the engine, and reading the store's page state and last result.
// Nothing writes them here: state changes are actions dispatched to the store (store.js).
import { store } from './store.js';

export const $ = (id) => document.getElementById(id);

export const app = {
  /** The package's engine (loadAttention), once loaded. */
  engine: null,
  /** The page state (state.js), frozen: change it with an action (actions.js). */
  get state() { return store.get().state; },
  /** The last problem that computed: { trace, problem, ctx, steps }, or null. */
  get result() { return store.get().result; },
};

const written = new WeakMap();
/**
 * Sets an element's HTML unless it is what this last wrote there: a list rebuilt after every
 * edit (the share panel's) keeps its nodes, and the browser its layout, when nothing changed.
 */
export function writeHtml(el, html) {
  if (written.get(el) === html) return;
  written.set(el, html);
  el.innerHTML = html;
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
  if (!el || typeof IntersectionObserver === 'undefined') { draw(); return; }
  seen.observer ??= new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) { seen.near.delete(e.target); continue; }
      seen.near.add(e.target);
      const pending = seen.pending.get(e.target);
      seen.pending.delete(e.target);
      pending?.();
    }
  }, { rootMargin: '600px 0px' });
  seen.observer.observe(el); // again is a no-op; the first report comes after the next frame
  if (seen.near.has(el)) { seen.pending.delete(el); draw(); } else seen.pending.set(el, draw);
}
