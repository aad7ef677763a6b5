// <attention-explorer>: a live, pre-filled attention example for any HTML page.
//
//   <script type="module" src="node_modules/attention-explorer/dist/component.js"></script>
//   <attention-explorer preset="000" steps="scores,weights,output" editable="Q"></attention-explorer>
//
// The problem comes from `preset` (a preset id such as "000" or "seed-000"), `state` (the
// explorer's link state, "v2=..." or "v1=...", '#' optional) or a child
// <script type="application/json"> holding a problem (or { "problem": ..., "tokens": [...] }), or a
// lesson (lesson.js: the problem and a teacher's notes): `lesson="lesson.json"` (fetched, relative to
// the page) or a child <script type="application/json" slot="lesson">. A lesson's steps show the
// teacher's sentence, and a question hides its step's numbers until the reader answers (checked
// against the trace) or reveals them.
// Attributes: lang (a catalogue's code, i18n.js LANGUAGES: the element's words in that language,
// dir="rtl" for Arabic with its tables and formulas left to right; default: the browser's languages),
// steps (step ids to show; default all), inputs (input names to show; default all),
// editable (input names the reader may change; "all"; default none), decimals (default 4),
// heads (head numbers from 1 to show; default all), wasm-url (where attention.wasm is).
// Events: "change" (detail: { problem, trace }) after the reader edits a number; "ready"
// (detail: { problem, trace }) after the first computation; "error" (detail: { message }).
// Every element on the page shares one WebAssembly instance. Styles live in Shadow DOM. Formulas
// are plain text unless KaTeX is provided: AttentionExplorerElement.katex = katex.
// Inserted at any time it initialises itself; removed and inserted again it keeps its state. A host
// policy that forbids WebAssembly gets a message in the element that points to the iframe embed.
import { loadAttention, findPreset, presetProblem } from './index.js';
import { quoteToken } from './narrate.js';
import { english, errorWords, isMessage, loadTranslator, negotiate, stepFormula, warningsIn } from './i18n.js';
import { legendHtml, maskedPositions, stepTableHtml } from './step-table.js';
import { html, raw, setHtml } from './html.js';
import { positionsAxisLabels, problemContext, stepCaption } from './context.js';
import { formatNumber } from './format.js';
import { decodeStateString, stateToProblem } from './share.js';
import { checkAnswer, fetchLesson, lessonTraceMessage, readLesson, usableAnswer } from './lesson.js';
import { check, componentAttributesSchema, componentScriptSchema, problemSchema } from './formats.js';
import { showMessage } from './schema.js';
import { createStore } from './store.js';
import {
  answered,
  attributeSet,
  edited,
  failed,
  initialComponent,
  languageSet,
  loaded,
  problemSet,
  status,
  withCell,
} from './component-state.js';

let shared = null;

/**
 * The one engine every <attention-explorer> uses (loaded on first use).
 * @type {typeof import('./component.js').sharedEngine}
 */
export function sharedEngine(options = {}) {
  if (!shared) {
    shared = loadAttention(options);
    shared.catch(() => {
      shared = null;
    }); // a failed load may be retried (e.g. with wasm-url)
  }
  return shared;
}

// An editable table's fields are as wide as its longest number (table data-w: its characters),
// so that no number is cut mid-digit: a rule per width, since a host's CSP may refuse inline styles.
const INPUT_WIDTH_MAX = 24;
const INPUT_WIDTHS = Array.from({ length: INPUT_WIDTH_MAX - 5 }, (_, i) => `table[data-w="${i + 6}"] input { width: ${i + 7.5}ch; }`).join(
  '\n',
);

