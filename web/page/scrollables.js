// A region that scrolls sideways (narrow screens) must be reachable from the keyboard.
const SCROLLERS = '.formula, .drill-eq, .recipe pre, .grid-wrap, .matrix-wrap, .table-scroll, #drill';
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

/** A sideways scroller shows that it scrolls (class "scrolls") until it is scrolled to its end ("at-end"). */
function markSideways(el) {
  const sideways = el.scrollWidth > el.clientWidth + 1;
  el.classList.toggle('scrolls', sideways);
  el.classList.toggle('at-end', sideways && el.scrollLeft + el.clientWidth >= el.scrollWidth - 1);
}
document.addEventListener('scroll', (e) => {
  if (e.target instanceof Element && e.target.matches(SCROLLERS)) markSideways(e.target);
}, { capture: true, passive: true });

/** Gives every scrolling region without a focusable child a tab stop (and takes it back). */
export function markScrollables() {
  for (const el of document.querySelectorAll(SCROLLERS)) {
    const labelled = el.id === 'drill'; // an <aside> with its own heading, which scrolls down
    markSideways(el);
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

// Web fonts (KaTeX's) that arrive after a drawing change how wide formulas are.
document.fonts?.addEventListener?.('loadingdone', () => markScrollables());
