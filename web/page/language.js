// The page's language: ?lang= first, then the browser's languages, negotiated against the
// catalogues (web/lib/locales); English, the HTML's own, by default. The static words of the page
// (index.html's data-i18n) are written in it once the page's markup is in place; the language menu
// reloads with ?lang=. `t` is the translator views format their words with.
import { english, loadTranslator, mountLanguageMenu, negotiate, translateDocument, withLang } from 'attention-explorer/i18n';
import { html } from 'attention-explorer/html';
import { $ } from './app.js';

/** The page's translator (English's until `chooseLanguage` resolved). */
export let t = english;

// A message's rich-text tags as those elements (the values inside them escaped like other words).
const TAGS = {
  sub: (/** @type {unknown[]} */ chunks) => html`<sub>${chunks}</sub>`,
  strong: (/** @type {unknown[]} */ chunks) => html`<strong>${chunks}</strong>`,
  code: (/** @type {unknown[]} */ chunks) => html`<code>${chunks}</code>`,
  em: (/** @type {unknown[]} */ chunks) => html`<em>${chunks}</em>`,
};

/** A message with <sub>, <strong>, <code> and <em> as those elements, for an html`` template. */
export const rich = (/** @type {string} */ id, /** @type {Record<string, unknown>} */ values = {}) => t(id, { ...TAGS, ...values });

/** Loads the catalogue of the language the address or the browser asks for. */
export async function chooseLanguage() {
  try {
    t = await loadTranslator(negotiate(new URLSearchParams(location.search).get('lang'), navigator.languages));
  } catch {
    // a catalogue that could not be fetched: the page stays in English, as the HTML is
  }
  return t;
}

/** The page's static words, its lang and dir, the menu and the link to the playground, in `t`'s language. */
export function showLanguage() {
  document.documentElement.lang = t.lang;
  document.documentElement.dir = t.dir;
  if (t.lang !== 'en') translateDocument(document, t); // the HTML is English already
  const playground = /** @type {HTMLAnchorElement | null} */ (document.querySelector('.site-nav a[href^="playground.html"]'));
  if (playground) playground.href = withLang('playground.html', t.lang);
  mountLanguageMenu($('lang-menu'), t);
}
