// HTML built from templates that escape by default: html`<p>${text}</p>` escapes `text`, an html``
// inside another goes in as it is, so markup nests without being escaped twice. The page, the web
// component and the step tables write every innerHTML with it (setHtml), and eslint
// (eslint.config.js) fails on the old way: a template literal or a concatenation into innerHTML.

const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const SPECIAL = /[&<>"']/;

/** Text made safe inside HTML (an element's text or a quoted attribute): & < > " ' escaped. */
export function escapeHtml(s) {
  const text = String(s);
  // Most text (numbers, token names) has nothing to escape: no new string then.
  return SPECIAL.test(text) ? text.replace(/[&<>"']/g, (c) => ENTITIES[c]) : text;
}

// Only html`` and raw() make an Html: `new Html(...)` from elsewhere throws.
const MADE_HERE = Symbol('html.js');

/** Markup that is safe to insert: made by html`` (its values escaped) or raw() (trusted). */
export class Html {
  #markup;

  /**
   * @param {symbol} token
   * @param {string} markup
   */
  constructor(token, markup) {
    if (token !== MADE_HERE) throw new TypeError('an Html is made by html`...` or raw(markup), not by new Html()');
    this.#markup = markup;
  }

  /** The markup. */
  toString() {
    return this.#markup;
  }
}

/**
 * One interpolated value as markup: an Html as it is, an array item by item, null, undefined and
 * false as nothing, anything else as its String() escaped. So `${cond && html`...`}` is the
 * conditional part, and a boolean written as text (aria-pressed="${String(pressed)}") is String()ed.
 * @param {unknown} value
 * @returns {string}
 */
function markupOf(value) {
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  if (value instanceof Html) return value.toString();
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value) out += markupOf(item);
    return out;
  }
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/**
 * The tag: html`<li>${name}</li>` is an Html whose `name` is escaped (see markupOf for each kind of
 * value), so `items.map((i) => html`<li>${i}</li>`)` can go inside another html``.
 * @param {TemplateStringsArray} strings
 * @param {...unknown} values
 * @returns {Html}
 */
export function html(strings, ...values) {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += markupOf(values[i]) + strings[i + 1];
  return new Html(MADE_HERE, out);
}

/**
 * Markup inserted without escaping. Only for markup that is trusted because our own code made it
 * (KaTeX's output, an SVG path the code drew); each use says why it is trusted.
 * @param {string} markup
 * @returns {Html}
 */
export function raw(markup) {
  return new Html(MADE_HERE, String(markup));
}

/**
 * The one way to set an element's markup: `setHtml(el, html`...`)`. A plain string throws, so no
 * unescaped text reaches innerHTML by mistake.
 * @param {Element | ShadowRoot} el
 * @param {Html} markup
 */
export function setHtml(el, markup) {
  if (!(markup instanceof Html)) throw new TypeError('setHtml takes an html`...` template (or raw(markup)), not a string');
  el.innerHTML = markup.toString();
}
