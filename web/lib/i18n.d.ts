// attention-explorer/i18n: the learner's language (web/lib/i18n.js; docs/api.md "Languages").
// Hand-written like the package's other declarations; i18n.js is held to it by `@type {typeof
// import('./i18n.js').name}` and tests/js/declarations.test.mjs checks the names.
import type { Message, Translator } from './playground.js';

export type { Message, Translator } from './playground.js';
export { LANGUAGES, dirOf, negotiate, loadTranslator } from './playground.js';

/** Whether a value is a message not yet formatted ({ id, values }). */
export function isMessage(value: any): boolean;
/**
 * A translator for `lang` from its catalogue (`messages`: id -> ICU MessageFormat text; English's
 * by default). A message the catalogue lacks is English's; an id English lacks throws.
 */
export function createTranslator(lang: string, messages?: Readonly<Record<string, unknown>>): Translator;
/** English's translator: the API's and the CLI's English, and every language's fallback. */
export const english: Translator;
/** The catalogue of `lang` (English's for 'en' or a code without one). */
export function loadCatalogue(lang: string): Promise<Record<string, unknown>>;

/** A step's caption in `t`'s language (its `title_id`), else its own `title`. */
export function stepTitle(step: { title_id?: string; title?: string }, t?: Translator): string | undefined;
/** A formula template (`@{formula.<id>}` words, as the core writes them) filled in `t`'s language; TeX-escaped when `tex` (default). */
export function fillFormula(template: string, t?: Translator, tex?: boolean): string;
/** A formula's template from its English TeX (a student's paper's), for fillFormula. */
export function formulaTemplate(tex: string): string;
/** A step's formula in `t`'s language, in TeX and in plain text. */
export function stepFormula(
  step: { tex: string; text: string; formula_ids?: { tex: string; text: string } | null },
  t?: Translator,
): { tex: string; text: string };
/** A result's warnings (a trace's, decode's, tiles', the online softmax's, the recurrent form's) in `t`'s language. */
export function warningsIn(result: { warnings?: string[]; warning_messages?: Message[] }, t?: Translator): string[];
/** An example problem's title, note and source in `t`'s language (else the preset's English). */
export function exampleWords(
  preset: { id: string; title: string; note?: string; source?: string },
  t?: Translator,
): { title: string; note: string | undefined; source: string | undefined };
/** A worked calculation's words (engine.explain()'s ids and params) in `t`'s language. */
export function explanationWords(
  e: {
    text_id: string;
    params: Record<string, string>;
    lines?: string[];
    line_ids?: string[];
    terms?: { caption_id: string; caption_params: Record<string, string>; header_ids: string[] } | null;
  },
  t?: Translator,
): { text: string; lines: string[]; terms: { caption: string; headers: string[] } | null };
/** An error's message in `t`'s language (its `message_id` and `values`), else its own English `message`. */
export function errorWords(
  error: { message?: string; message_id?: string; values?: Record<string, unknown> } | null | undefined,
  t?: Translator,
): string;
/** The id under `prefix` whose English message is `text`, or null. */
export function englishId(text: string, prefix: string): string | null;

/** Writes `t`'s words into a page's static HTML: `data-i18n`, `data-i18n-aria-label`, `-placeholder`, `-title`. */
export function translateDocument(root: ParentNode, t: Translator, values?: Record<string, Record<string, unknown>>): void;
/** A language menu on `select`; choosing reloads the page with ?lang= (the hash kept). */
export function mountLanguageMenu(select: HTMLSelectElement, t: Translator): void;
/** `href` with ?lang= for a language other than English. */
export function withLang(href: string, lang: string): string;
