// The learner's language: message catalogues (web/lib/locales/<lang>.json, one per language, keyed
// by message id, ICU MessageFormat with named placeholders), formatted by intl-messageformat
// (copied beside this file into dist/ by scripts/vendor-formatjs.mjs), English the default and the
// fallback. A view gets its words from a translator `t(id, values)`; it never concatenates words.
// Numbers: tables, matrices and the status line's measurements are formatted by the code (decimal
// point, ASCII minus) and passed in as text, so what a learner copies parses back; a number the
// catalogue formats (a plural's #) gets the language's plural rules and grouping but Latin digits
// (the -u-nu-latn extension), the same digits as the tables beside it.
import { texText } from './format.js';
import { IntlMessageFormat } from './intl-messageformat.js';
import en from './locales/en.json' with { type: 'json' };

/**
 * The languages there are catalogues for: code -> the language's own name (the menu's words).
 * @type {typeof import('./playground.js').LANGUAGES}
 */
export const LANGUAGES = {
  en: 'English',
  'zh-CN': '简体中文',
  es: 'Español',
  'pt-BR': 'Português (Brasil)',
  fr: 'Français',
  ja: '日本語',
  ko: '한국어',
  ar: 'العربية',
};
// Literal specifiers, so that bundlers and the site see each catalogue; only the chosen one is fetched.
const LOADERS = {
  en: async () => en,
  'zh-CN': () => import('./locales/zh-CN.json', { with: { type: 'json' } }),
  es: () => import('./locales/es.json', { with: { type: 'json' } }),
  'pt-BR': () => import('./locales/pt-BR.json', { with: { type: 'json' } }),
  fr: () => import('./locales/fr.json', { with: { type: 'json' } }),
  ja: () => import('./locales/ja.json', { with: { type: 'json' } }),
  ko: () => import('./locales/ko.json', { with: { type: 'json' } }),
  ar: () => import('./locales/ar.json', { with: { type: 'json' } }),
};

/**
 * 'rtl' for a language written right to left (Arabic), else 'ltr'.
 * @type {typeof import('./playground.js').dirOf}
 */
export const dirOf = (lang) => (lang === 'ar' ? 'rtl' : 'ltr');

/**
 * The language to show: the first of `asked` (a ?lang= value, or null) and then `preferred`
 * (navigator.languages) that has a catalogue, matched exactly, then by its language alone (zh,
 * zh-TW -> zh-CN; pt, pt-PT -> pt-BR; fr-CA -> fr); else 'en'.
 * @type {typeof import('./playground.js').negotiate}
 */
export function negotiate(asked, preferred = []) {
  const codes = Object.keys(LANGUAGES);
  for (const tag of [asked, ...preferred]) {
    if (!tag) continue;
    const wanted = String(tag).toLowerCase().replace('_', '-');
    const exact = codes.find((c) => c.toLowerCase() === wanted);
    if (exact) return exact;
    const base = wanted.split('-')[0];
    const same = codes.find((c) => c.toLowerCase().split('-')[0] === base);
    if (same) return same;
  }
  return 'en';
}

/**
 * { id, values }: a message not yet formatted (the state keeps these; views format them).
 * @type {typeof import('./i18n.js').isMessage}
 */
export const isMessage = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.id === 'string';

/**
 * A translator for `lang` from its catalogue (`messages`) and English's: `t(id, values)` is the
 * message formatted (a string; an array when a value is a function, for rich-text tags such as
 * <explorer>…</explorer>); a value that is itself a message ({ id, values }) is formatted first. A
 * message missing from the catalogue is English's. Also `t.lang`, `t.dir`, `t.has(id)`,
 * `t.message({ id, values })` and `t.list(items)` (the language's "a, b and c").
 * @type {typeof import('./i18n.js').createTranslator}
 */
export function createTranslator(lang, messages = en) {
  const cache = new Map();
  const compiled = (id) => {
    if (!cache.has(id)) {
      const own = id.startsWith('@') ? undefined : messages[id];
      const source = typeof own === 'string' ? own : en[id];
      if (typeof source !== 'string' || id.startsWith('@')) throw new Error(`i18n: no message "${id}" in English's catalogue`);
      cache.set(id, new IntlMessageFormat(source, `${typeof own === 'string' ? lang : 'en'}-u-nu-latn`));
    }
    return cache.get(id);
  };
  /** @type {any} */
  const t = (id, values = {}) =>
    compiled(id).format(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, isMessage(v) ? t(v.id, v.values) : v])));
  t.lang = lang;
  t.dir = dirOf(lang);
  t.has = (id) => !id.startsWith('@') && (Object.hasOwn(messages, id) || Object.hasOwn(en, id));
  t.message = (m) => t(m.id, m.values);
  const lists = new Intl.ListFormat(lang, { type: 'conjunction' });
  t.list = (items) => lists.format(items);
  return t;
}

/** English's translator: the state's English text (the API's and the CLI's), and the fallback. */
export const english = createTranslator('en', en);