const CSS = `
:host { display: block; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1f24;
  background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 12px; max-width: 100%; overflow-x: auto; }
:host([hidden]) { display: none; }
[hidden] { display: none !important; }
* { box-sizing: border-box; }
.title { margin: 0 0 8px; font-size: 15px; font-weight: 600; }
.status { margin: 4px 0; color: #57606a; font-size: 13px; }
.error { color: #b3261e; font-weight: 500; }
.warning { color: #8a5a00; }
.row { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
section { margin: 0 0 12px; }
h3 { margin: 0 0 2px; font-size: 14px; font-weight: 600; }
h3 .shape { color: #57606a; font-weight: 400; font-size: 12px; margin-inline-start: 6px; }
.formula { margin: 2px 0 6px; color: #24292f; font-size: 14px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
th { font-weight: 500; color: #57606a; padding: 2px 6px; text-align: center; }
td { padding: 3px 7px; text-align: right; border: 1px solid #fff; min-width: 3.5em; }
td.neg-inf { color: #57606a; background: #eee; }
td.masked { color: #4b5563; background: #eceef1; }
.legend { margin: 2px 0 0; font-size: 12px; color: #57606a; }
.ramp { display: inline-block; width: 7em; height: 0.6em; border: 1px solid #d0d7de; border-radius: 3px; vertical-align: middle; }
input { width: 5.2em; font: inherit; font-size: 13px; text-align: right; padding: 2px 4px;
  border: 1px solid #8c959f; border-radius: 3px; font-variant-numeric: tabular-nums; }
${INPUT_WIDTHS}
input:focus { outline: 2px solid #0969da; outline-offset: 0; }
input[aria-invalid="true"] { border-color: #b3261e; background: #fff0ef; }
.inputs { margin-bottom: 10px; padding-bottom: 8px; border-bottom: 1px solid #eaeef2; }
.say { margin: 2px 0 6px; max-width: 40em; }
.ask { margin: 2px 0 6px; max-width: 40em; }
.ask fieldset { border: 0; padding: 0; margin: 4px 0; }
.ask label { margin-inline-end: 10px; white-space: nowrap; }
.ask input[type="text"] { width: 8em; text-align: start; }
.ask textarea { width: 100%; font: inherit; }
button { font: inherit; font-size: 13px; padding: 3px 10px; border: 1px solid #0969da; border-radius: 5px; background: #0969da; color: #fff; cursor: pointer; }
.verdict { margin: 2px 0 6px; padding: 2px 8px; border-inline-start: 3px solid #8c959f; max-width: 40em; }
.verdict.right { border-color: #1a7f37; background: #eaf7ee; }
.verdict.wrong { border-color: #b3261e; background: #fff0ef; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

let sheet = null;
function styles(root) {
  // A constructed stylesheet: no inline <style>, so it works under a strict style-src too.
  try {
    sheet ??= new CSSStyleSheet();
    if (sheet.cssRules.length === 0) sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } catch {
    const style = document.createElement('style');
    style.textContent = CSS;
    root.appendChild(style);
  }
}

/** Whether loading failed because the host page's Content-Security-Policy forbids WebAssembly. */
function blockedByPolicy(error) {
  for (let e = error; e; e = e.cause) {
    if (/Content.Security.Policy|wasm-unsafe-eval|wasm-eval|unsafe-eval|\bCSP\b/i.test(e.message ?? '')) return true;
  }
  return false;
}

// The element compiles WebAssembly in the host page, so the host's policy decides; an iframe
// runs under the explorer site's own policy instead.
// (component.csp: the code's words, such as 'wasm-unsafe-eval', are passed in as they are written.)
const CSP_VALUES = {
  policy: 'Content-Security-Policy',
  directive: 'script-src',
  source: "'wasm-unsafe-eval'",
  iframe: '<iframe>',
  doc: 'docs/embedding.md',
};

const list = (v) =>
  v == null
    ? null
    : String(v)
        .split(/[\s,]+/)
        .filter(Boolean);
// The attributes' schemas (an object schema's fields; a list's schema has its item's).
const ATTRIBUTES = /** @type {Record<string, import('./share.js').Schema & { item?: import('./share.js').Schema }>} */ (
  componentAttributesSchema.fields
);
const numberOr = (t) => (/^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t);
const cut = (t) => (t.length > 60 ? `${t.slice(0, 60)}…` : t);

/**
 * Attribute `name` (its text, or null when absent) read and checked against the component's
 * schema (formats.js): { value, note }. `value` is what the schema takes (null: absent or unusable,
 * so the default); a list keeps the words it takes. `note` says what was left out, or is null, in
 * `t`'s language (English by default; the values shown as written).
 * @type {typeof import('./component.js').readAttribute}
 */
export function readAttribute(name, text, t = english) {
  // A value is what the schema takes for `name`: ComponentAttributes[name] (component.d.ts).
  if (text == null) return { value: null, note: null };
  const s = ATTRIBUTES[name];
  if (s.type === 'list') {
    const items = list(text).map(s.item.type === 'number' ? numberOr : (w) => w);
    const bad = items.filter((w) => check(s.item, w).error);
    const note = bad.length
      ? t('component.attribute.left-out', {
          attribute: `${name}="${cut(text)}"`,
          values: bad.map((w) => t.message(showMessage(w))).join(', '),
          count: bad.length,
          expected: t(`component.attribute.expected.${name === 'editable' ? 'inputs' : name}`),
        })
      : null;
    return { value: /** @type {any} */ (items.filter((w) => !bad.includes(w))), note };
  }
  const value = s.type === 'number' ? numberOr(text.trim()) : text;
  const { error, message } = check(componentAttributesSchema, { [name]: value });
  // decimals' one reason ("expected a whole number from 0 to 12") in the language; another attribute's
  // (a text too long) as the schema says it.
  if (error && name === 'decimals')
    return { value: null, note: t('component.attribute.decimals', { attribute: `${name}="${cut(text)}"`, max: String(s.max) }) };
  // Another attribute's reason: what the schema expected (a text at most so long), in the language.
  const why = message?.id === 'schema.is-expected' ? message.values.expected : null;
  return error
    ? {
        value: null,
        note: why
          ? t('component.attribute.invalid', { attribute: `${name}="${cut(text)}"`, expected: why })
          : `${name}="${cut(text)}": ${error.replace(/^.*?; /, '')}`,
      }
    : { value: /** @type {any} */ (value), note: null };
}

/** A step's formula in `t`'s language: MathML when KaTeX was given (AttentionExplorerElement.katex), else its text. */
function formulaHtml(step, t = english) {
  const { tex, text } = stepFormula(step, t);
  const katex = AttentionExplorerElement.katex ?? null;
  if (katex?.renderToString) {
    try {
      // Trusted: KaTeX's own MathML for the core's formula (its \text{} is escaped by KaTeX).
      return raw(katex.renderToString(tex, { output: 'mathml', throwOnError: true, displayMode: false }));
    } catch {
      /* fall back to text */
    }
  }
  return html`${text}`;
}

/** The attributes that change how the problem is shown, not which problem. */
const DISPLAY_ATTRIBUTES = ['steps', 'inputs', 'editable', 'decimals', 'heads'];
const decimalsOf = (s) => readAttribute('decimals', s.attributes.decimals).value ?? 4;

/** The error over the element (`keep`: above the steps, which stay; else in their place), or none, in `t`'s language. */
function drawError(body, error, t) {
  body.querySelector(':scope > .error')?.remove();
  if (!error) return;
  const p = html`<p class="error" role="alert">${errorWords(error, t)}</p>`;
  if (error.keep && body.querySelector('.steps')) body.insertAdjacentHTML('afterbegin', String(p));
  else setHtml(body, p);
}

// Importing this module outside a browser (server-side rendering) must not throw.
// (An empty class where there is no DOM, e.g. Node importing the package: typed as the DOM's.)
const Base = globalThis.HTMLElement ?? /** @type {typeof HTMLElement} */ (/** @type {unknown} */ (class {}));

/** @typedef {Satisfies<typeof AttentionExplorerElement, typeof import('./component.js').AttentionExplorerElement>} DeclaredElement component.d.ts's class is this one */

export class AttentionExplorerElement extends Base {
  /** Set to the KaTeX module (katex.renderToString) to typeset formulas as MathML. */
  static katex = null;

  static get observedAttributes() {
    return ['lang', 'preset', 'state', 'lesson', 'steps', 'inputs', 'editable', 'decimals', 'heads'];
  }

  #root;
  #t = english; // the element's words (its lang attribute, else the browser's languages)
  #said = { id: 'explorer.loading', values: {} }; // the status's message, said again in a new language
  #lessonLang = null; // the language the loaded lesson says it is written in (its "lang"), or null
  #engine = null;
  #loading = 0;
  #connected = false;
  #loadedFrom = null; // the #sourceKey() the problem was loaded from
  // The problem, its trace, the reader's answers, the error and the display attributes
  // (component-state.js). Redrawn at the end of the task; flushed before an event is dispatched,
  // so a listener reads what the event announces.
  #store = createStore(initialComponent(), { schedule: queueMicrotask });

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    styles(this.#root);
    const initial = this.#store.get().status;
    const frame = document.createElement('div');
    frame.setAttribute('part', 'body');
    frame.className = 'body';
    setHtml(frame, html`<p class="status" role="status">${initial}</p>`);
    this.#root.append(frame);
    this.#root.addEventListener('change', (e) => this.#edited(e));
    this.#root.addEventListener('keydown', (e) => this.#move(e));
    this.#root.addEventListener('submit', (e) => this.#answered(e));
    // The views, in the order they draw: the inputs and the frame (only when a problem is loaded
    // whole or how it is shown changed, so an edit keeps the reader's field and focus), the steps
    // and warnings (with the frame too, which empties them), the error, the loading status.
    const body = this.#root.querySelector('.body');
    const frameParts = (s) => [
      s.lang,
      s.loaded,
      s.trace !== null,
      s.title,
      s.tokens,
      s.attributes.inputs,
      s.attributes.editable,
      s.attributes.decimals,
    ];
    this.#store.subscribe(
      (s) => s.lang,
      (lang) => {
        frame.lang = lang;
        frame.dir = this.#t.dir;
      },
    );
    this.#store.subscribe(frameParts, (_, s) => this.#drawFrame(body, s));
    this.#store.subscribe(
      (s) => [...frameParts(s), s.trace, s.lesson, s.verdicts, s.attributes.steps, s.attributes.heads],
      (_, s) => this.#drawSteps(body, s),
    );
    this.#store.subscribe(
      (s) => [s.error, s.lang],
      ([error]) => drawError(body, error, this.#t),
    );
    this.#store.subscribe(
      (s) => s.status,
      (text) => {
        const p = body.querySelector(':scope > .status');
        if (p) p.textContent = text;
      },
    );
  }

  connectedCallback() {
    this.#connected = true;
    // Inserted again (MkDocs instant navigation, a VitePress route, a slide coming back): the
    // Shadow DOM kept what was drawn and the reader's edits; load only if the source changed.
    if (this.#store.get().trace && this.#loadedFrom === this.#sourceKey()) return;
    this.#load();
  }

  disconnectedCallback() {
    this.#connected = false;
  }

  attributeChangedCallback(name, oldValue, value) {
    if (name === 'lang') {
      // Everything the element wrote is redrawn in the new language; a failed load's message is
      // written again by loading again (the same source).
      if (this.#connected && oldValue !== value)
        this.#language().then(() => {
          const { error } = this.#store.get();
          if (error && !error.keep) this.#load();
          else this.#store.flush();
        });
    } else if (name === 'preset' || name === 'state' || name === 'lesson') {
      if (this.#connected && oldValue !== value) this.#load();
    } else this.#store.dispatch(attributeSet, name, value); // kept while disconnected too: drawn from the state
  }

  /** The current problem (a copy), or null before it is loaded. */
  get problem() {
    const { problem } = this.#store.get();
    return problem ? structuredClone(problem) : null;
  }

  /** Sets the problem (number arrays), recomputes and redraws. */
  set problem(problem) {
    const copy = structuredClone(problem);
    const { trace, error } = this.#engine ? this.#run(copy) : { trace: null, error: null };
    this.#store.dispatch(problemSet, copy, trace);
    if (error) this.#fail(error);
    else this.#store.flush();
  }

  /** The trace of the current problem (engine.run), or null. */
  get trace() {
    return this.#store.get().trace;
  }

  /** What the problem is read from: the attributes and the JSON child. */
  #sourceKey() {
    return JSON.stringify([
      this.getAttribute('preset'),
      this.getAttribute('state'),
      this.getAttribute('lesson'),
      ...[...this.querySelectorAll('script[type="application/json"]')].map((s) => s.textContent),
    ]);
  }

  /** The language the element speaks: its lang attribute's, else its lesson's, else the browser's languages' (i18n.js negotiate). */
  #wantedLanguage() {
    return negotiate(this.getAttribute('lang'), [this.#lessonLang, ...(globalThis.navigator?.languages ?? [])]);
  }

  /** Loads the translator of #wantedLanguage() (a catalogue that cannot be fetched: English) and redraws in it. */
  async #language() {
    const lang = this.#wantedLanguage();
    let t = english;
    try {
      t = await loadTranslator(lang);
    } catch {
      /* English, the element's words before any catalogue */
    }
    if (lang !== this.#wantedLanguage()) return; // lang changed again meanwhile: that call draws
    this.#t = t;
    this.#store.dispatch(languageSet, t.lang);
    this.#store.dispatch(status, t.message(this.#said));
  }

  /** The loading status: message `id` in the element's language (kept, to say again in another). */
  #say(id, values = {}) {
    this.#said = { id, values };
    this.#store.dispatch(status, this.#t(id, values));
  }

  async #load() {
    const ticket = ++this.#loading;
    try {
      if (this.#t.lang !== this.#wantedLanguage()) await this.#language();
      if (ticket !== this.#loading) return;
      try {
        this.#engine ??= await sharedEngine(this.hasAttribute('wasm-url') ? { wasmUrl: this.getAttribute('wasm-url') } : {});
      } catch (error) {
        throw blockedByPolicy(error) ? new Error(this.#t('component.csp', CSP_VALUES), { cause: error }) : error;
      }
      const from = this.#sourceKey();
      const source = await this.#source();
      if (ticket !== this.#loading) return;
      // A lesson written in a language: the element speaks it unless its lang attribute chose one.
      if (source) this.#lessonLang = source.lang ?? null;
      if (this.#t.lang !== this.#wantedLanguage()) {
        await this.#language();
        if (ticket !== this.#loading) return;
      }
      this.#loadedFrom = from;
      const loading = source ?? this.#store.get(); // none: the problem set from script, as it is
      if (!loading.problem)
        throw new Error(
          this.#t('component.no-problem', {
            preset: 'preset="000"',
            state: 'state="v2=..."',
            lesson: 'lesson="lesson.json"',
            script: '<script type="application/json">',
          }),
        );
      const { trace, error } = this.#run(loading.problem);
      this.#store.dispatch(loaded, loading, trace);
      if (error) throw error;
      if (loading.lesson) {
        // A note for a step the problem does not have would silently show nothing: say so.
        const misfit = lessonTraceMessage(loading.lesson, trace, source?.where);
        if (misfit) throw Object.assign(new Error(english.message(misfit)), { message_id: misfit.id, values: misfit.values });
      }
      this.#announce('ready');
    } catch (error) {
      if (ticket !== this.#loading) return;
      this.#fail(error);
    }
  }

  /** The value of a source attribute (preset, state, lesson) the schema takes; throws, naming it, if it does not. */
  #sourceAttribute(name) {
    const { value, note } = readAttribute(name, this.getAttribute(name), this.#t);
    if (note) throw new Error(note);
    return value;
  }

  /**
   * The problem and what comes with it, from the source attributes or the JSON child; null when
   * there is none but a problem is set, undefined when there is neither.
   * @returns {Promise<{ problem: import('./index.js').Problem, tokens?: { q?: string[], k?: string[] } | null, title?: string | { id: string },
   *   lesson?: import('./share.js').LessonNotes, where?: string, lang?: string } | null | undefined>}
   */
  async #source() {
    const presetId = this.#sourceAttribute('preset');
    if (presetId) {
      const preset = findPreset(presetId) ?? findPreset(presetId.replace(/^seed-/, ''));
      if (!preset) throw new Error(this.#t('component.unknown-preset', { preset: presetId }));
      const { problem } = presetProblem(preset, this.#engine);
      return { problem, tokens: { q: preset.tokens, k: preset.kvTokens ?? preset.tokens }, title: { id: `example.${preset.id}.title` } };
    }
    const state = this.#sourceAttribute('state');
    if (state) {
      const { state: s, message } = await decodeStateString(state.replace(/^.*#/, ''));
      if (!s) throw new Error(message ? this.#t.message(message) : this.#t('component.state-empty'));
      const split = (t) =>
        t
          ? String(t)
              .split(/[\s,]+/)
              .filter(Boolean)
          : undefined;
      const q = split(s.tokens?.q);
      return { problem: stateToProblem(s, this.#engine), tokens: { q, k: (s.mode ?? 'self') === 'self' ? q : (split(s.tokens?.k) ?? q) } };
    }
    const lessonUrl = this.#sourceAttribute('lesson');
    if (lessonUrl) {
      let url;
      try {
        url = new URL(lessonUrl, document.baseURI).href;
      } catch {
        throw new Error(this.#t('page.notAddress', { lesson: `"${cut(lessonUrl)}"` }));
      }
      // Nothing waits forever: fetchLesson gives up after LESSON_TIMEOUT_MS, naming the address.
      this.#say('page.loadingLesson', { url });
      return { ...readLesson(await fetchLesson(url), url), where: url };
    }
    const inline = this.querySelector('script[type="application/json"][slot="lesson"]');
    if (inline) {
      const where = 'the <script slot="lesson">';
      return { ...readLesson(inline.textContent, where), where };
    }
    const script = this.querySelector('script[type="application/json"]');
    if (script) {
      let json;
      try {
        json = JSON.parse(script.textContent);
      } catch (error) {
        throw new Error(this.#t('component.script-not-json', { script: '<script type="application/json">', error: error.message }));
      }
      // Checked before anything reads it: the wrapper's fields here, the problem by the engine.
      const wrapped = json !== null && typeof json === 'object' && 'problem' in json;
      const { value, error, message } = check(wrapped ? componentScriptSchema : problemSchema, json);
      if (error)
        throw new Error(
          // The schema's reason (a message) after the framing; the problem itself is "it".
          this.#t('component.script-error', {
            script: '<script type="application/json">',
            error: wrapped || message.id !== 'schema.format.problem' ? message : { id: 'schema.format.problem-it', values: message.values },
          }),
        );
      if (wrapped)
        return {
          problem: value.problem,
          tokens: value.tokens ? { q: value.tokens, k: value.kvTokens ?? value.tokens } : null,
          title: value.title,
        };
      return { problem: value };
    }
    return this.#store.get().problem ? null : undefined;
  }

  /** engine.run: { trace } or { error }. */
  #run(problem) {
    try {
      return { trace: this.#engine.run(problem), error: null };
    } catch (error) {
      return { trace: null, error };
    }
  }

  /** Draws what changed now and tells the page: 'ready' or 'change', with the problem and its trace. */
  #announce(name) {
    this.#store.flush();
    this.dispatchEvent(new CustomEvent(name, { detail: { problem: this.problem, trace: this.trace }, bubbles: true, composed: true }));
  }

  /** `message` shown (`keep`: over the steps, a reader's edit) and dispatched as an 'error' event. */
  /** `failure`: an Error (the core's carries its message id, shown in the element's language) or words already in it. */
  #fail(failure, keep = false) {
    const message = typeof failure === 'string' ? failure : failure.message;
    const said = typeof failure === 'string' || !failure.message_id ? null : { message_id: failure.message_id, values: failure.values };
    this.#store.dispatch(failed, message, keep, said);
    this.#store.flush();
    this.dispatchEvent(new CustomEvent('error', { detail: { message }, bubbles: true, composed: true }));
  }

  #labels(s, n, which) {
    const names = s.tokens?.[which];
    return Array.from({ length: n }, (_, i) => names?.[i] ?? `t${i + 1}`);
  }

  /** Labels along one axis of a step: token names for queries and keys, RoPE's positions and pairs, feature numbers from 1. */
  #axisLabels(s, step, axis, n) {
    if (axis === 'queries') return this.#labels(s, n, 'q');
    if (axis === 'keys') return this.#labels(s, n, 'k');
    const turned = positionsAxisLabels(step, axis, s.trace.meta);
    if (turned) return turned.labels;
    return Array.from({ length: n }, (_, i) => String(i + 1));
  }

  #stepTable(s, step) {
    const [nr, nc] = step.shape;
    const labels = { rows: this.#axisLabels(s, step, step.axes[0], nr), cols: this.#axisLabels(s, step, step.axes[1], nc) };
    // Weights of keys the softmax's input hid (−∞) are grey, as on the page.
    const table = stepTableHtml(step, labels, {
      // Left to right in every language, as the matrices of papers (dir="ltr" in an Arabic element).
      attrs: html`dir="ltr" data-step="${step.id}" data-head="${step.head ?? ''}"`,
      caption: stepCaption(step, s.trace.meta.heads, this.#t),
      decimals: decimalsOf(s),
      masked: maskedPositions(s.trace, step),
    });
    return html`${table}${legendHtml(step, this.#t)}`;
  }

  #inputTable(s, name, value, editable, ctx) {
    const vector = !Array.isArray(value[0]);
    const rows = vector ? [value] : value;
    const cols = ctx.layout === 'columns';
    const tokenInput = ['Q', 'K', 'V', 'X', 'X_kv'].includes(name);
    const which = ['K', 'V', 'X_kv'].includes(name) ? 'k' : 'q';
    const rowL = tokenInput && !cols ? this.#labels(s, rows.length, which) : rows.map((_, i) => String(i + 1));
    const colL = tokenInput && cols ? this.#labels(s, rows[0].length, which) : rows[0].map((_, j) => String(j + 1));
    const d = decimalsOf(s);
    // Numbers at the element's decimals, 0 as 0.0000 so that columns line up; in a field with an
    // ASCII minus, the text the reader edits (the full number stays in the problem until then).
    const shown = rows.map((row) => row.map((v) => formatNumber(typeof v === 'number' ? v : Number(v), d, { fixedZero: true })));
    const fields = editable ? shown.map((row) => row.map((text) => text.replace(/\u2212/g, '-'))) : null;
    const width = fields ? Math.min(INPUT_WIDTH_MAX, Math.max(6, ...fields.flat().map((text) => text.length))) : 0;
    const body = rows.map(
      (row, i) =>
        html`<tr><th scope="row">${vector ? '' : rowL[i]}</th>${row.map((v, j) =>
          fields
            ? html`<td><input inputmode="decimal" data-input="${name}" data-r="${i}" data-c="${j}" value="${fields[i][j]}" aria-label="${this.#t('component.cell', { input: name, row: String(i + 1), column: String(j + 1) })}"></td>`
            : html`<td>${shown[i][j]}</td>`,
        )}</tr>`,
    );
    const caption = editable ? this.#t('component.editable', { input: name }) : name;
    return html`<table dir="ltr" data-input="${name}"${fields ? html` data-w="${String(width)}"` : ''}><caption class="visually-hidden">${caption}</caption><thead><tr><th></th>${colL.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead><tbody>${body}</tbody></table>`;
  }

  /** The frame: the title, the inputs shown (editable ones as fields) and empty boxes for the steps and warnings. */
  #drawFrame(body, s) {
    if (!s.trace || !s.problem) return;
    const ctx = problemContext(s.problem, s.trace);
    const editableAttr = readAttribute('editable', s.attributes.editable).value ?? [];
    const names = Object.keys(ctx.inputs);
    const editable = new Set(editableAttr.includes('all') ? names : editableAttr);
    const shownInputs = readAttribute('inputs', s.attributes.inputs).value ?? (editable.size ? [...editable] : names);
    const inputs = names.filter((n) => shownInputs.includes(n) || shownInputs.includes('all'));
    const sections = inputs.map((n) => {
      const value = ctx.inputs[n];
      const shape = Array.isArray(value[0]) ? `${value.length} × ${value[0].length}` : value.length;
      return html`<section><h3>${n}<span class="shape" dir="ltr">${shape}</span></h3>${this.#inputTable(s, n, value, editable.has(n), ctx)}</section>`;
    });
    setHtml(
      body,
      // A preset's title is a message (said in the element's language); a lesson's, its teacher's words.
      html`${s.title && html`<p class="title">${isMessage(s.title) ? this.#t.message(s.title) : s.title}</p>`}<div class="inputs row"${!inputs.length && ' hidden'}>${sections}</div><div class="steps row"></div><div class="warnings" role="status"></div>`,
    );
  }

  /** The steps shown and the warnings (the trace's and the attributes' notes), into the frame's boxes. */
  #drawSteps(body, s) {
    const box = body.querySelector('.steps');
    if (!s.trace || !box) return;
    const showSteps = readAttribute('steps', s.attributes.steps).value;
    const showHeads = readAttribute('heads', s.attributes.heads).value?.map((h) => h - 1);
    const shown = s.trace.steps.filter(
      (step) => !(showSteps && !showSteps.includes(step.id)) && !(showHeads && step.head !== null && !showHeads.includes(step.head)),
    );
    setHtml(
      box,
      html`${shown.map(
        (step) =>
          html`<section class="step" data-step="${step.id}" data-head="${step.head ?? ''}"><h3>${stepCaption(step, s.trace.meta.heads, this.#t)}<span class="shape" dir="ltr">${step.shape[0]} × ${step.shape[1]}</span></h3>
        <div class="formula" dir="ltr">${formulaHtml(step, this.#t)}</div>${this.#noteHtml(s, step) ?? this.#stepTable(s, step)}</section>`,
      )}`,
    );
    const notes = DISPLAY_ATTRIBUTES.map((n) => readAttribute(n, s.attributes[n], this.#t).note)
      .filter(Boolean)
      .map((n) => html`<p class="warning" part="attribute-note">⚠ ${n}</p>`);
    const warnings = warningsIn(s.trace, this.#t).map((w) => html`<p class="warning">⚠ ${w}</p>`);
    setHtml(body.querySelector('.warnings'), html`${notes}${warnings}`);
  }

  /** A lesson's sentence for a step, and its question while unanswered (then in place of the numbers, returned), or null. */
  #noteHtml(s, step) {
    const key = `${step.id}:${step.head ?? -1}`;
    const note = s.lesson?.[key];
    const t = this.#t;
    if (!note) return null;
    const say = note.say?.trim() && html`<p class="say" part="say">${note.say}</p>`;
    const verdict = s.verdicts[key];
    if (!note.ask?.trim()) return html`${say}${this.#stepTable(s, step)}`;
    if (verdict) {
      const told =
        verdict.reason &&
        html`<p class="verdict ${verdict.right === true ? 'right' : verdict.right === false ? 'wrong' : ''}" role="status">${verdict.reason}</p>`;
      return html`${say}${told}${this.#stepTable(s, step)}`;
    }
    const answer = usableAnswer(note.answer);
    let field = null;
    if (answer?.kind === 'key') {
      const row = this.#labels(s, answer.row, 'q')[answer.row - 1];
      const keys = this.#labels(s, s.trace.meta.keys, 'k');
      field = html`<fieldset><legend>${t('explorer.stepper.whichKey', { query: quoteToken(row, t) })}</legend>${keys.map((k, j) => html`<label><input type="radio" name="key" value="${j}"> ${k}</label>`)}</fieldset>`;
    } else if (answer?.kind === 'number') {
      field = html`<p><label>${t('explorer.label.answer-number')} <input type="text" name="number" inputmode="decimal" autocomplete="off"></label></p>`;
    } else if (answer?.kind === 'text') {
      field = html`<p><label>${t('component.your-answer')}<br><textarea name="text" rows="2"></textarea></label></p>`;
    }
    const button = t(answer && answer.kind !== 'text' ? 'explorer.step-check' : 'explorer.step-reveal');
    return html`${say}<form class="ask" part="ask" data-key="${key}"><p><strong>${t('explorer.predict-first')}</strong> ${note.ask}</p>${field}<button type="submit">${button}</button></form>`;
  }

  /** The reader answered a question (or asked to reveal): check it against the trace, show the numbers. */
  #answered(e) {
    const form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.key) return;
    e.preventDefault();
    const s = this.#store.get();
    const key = form.dataset.key;
    const answer = usableAnswer(s.lesson?.[key]?.answer);
    const names = {
      tokensQ: this.#labels(s, s.trace.meta.queries, 'q'),
      tokensK: this.#labels(s, s.trace.meta.keys, 'k'),
      decimals: decimalsOf(s),
      t: this.#t,
    };
    let verdict = { right: null, reason: '' };
    if (answer?.kind === 'key') {
      const picked = form.querySelector('input[name="key"]:checked');
      if (!picked) {
        form.querySelector('input[name="key"]')?.focus();
        return;
      }
      verdict = checkAnswer(s.trace, key, answer, Number(picked.value), names);
    } else if (answer?.kind === 'number') {
      const typed = form
        .querySelector('input[name="number"]')
        .value.trim()
        .replace(/^\u2212/, '-');
      if (!typed) {
        form.querySelector('input[name="number"]').focus();
        return;
      }
      verdict = checkAnswer(s.trace, key, answer, typed, names);
    } else if (answer?.kind === 'text') {
      verdict = { right: null, reason: this.#t('explorer.stepper.theAnswer', { reason: answer.text, said: 'no' }) };
    }
    const section = form.closest('section.step');
    this.#store.dispatch(answered, key, verdict);
    this.#store.flush();
    // Keep the reader's place: the same step's verdict (or its table) takes the focus.
    const again = this.#root.querySelector(`section.step[data-step="${section.dataset.step}"][data-head="${section.dataset.head}"]`);
    const target = again?.querySelector('.verdict') ?? again?.querySelector('table');
    if (target) {
      target.tabIndex = -1;
      target.focus();
    }
  }

  #edited(e) {
    const el = e.target;
    if (!(el instanceof HTMLInputElement) || !el.dataset.input) return;
    e.stopPropagation(); // the element's own "change" event carries the problem
    const value = Number(el.value.trim().replace(/\u2212/g, '-'));
    if (el.value.trim() === '' || !Number.isFinite(value)) {
      el.setAttribute('aria-invalid', 'true');
      const cell = { input: el.dataset.input, row: String(Number(el.dataset.r) + 1), column: String(Number(el.dataset.c) + 1) };
      this.#fail(this.#t('component.not-a-number', { ...cell, value: el.value }), true);
      return;
    }
    el.removeAttribute('aria-invalid');
    const next = withCell(this.#store.get().problem, el.dataset.input, Number(el.dataset.r), Number(el.dataset.c), value);
    // A problem the engine refuses is not kept: the last good problem and its trace stay.
    const { trace, error } = this.#run(next);
    if (error) {
      this.#fail(error, true);
      return;
    }
    this.#store.dispatch(edited, next, trace);
    this.#announce('change');
  }

  #move(e) {
    const el = e.target;
    if (!(el instanceof HTMLInputElement) || !el.dataset.input) return;
    const step = { ArrowUp: [-1, 0], ArrowDown: [1, 0], Enter: [1, 0] }[e.key];
    if (!step) return;
    if (e.key === 'Enter') el.dispatchEvent(new Event('change', { bubbles: true }));
    const next = this.#root.querySelector(
      `input[data-input="${el.dataset.input}"][data-r="${Number(el.dataset.r) + step[0]}"][data-c="${el.dataset.c}"]`,
    );
    if (next) {
      e.preventDefault();
      next.focus();
      next.select();
    }
  }
}

if (typeof customElements !== 'undefined' && !customElements.get('attention-explorer')) {
  customElements.define('attention-explorer', AttentionExplorerElement);
}
