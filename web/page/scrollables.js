// A region that scrolls sideways (narrow screens) must be reachable from the keyboard.
const SCROLLERS = '.formula, .drill-eq, .recipe pre, .grid-wrap, .matrix-wrap, .table-scroll, #drill';
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

/** Gives every scrolling region without a focusable child a tab stop (and takes it back). */
export function markScrollables() {
  for (const el of document.querySelectorAll(SCROLLERS)) {
    const labelled = el.id === 'drill'; // an <aside> with its own heading, which scrolls down
    const scrolls = el.scrollWidth > el.clientWidth + 1 || (labelled && el.scrollHeight > el.clientHeight + 1);
    const reachable = el.querySelector(FOCUSABLE) !== null;
    if (scrolls && !reachable && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      if (!labelled) {
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', el.matches('pre') ? 'numpy lines (scrolls sideways)' : 'formula (scrolls sideways)');
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