/**
 * A step's caption in `t`'s language: its `title_id`'s message, else its own `title` (a step the
 * core did not name, such as a walkthrough's matrix).
 * @type {typeof import('./i18n.js').stepTitle}
 */
export const stepTitle = (step, t = english) => (step.title_id && t.has(step.title_id) ? t(step.title_id) : step.title);

// A formula's word as the core writes it, the same in TeX (inside \text{}) and in plain text.
const FORMULA_WORD = /@\{(formula\.[A-Za-z0-9_.]+)\}/g;

/**
 * A formula template with its words in `t`'s language: each placeholder `@{formula.<id>}` the core
 * writes (cpp/steps.cpp, cpp/explain.cpp) becomes the message, TeX-escaped when `tex` (the words
 * sit inside \text{}), as it is in plain text. The symbols and numbers around it are kept.
 * @type {typeof import('./i18n.js').fillFormula}
 */
export function fillFormula(template, t = english, tex = true) {
  if (!template.includes('@{')) return template;
  return template.replace(FORMULA_WORD, (_, id) => {
    const word = /** @type {string} */ (t(id));
    return tex ? texText(word) : word;
  });
}

/**
 * A formula's template from its English TeX (a student's paper holds its steps' TeX in English):
 * the words of each \\text{} that are formula.* messages of English's catalogue, whole words and
 * longest first, back to their placeholders; fillFormula then gives them in a language.
 * @type {typeof import('./i18n.js').formulaTemplate}
 */
export function formulaTemplate(tex) {
  englishWords ??= new RegExp(
    `(?<![A-Za-z@.{\\\\])(${Object.entries(en)
      .filter(([id]) => id.startsWith('formula.'))
      .map(([id, word]) => [id, texText(word)])
      .sort((a, b) => b[1].length - a[1].length)
      .map(([id, word]) => {
        wordIds.set(word, id);
        return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('|')})(?![A-Za-z])`,
    'g',
  );
  const words = /** @type {RegExp} */ (englishWords);
  return tex.replace(/\\text\{([^{}]*)\}/g, (group, inside) =>
    group.replace(inside, () => inside.replace(words, (word) => `@{${wordIds.get(word)}}`)),
  );
}
/** @type {RegExp | null} */
let englishWords = null;
const wordIds = new Map();

/**
 * A step's formula in `t`'s language, in TeX and in plain text: its templates (`formula_ids`, as the
 * core wrote them) filled; a step without them (built by the page) keeps its own `tex` and `text`.
 * @type {typeof import('./i18n.js').stepFormula}
 */
export function stepFormula(step, t = english) {
  const ids = step.formula_ids;
  if (!ids) return { tex: step.tex, text: step.text };
  return { tex: fillFormula(ids.tex, t, true), text: fillFormula(ids.text, t, false) };
}

/**
 * The warnings of a trace (or of decode's, tiles', the online softmax's, the recurrent form's
 * result) in `t`'s language: its `warning_messages` formatted, or, for a result read back from
 * JSON without them, its English `warnings`.
 * @type {typeof import('./i18n.js').warningsIn}
 */
export const warningsIn = (result, t = english) =>
  result.warning_messages?.map((m) => /** @type {string} */ (t.message(m))) ?? result.warnings ?? [];

/**
 * An example problem's title, note and source (presets.js) in `t`'s language: the catalogue's
 * `example.<id>.title` / `.note` / `.source`, else the preset's own English words.
 * @type {typeof import('./i18n.js').exampleWords}
 */
export function exampleWords(preset, t = english) {
  const own = (/** @type {string} */ part, /** @type {string | undefined} */ english) =>
    english && t.has(`example.${preset.id}.${part}`) ? /** @type {string} */ (t(`example.${preset.id}.${part}`)) : english;
  return {
    title: /** @type {string} */ (own('title', preset.title)),
    note: own('note', preset.note),
    source: own('source', preset.source),
  };
}

/**
 * A worked calculation's words in `t`'s language (engine.explain()'s `text_id` and `params`, and
 * its terms' `caption_id`, `caption_params` and `header_ids`: the core names the messages, the
 * catalogue has the words). The parameter `hidden`, what hid the key ("causal_window", "none"), is
 * the message explain.hidden; a header that is a symbol ("q", "x̂") is kept as written. The text
 * keeps the placeholders a view fills (`@N`, `@query`, `@key`, `@token`: export.js fillExplanation).
 * `lines`: the derivation's TeX with its words in the language (`line_ids`, the core's templates,
 * filled by fillFormula; an explanation without them keeps its `lines`).
 * @type {typeof import('./i18n.js').explanationWords}
 */
export function explanationWords(e, t = english) {
  /** @type {Record<string, string | { id: string, values: Record<string, string> }>} */
  const values = { ...e.params };
  if (typeof e.params.hidden === 'string') values.hidden = { id: 'explain.hidden', values: { by: e.params.hidden } };
  const terms = e.terms
    ? {
        caption: /** @type {string} */ (t(e.terms.caption_id, e.terms.caption_params)),
        headers: e.terms.header_ids.map((h) => (h.startsWith('explain.term.') ? /** @type {string} */ (t(h)) : h)),
      }
    : null;
  const lines = (e.line_ids ?? e.lines ?? []).map((line) => fillFormula(line, t));
  return { text: /** @type {string} */ (t(e.text_id, values)), lines, terms };
}

