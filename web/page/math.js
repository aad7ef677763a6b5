// KaTeX, served from the site itself (vendor/katex/), loaded after the page's first steps are on
// screen: its script and first render cost more than computing and drawing the numbers. Until it
// is there, a formula is drawn as its TeX source in a placeholder, typeset once KaTeX arrives
// (those on screen first). If KaTeX fails to load, formulas stay as their TeX source so the page
// still works.
import { html, raw } from 'attention-explorer/html';

let katex = null;
let loading = null;
const cache = new Map();

/** Inserts a stylesheet or script of vendor/katex/; resolves when it has loaded. */
function vendorFile(tag, name) {
  return new Promise((resolve, reject) => {
    const el = document.createElement(tag);
    // vite-ignore: a file of the site's, not an asset for vite to bundle or look for.
    const url = new URL(/* @vite-ignore */ `./vendor/katex/${name}`, import.meta.url).href;
    if (tag === 'link') {
      el.rel = 'stylesheet';
      el.href = url;
    } else {
      el.src = url;
      el.async = true;
    }
    el.onload = resolve;
    el.onerror = () => reject(new Error(`${name} did not load`));
    document.head.appendChild(el);
  });
}

/**
 * Loads KaTeX once (its stylesheet, then fonts as formulas use them, load without blocking
 * anything drawn); resolves true when formulas can be typeset. The minified classic script is
 * half the size of KaTeX's ES module gzipped; it defines `window.katex`.
 */
export function loadMath() {
  loading ??= (async () => {
    try {
      await Promise.all([vendorFile('link', 'katex.min.css'), window.katex ? null : vendorFile('script', 'katex.min.js')]);
      katex = window.katex ?? null;
    } catch {
      katex = null;
    }
    return katex !== null;
  })();
  return loading;
}

function render(texSource, display) {
  try {
    // Trusted: KaTeX's own markup (it escapes the source's text, and its default `trust: false`
    // refuses \href, \url and \html* commands).
    return raw(katex.renderToString(texSource, { displayMode: display, throwOnError: false, strict: 'ignore', output: 'htmlAndMathml' }));
  } catch {
    return html`<code>${texSource}</code>`;
  }
}

/**
 * HTML for a TeX formula (cached: the same formula is rendered once). Before KaTeX has loaded,
 * a placeholder with the TeX source, which typesetPending() replaces.
 * @returns {import('attention-explorer/html').Html}
 */
export function mathHtml(texSource, display = false) {
  if (!katex) return html`<code class="tex-pending" data-display="${display ? 1 : 0}">${texSource}</code>`;
  const key = (display ? 'D' : 'I') + texSource;
  let markup = cache.get(key);
  if (markup === undefined) {
    markup = render(texSource, display);
    if (cache.size > 2000) cache.clear();
    cache.set(key, markup);
  }
  return markup;
}

function typeset(el) {
  if (!el.isConnected || !el.classList.contains('tex-pending')) return;
  el.outerHTML = String(mathHtml(el.textContent, el.dataset.display === '1'));
}

/**
 * Typesets the placeholders drawn before KaTeX loaded: those in view as they come into view
 * (IntersectionObserver), all others a few at a time between frames. Resolves when none is left
 * (at once if KaTeX could not be loaded: the TeX source stays).
 */
export async function typesetPending() {
  if (!(await loadMath())) return;
  const visible = new IntersectionObserver((entries) => {
    for (const e of entries)
      if (e.isIntersecting) {
        typeset(e.target);
        visible.unobserve(e.target);
      }
  });
  const pending = () => [...document.querySelectorAll('.tex-pending')];
  for (const el of pending()) visible.observe(el);
  await new Promise((/** @type {(value?: unknown) => void} */ done) => {
    const chunk = () => {
      const end = performance.now() + 8;
      const left = pending();
      for (const el of left) {
        if (performance.now() > end) break;
        typeset(el);
      }
      if (document.querySelector('.tex-pending')) setTimeout(chunk, 0);
      else done();
    };
    // The observer's first callback (the formulas on screen) comes with the next frame.
    requestAnimationFrame(() => setTimeout(chunk, 0));
  });
  visible.disconnect();
}
