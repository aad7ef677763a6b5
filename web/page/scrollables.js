// A region that scrolls sideways (narrow screens) must be reachable from the keyboard.
import { whenIdle } from './app.js';
import { t } from './language.js';
const SCROLLERS = '.formula, .drill-eq, .recipe pre, .grid-wrap, .matrix-wrap, .table-scroll, #drill';
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

/** What markSideways and markScrollables read of `el`'s layout. */
function measure(el) {
  return {
    scrollWidth: el.scrollWidth,
    clientWidth: el.clientWidth,
    scrollLeft: el.scrollLeft,
    scrollHeight: el.scrollHeight,
    clientHeight: el.clientHeight,
  };
}

/** A sideways scroller shows that it scrolls (class "scrolls") until it is scrolled to its end ("at-end"). */
function markSideways(el, m = measure(el)) {
  const sideways = m.scrollWidth > m.clientWidth + 1;
  el.classList.toggle('scrolls', sideways);
  el.classList.toggle('at-end', sideways && m.scrollLeft + m.clientWidth >= m.scrollWidth - 1);
}
document.addEventListener(
  'scroll',
  (e) => {
    if (e.target instanceof Element && /** @type {HTMLElement} */ (e.target).matches(SCROLLERS)) markSideways(e.target);
  },
  { capture: true, passive: true },
);

let cancelLater = null; // cancels the pending pass over regions the browser is not laying out yet

/**
 * Gives every scrolling region without a focusable child a tab stop (and takes it back). Regions
 * the browser skips for now (in a step card or panel with `content-visibility: auto` far from the
 * viewport, or not displayed) are marked once it is idle: measuring them would lay them out in the
 * middle of a frame. `skippedToo` marks them now as well (the page's first drawing, before it says
 * it is ready). `within`: only the regions inside that element, all of them now (a view redrawn
 * in the browser's idle time, after the pass of its update had marked the regions it replaced).
 */
export function markScrollables({ skippedToo = false, within = null } = {}) {
  if (within) {
    mark([...within.querySelectorAll(SCROLLERS)]);
    return;
  }
  const shown = [];
  const left = []; // skipped now, marked when idle whether or not skipped by then
  for (const el of document.querySelectorAll(SCROLLERS)) {
    const drawn = skippedToo || typeof el.checkVisibility !== 'function' || el.checkVisibility({ contentVisibilityAuto: true });
    (drawn ? shown : left).push(el);
  }
  mark(shown);
  cancelLater?.();
  cancelLater = null;
  if (!left.length) return;
  cancelLater = whenIdle(() => {
    cancelLater = null;
    mark(left.filter((el) => el.isConnected));
  }, 500);
}

function mark(elements) {
  // Every region measured first, then marked: a class or attribute written between two reads
  // would make the browser lay the page out again for the next read.
  const regions = elements.map((el) => ({ el, m: measure(el), reachable: el.querySelector(FOCUSABLE) !== null }));
  for (const { el, m, reachable } of regions) {
    const labelled = el.id === 'drill'; // an <aside> with its own heading, which scrolls down
    markSideways(el, m);
    const scrolls = m.scrollWidth > m.clientWidth + 1 || (labelled && m.scrollHeight > m.clientHeight + 1);
    if (scrolls && !reachable && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      if (!labelled) {
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', t(el.matches('pre') ? 'explorer.scrolls.numpy' : 'explorer.scrolls.formula'));
      }
      el.dataset.scrollMark = '1';
    } else if ((!scrolls || reachable) && el.dataset.scrollMark) {
      el.removeAttribute('tabindex');
      if (!labelled) {
        el.removeAttribute('role');
        el.removeAttribute('aria-label');
      }
      delete el.dataset.scrollMark;
    }
  }
}

// Web fonts (KaTeX's) that arrive after a drawing change how wide formulas are.
document.fonts?.addEventListener?.('loadingdone', () => markScrollables());