/**
 * An error's message in `t`'s language: the core's input errors (and runAll's "problem 2 of 3: …")
 * carry a message id and its values (`message_id`, `values`: the catalogues' "error.*"), formatted
 * here; any other error (one not yet converted, a JavaScript check's) says its own English
 * `message`. The API's and the CLI's `error.message` is this in English.
 * @type {typeof import('./i18n.js').errorWords}
 */
export function errorWords(error, t = english) {
  if (error?.message_id && t.has(error.message_id)) return String(t(error.message_id, /** @type {any} */ (error.values)));
  return error?.message ?? String(error);
}

/**
 * The id under `prefix` whose English message is `text`, or null: words stored in English (a
 * student's paper holds its steps' English captions) read back as a message to show in a language.
 * @type {typeof import('./i18n.js').englishId}
 */
export function englishId(text, prefix) {
  for (const [id, message] of Object.entries(en)) if (id.startsWith(prefix) && message === text) return id;
  return null;
}

/**
 * The catalogue of `lang` (English's for 'en' or a code without one).
 * @type {typeof import('./i18n.js').loadCatalogue}
 */
export async function loadCatalogue(lang) {
  const loaded = await (LOADERS[lang] ?? LOADERS.en)();
  return loaded.default ?? loaded;
}

/**
 * The translator for `lang`: its catalogue loaded (only it: English's is here already).
 * @type {typeof import('./playground.js').loadTranslator}
 */
export async function loadTranslator(lang) {
  const code = Object.hasOwn(LANGUAGES, lang) ? lang : 'en';
  return code === 'en' ? english : createTranslator(code, await loadCatalogue(code));
}

// Inline markup a catalogue's message may hold as rich-text tags (<sub>k</sub>, <code>…</code>).
const INLINE_TAGS = ['sub', 'sup', 'code', 'strong', 'em', 'kbd'];

/**
 * Writes the language's words into a page's static HTML (or part of it): an element's
 * `data-i18n="id"` gets the message as its text (its rich-text tags as those elements; controls
 * inside it, such as a label's checkbox, kept before it), `data-i18n-aria-label`,
 * `data-i18n-placeholder` and `data-i18n-title` set those attributes, and `<title>` the document's
 * title. `values`: per message id, the values of its placeholders (a function for a tag of its own).
 * @type {typeof import('./i18n.js').translateDocument}
 */
export function translateDocument(root, t, values = {}) {
  const doc = /** @type {Document} */ (root.ownerDocument ?? root);
  const rich = Object.fromEntries(
    INLINE_TAGS.map((tag) => [
      tag,
      (/** @type {(string | Node)[]} */ chunks) => {
        const el = doc.createElement(tag);
        el.append(...chunks);
        return el;
      },
    ]),
  );
  for (const node of root.querySelectorAll('[data-i18n]')) {
    const id = /** @type {HTMLElement} */ (node).dataset.i18n ?? '';
    const parts = [t(id, { ...rich, ...values[id] })].flat();
    if (node.localName === 'title') {
      doc.title = parts.join('');
      continue;
    }
    // Kept: controls and empty marks (a label's checkbox, a fold arrow); text is the message's.
    const kept = [...node.children].filter((c) => c.matches('input, select, textarea') || !c.textContent?.trim());
    const gap = kept.length && /^\s/.test(kept[kept.length - 1].nextSibling?.textContent ?? '') ? [' '] : [];
    node.replaceChildren(...kept, ...gap, ...parts);
  }
  for (const attr of ['aria-label', 'placeholder', 'title']) {
    for (const node of root.querySelectorAll(`[data-i18n-${attr}]`))
      node.setAttribute(attr, t(node.getAttribute(`data-i18n-${attr}`) ?? ''));
  }
}

/**
 * A language menu on `select`: each language in its own words, `t`'s chosen; choosing one reloads
 * the page with ?lang= (the hash, which holds the page's state, is kept).
 * @type {typeof import('./i18n.js').mountLanguageMenu}
 */
export function mountLanguageMenu(select, t) {
  const doc = select.ownerDocument;
  select.replaceChildren(
    ...Object.entries(LANGUAGES).map(([code, name]) =>
      Object.assign(doc.createElement('option'), { value: code, textContent: name, lang: code, selected: code === t.lang }),
    ),
  );
  select.addEventListener('change', () => {
    const url = new URL(doc.location.href);
    url.searchParams.set('lang', select.value);
    doc.location.assign(url.href);
  });
}

/**
 * `href` with ?lang= for a language other than English (links between the pages keep the language).
 * @type {typeof import('./i18n.js').withLang}
 */
export function withLang(href, lang) {
  if (lang === 'en') return href;
  const [path, hash = ''] = href.split('#');
  return `${path}${path.includes('?') ? '&' : '?'}lang=${encodeURIComponent(lang)}${hash ? `#${hash}` : ''}`;
}
