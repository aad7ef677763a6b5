// KaTeX, served from the site itself (vendor/katex/). If it fails to load, formulas fall back to
// their TeX source so the page still works.
import { escapeHtml } from './format.js';

let katex = null;
const cache = new Map();

export async function loadMath() {
  try {
    katex = (await import('./vendor/katex/katex.mjs')).default;
  } catch {
    katex = null;
  }
  return katex !== null;
}

/** HTML for a TeX formula (cached: the same formula is rendered once). */
export function mathHtml(texSource, display = false) {
  const key = (display ? 'D' : 'I') + texSource;
  let html = cache.get(key);
  if (html === undefined) {
    if (katex) {
      try {
        html = katex.renderToString(texSource, { displayMode: display, throwOnError: false, strict: 'ignore', output: 'htmlAndMathml' });
      } catch {
        html = `<code>${escapeHtml(texSource)}</code>`;
      }
    } else {
      html = `<code>${escapeHtml(texSource)}</code>`;
    }
    if (cache.size > 2000) cache.clear();
    cache.set(key, html);
  }
  return html;
}
