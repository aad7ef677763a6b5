// The catalogues (web/lib/locales) and the machinery (web/lib/i18n.js), in Node: every catalogue
// has exactly English's message ids with English's placeholders and parses as ICU MessageFormat;
// plurals follow each language's rules with Latin digits; ?lang and the browser's languages are
// negotiated; a missing message is English's; English's preset words are the core's. And a scan:
// no English words reach the playground's DOM except through the catalogue.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TYPE, parse } from '@formatjs/icu-messageformat-parser';

import { dist, repo } from './helpers.mjs';

const { LANGUAGES, createTranslator, dirOf, english, loadCatalogue, negotiate } = await import(`${dist}i18n.js`);
const { loadAttention } = await import(`${dist}node.js`);

const locales = join(repo, 'web', 'lib', 'locales');
const read = (code) => JSON.parse(readFileSync(join(locales, `${code}.json`), 'utf8'));
const en = read('en');
const ids = (catalogue) =>
  Object.keys(catalogue)
    .filter((k) => k !== '@metadata')
    .sort();

/** The placeholder names of a message (arguments, plural/select/number arguments, rich-text tags). */
function placeholders(message) {
  const names = new Set();
  const walk = (elements) => {
    for (const e of elements) {
      if (e.type === TYPE.argument || e.type === TYPE.number || e.type === TYPE.date || e.type === TYPE.time) names.add(e.value);
      if (e.type === TYPE.plural || e.type === TYPE.select) {
        names.add(e.value);
        for (const option of Object.values(e.options)) walk(option.value);
      }
      if (e.type === TYPE.tag) {
        names.add(`<${e.value}>`);
        walk(e.children);
      }
    }
  };
  walk(parse(message));
  return [...names].sort();
}

describe('the catalogues', () => {
  test('there is one per language of LANGUAGES, and no other', () => {
    assert.deepEqual(
      readdirSync(locales).sort(),
      Object.keys(LANGUAGES)
        .map((c) => `${c}.json`)
        .sort(),
    );
  });

  for (const code of Object.keys(LANGUAGES)) {
    test(`${code}: English's ids, each parsing with English's placeholders; its header names its glossary`, () => {
      const catalogue = read(code);
      assert.deepEqual(ids(catalogue), ids(en));
      assert.ok(catalogue['@metadata']?.glossary?.length > 20, `${code}.json's @metadata says which glossary it follows`);
      for (const id of ids(en)) {
        let names;
        assert.doesNotThrow(() => (names = placeholders(catalogue[id])), `${code} ${id} parses`);
        assert.deepEqual(names, placeholders(en[id]), `${code} ${id}: the placeholders of English's`);
      }
    });
  }

  test('the shipped catalogues are the sources (dist/locales, copied by scripts/build.sh)', async () => {
    for (const code of Object.keys(LANGUAGES)) assert.deepEqual(await loadCatalogue(code), read(code), code);
  });

  test("English's words for the presets are the core's (until the core speaks in message ids)", async () => {
    const engine = await loadAttention({ walkthroughs: false });
    for (const p of engine.modelCatalogue().presets) {
      assert.equal(en[`preset.${p.name}.description`], p.description, p.name);
      assert.equal(en[`preset.${p.name}.question`], p.question, p.name);
      assert.ok(en[`preset.${p.name}.title`], `${p.name} has a title`);
    }
  });

  test("English's words for the explorer's examples are presets.js's, and every example has a title and a source in every language", async () => {
    const { presets } = await import(`${dist}presets.js`);
    for (const p of presets) {
      assert.equal(english(`example.${p.id}.title`), p.title, p.id);
      assert.equal(p.note === undefined ? undefined : english(`example.${p.id}.note`), p.note, p.id);
      assert.equal(english(`example.${p.id}.source`), p.source, p.id);
      for (const code of Object.keys(LANGUAGES)) {
        assert.ok(read(code)[`example.${p.id}.title`], `${code}: ${p.id}`);
        // A source's titles of papers, repositories' paths and code are English's in every language.
        const names = p.source.match(/“[^”]*”|[\w.-]+\/[\w./-]+|np\.random\.\w+\([^)]*\)/g) ?? [];
        for (const name of names) assert.ok(read(code)[`example.${p.id}.source`].includes(name), `${code}: ${p.id}'s source keeps ${name}`);
      }
      // exampleWords gives them in a language, and the preset's English without a translator.
      const { exampleWords } = await import(`${dist}i18n.js`);
      assert.deepEqual(exampleWords(p), { title: p.title, note: p.note, source: p.source }, p.id);
      const fr = exampleWords(p, createTranslator('fr', read('fr')));
      assert.equal(fr.title, read('fr')[`example.${p.id}.title`], p.id);
      if (p.note) assert.ok(fr.note && fr.note !== p.note, `${p.id}: a French note`);
      assert.equal(fr.source, read('fr')[`example.${p.id}.source`], p.id);
      // A source with English words of its own ("made for this explorer") has French ones.
      if (/made for|numbers|notebook|notes|the first/.test(p.source)) assert.notEqual(fr.source, p.source, `${p.id}: a French source`);
    }
  });
});

describe('formatting', () => {
  test("a plural follows each language's rules, with Latin digits and every placeholder filled", () => {
    for (const code of Object.keys(LANGUAGES)) {
      const t = createTranslator(code, read(code));
      const rules = new Intl.PluralRules(code);
      const out = new Map();
      for (const count of [1, 2, 3, 11, 1000]) {
        const text = t('probe.tooLong', { count, context: 32 });
        assert.ok(!/[{}]/.test(text), `${code}: ${text}`);
        assert.ok(text.includes('32'), `${code}: the context is said: ${text}`);
        assert.ok(!/[\u0660-\u0669\u06f0-\u06f9]/.test(text), `${code}: Latin digits: ${text}`);
        out.set(count, text);
      }
      // Counts of different plural categories read differently (beyond their digits), in every language.
      const words = (n) => out.get(n).replace(/[\d,.\s\u00a0\u202f]/g, '');
      for (const [a, b] of [
        [1, 3],
        [2, 3],
        [3, 11],
        [11, 1000],
      ]) {
        if (rules.select(a) !== rules.select(b))
          assert.notEqual(words(a), words(b), `${code}: ${a} (${rules.select(a)}) and ${b} (${rules.select(b)})`);
        else assert.equal(words(a), words(b), `${code}: ${a} and ${b} are both ${rules.select(a)}`);
      }
    }
    assert.equal(english('probe.tooLong', { count: 1, context: 2 }), '1 token, but the context holds 2');
  });

  test('a message inside a message, a rich-text tag, a list', () => {
    const t = createTranslator('fr', read('fr'));
    const event = { id: 'milestone.induction', values: { layer: 2, head: 1, step: 430 } };
    const text = t('reveal.found', { answer: { id: 'choice.layer', values: { layer: 2 } }, event });
    assert.ok(text.includes(t('choice.layer', { layer: 2 })) && text.includes(t.message(event)), text);
    const parts = t('page.tagline', { explorer: (chunks) => ({ link: chunks.join('') }) });
    assert.ok(Array.isArray(parts) && parts.some((p) => p?.link === 'explorateur'), JSON.stringify(parts));
    assert.equal(createTranslator('en').list(['a', 'b', 'c']), 'a, b, and c');
  });

  test("a message missing from a catalogue is English's; an id English lacks is an error", () => {
    const t = createTranslator('es', { 'button.play': 'Reproducir' });
    assert.equal(t('button.play'), 'Reproducir');
    assert.equal(t('button.pause'), en['button.pause']);
    assert.throws(() => t('no.such.message'), /no message "no\.such\.message"/);
  });
});

describe('choosing the language', () => {
  test("?lang first, then the browser's languages, then English; a bare language finds its variant", () => {
    assert.equal(negotiate('fr', ['ja']), 'fr');
    assert.equal(negotiate(null, ['de-DE', 'ko-KR', 'en']), 'ko');
    assert.equal(negotiate('xx', ['pt-PT']), 'pt-BR');
    assert.equal(negotiate('zh'), 'zh-CN');
    assert.equal(negotiate('zh-TW'), 'zh-CN');
    assert.equal(negotiate('pt'), 'pt-BR');
    assert.equal(negotiate('ZH-cn'), 'zh-CN');
    assert.equal(negotiate('es_MX'), 'es');
    assert.equal(negotiate(null, ['de', 'it']), 'en');
    assert.equal(negotiate('', []), 'en');
  });

  test('Arabic is right to left, the others left to right', () => {
    for (const code of Object.keys(LANGUAGES)) assert.equal(dirOf(code), code === 'ar' ? 'rtl' : 'ltr');
  });
});

// ---- the scan -------------------------------------------------------------------------------------
// What reaches the playground's DOM as words, in web/lib/playground.js and web/page/playground-page.js
// (parsed by vite's parser, Oxc): el()'s children and its title/aria-label/placeholder/alt
// attributes; assignments to .textContent, .title, .placeholder, .innerText; setAttribute() of those
// attributes; the page's say() and showError(); setCustomValidity(); Object.assign()'s textContent.
// Each such expression may hold words (a run of two letters) only inside a call (t('id', ...), a
// function's result) or as an allowed literal below; never as a string literal or template text.
// Markup written with html`` (the explorer's share, export and embed views): its text between tags
// and its title/aria-label/placeholder/alt attributes hold no words; a message comes in as ${t(…)}.
// And an Error's message (the views show it: "Export failed: …") is a message too, and so is an
// error kept to be shown later (`errors[name] = …`, `this.localError = …`, `{ error: … }`).
// And playground.html: every text in <body> is inside an element with data-i18n (filled from the
// catalogue) or is not words.
const SCANNED = [
  'web/lib/playground.js',
  'web/page/playground-page.js',
  // The explorer's teaching views: the exercise (teacher and student), the walkthroughs.
  'web/page/exercise.js',
  'web/page/student.js',
  'web/page/practice.js',
  // The walkthroughs' bodies (explorer.practice.<walk>.*).
  ...['walk', 'softmax', 'decode', 'tiles', 'gradients', 'recurrent'].map((m) => `web/page/practice/${m}.js`),
  // The explorer page's views (issue 33): every word they write is the catalogue's.
  ...['selection', 'why', 'explain', 'glance', 'heads', 'pipeline', 'controls', 'inputs', 'editor', 'mask-editor']
    .concat([
      'mask-components',
      'cards',
      'update',
      'app',
      'stepper',
      'steps',
      'scrollables',
      'first-screen',
      'editors',
      'trace-links',
      'main',
    ])
    .map((m) => `web/page/${m}.js`),
  // The explorer's share, export and embed views, its lesson files and links (explorer.share/export/embed/lesson.*).
  'web/page/share-panel.js',
  'web/page/export-panel.js',
  'web/page/embed-builder.js',
  'web/page/embed.js',
  'web/page/lesson-file.js',
  'web/page/link.js',
  'web/page/copy.js',
  'web/page/copy-latex.js',
  'web/page/back-link.js',
  'web/page/frame-resize.js',
  // The page's modules that write no words today (its state, its store, the problem it builds, the
  // actions, the layout, the setup's fold, the numbers' format, the language's choice): kept so.
  ...['actions', 'layout', 'problem', 'setup-fold', 'state', 'store', 'format', 'language'].map((m) => `web/page/${m}.js`),
  // <attention-explorer> (its lang attribute) and the renderer its tables and legends share with the page.
  'web/lib/component.js',
  'web/lib/component-state.js',
  'web/lib/step-table.js',
];
// Literals with letters that are not English for a learner, with why.
const ALLOWED = new Map([
  ['kv', 'X_kv: a symbol (X<sub>kv</sub>)'],
  ['unknown export ', "a programming error: the formats are the walkthrough's own buttons"],
  ['model', 'd_model: a symbol (d<sub>model</sub>)'],
  ['−ln ', 'the natural logarithm (−ln S keys: the sigmoid bias)'],
  ['−ln S', 'the natural logarithm (−ln S keys: the sigmoid bias)'],
  ...['float64', 'float32'].map((w) => [w, "a precision by its name in code (the online softmax walkthrough's menu)"]),
  ...['randn', 'normal', 'rand', 'randint', 'seed', 'loc', 'scale', 'low', 'high'].map((w) => [
    w,
    "numpy's names: the random fill's functions and arguments",
  ]),
]);
const TEXT_ATTRIBUTES = new Set(['title', 'aria-label', 'placeholder', 'alt', 'textContent']);
const TEXT_PROPERTIES = new Set(['textContent', 'title', 'placeholder', 'innerText']);
const SINK_CALLS = new Set(['say', 'showError', 'setCustomValidity', 'alert', 'confirm', 'prompt']);
const WORDS = /\p{L}{2,}/u;

/** The literal texts with words in an expression that reaches the DOM (calls are not entered). */
function wordsIn(node, found = []) {
  if (!node || typeof node !== 'object') return found;
  if (node.type === 'Literal' && typeof node.value === 'string' && WORDS.test(node.value)) found.push({ text: node.value, at: node.start });
  else if (node.type === 'TemplateLiteral') {
    for (const q of node.quasis) if (WORDS.test(q.value.cooked)) found.push({ text: q.value.cooked, at: q.start });
    for (const e of node.expressions) wordsIn(e, found);
  } else if (node.type === 'ConditionalExpression') {
    wordsIn(node.consequent, found);
    wordsIn(node.alternate, found);
  } else if (node.type === 'LogicalExpression' || (node.type === 'BinaryExpression' && node.operator === '+')) {
    // `a && b` writes b (a only when it is falsy: not words); a comparison writes true or false.
    if (node.operator !== '&&') wordsIn(node.left, found);
    wordsIn(node.right, found);
  } else if (node.type === 'ArrayExpression') for (const e of node.elements) wordsIn(e, found);
  else if (node.type === 'TaggedTemplateExpression' && node.tag.type === 'Identifier' && node.tag.name === 'html')
    htmlWords(node.quasi, found);
  else if (node.type === 'SpreadElement') wordsIn(node.argument, found);
  return found;
}

/**
 * The words of an html`` template: its text between tags and the values of its text attributes
 * (title, aria-label, placeholder, alt), literal or from its expressions; an expression elsewhere in
 * a tag (a class, a style, a tag's name) is not words. A nested html`` is a sink of its own.
 */
function htmlWords(quasi, found) {
  // A template of attributes only (html` class="hl"`) starts inside a tag.
  const state = { inTag: /^\s*[\w-]+="/.test(quasi.quasis[0].value.raw), attr: null, text: '' };
  const flush = (at) => {
    const text = state.text.replace(/&#?\w+;/g, ' ').trim();
    if (WORDS.test(text)) found.push({ text, at });
    state.text = '';
  };
  quasi.quasis.forEach((q, i) => {
    const raw = q.value.cooked ?? q.value.raw;
    for (let k = 0; k < raw.length; k++) {
      const c = raw[k];
      if (!state.inTag && c === '<') {
        flush(q.start);
        state.inTag = true;
        state.attr = null;
      } else if (state.inTag && state.attr === null && c === '>') state.inTag = false;
      else if (state.inTag && state.attr === null && c === '"') {
        const name = /([\w-]+)=$/.exec(raw.slice(0, k))?.[1] ?? '';
        state.attr = TEXT_ATTRIBUTES.has(name) ? name : '';
      } else if (state.inTag && state.attr !== null && c === '"') {
        if (state.attr) flush(q.start);
        state.attr = null;
      } else if (!state.inTag || state.attr) state.text += c;
    }
    const e = quasi.expressions[i];
    if (!e || (e.type === 'TaggedTemplateExpression' && e.tag.name === 'html')) return;
    if (!state.inTag || state.attr) {
      flush(q.start);
      wordsIn(e, found);
    }
  });
  flush(quasi.start);
}

/** Every expression of `program` that reaches the DOM as text (see above). */
function sinks(program) {
  const out = [];
  const name = (n) => (n?.type === 'Identifier' ? n.name : n?.type === 'Literal' ? String(n.value) : null);
  const visit = (node) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    if (node.type === 'NewExpression' && name(node.callee) === 'Error') out.push(...node.arguments);
    if (node.type === 'CallExpression') {
      const callee = node.callee.type === 'MemberExpression' ? name(node.callee.property) : name(node.callee);
      if (callee === 'el') {
        const [, attrs, ...children] = node.arguments;
        out.push(...children);
        if (attrs?.type === 'ObjectExpression') for (const p of attrs.properties) if (TEXT_ATTRIBUTES.has(name(p.key))) out.push(p.value);
      } else if (SINK_CALLS.has(callee)) out.push(...node.arguments);
      else if (callee === 'setAttribute' && TEXT_ATTRIBUTES.has(node.arguments[0]?.value)) out.push(node.arguments[1]);
      else if (callee === 'assign') {
        for (const a of node.arguments)
          if (a.type === 'ObjectExpression') for (const p of a.properties) if (TEXT_ATTRIBUTES.has(name(p.key))) out.push(p.value);
      }
    }
    if (node.type === 'TaggedTemplateExpression' && node.tag.type === 'Identifier' && node.tag.name === 'html') out.push(node);
    if (node.type === 'AssignmentExpression' && node.left.type === 'MemberExpression' && TEXT_PROPERTIES.has(name(node.left.property)))
      out.push(node.right);
    // An error kept to be shown later (`errors[name] = …`, `this.localError = …`, `{ error: … }`).
    const errorKey = (n) => /error|message/i.test(name(n) ?? '');
    if (node.type === 'AssignmentExpression' && node.left.type === 'MemberExpression') {
      if (errorKey(node.left.property) || (node.left.computed && errorKey(node.left.object))) out.push(node.right);
    }
    if (node.type === 'Property' && errorKey(node.key) && !node.computed) out.push(node.value);
    for (const [k, v] of Object.entries(node)) if (k !== 'type' && v && typeof v === 'object') visit(v);
  };
  visit(program);
  return out;
}

/** The English the scan finds in a module's source: [{ text, line }]. */
export async function englishInSource(source, file) {
  const { parseSync } = await import('vite');
  const { program, errors } = parseSync(file, source);
  assert.equal(errors.length, 0, `${file} parses`);
  const line = (at) => source.slice(0, at).split('\n').length;
  return sinks(program)
    .flatMap((n) => wordsIn(n))
    .filter((w) => !ALLOWED.has(w.text))
    .map((w) => ({ text: w.text, line: line(w.at) }));
}

describe("the scan: no English words reach the playground's DOM outside the catalogue", () => {
  for (const file of SCANNED) {
    test(file, async () => {
      const found = await englishInSource(readFileSync(join(repo, file), 'utf8'), file);
      assert.deepEqual(found, [], found.map((w) => `${file}:${w.line} ${JSON.stringify(w.text)}`).join('\n'));
    });
  }

  test('the scan finds words written straight into the DOM (it is not blind)', async () => {
    const source =
      "el('p', { title: `step ${n}` }, 'Play'); x.textContent = ok ? t('a') : 'Pause'; say(`Saved ${n}.`); b.setAttribute('aria-label', 'heads');" +
      ' setHtml(box, html`<p title="Close it" id="x">${t(\'a\')} <b>Dismiss</b> ${n} px</p>`); throw new Error(`export ${f} failed`);';
    assert.deepEqual(
      (await englishInSource(source, 'probe.js')).map((w) => w.text),
      ['Play', 'step ', 'Pause', 'Saved ', 'heads', 'Close it', 'Dismiss', 'px', 'export ', ' failed'],
    );
    // html``: text between tags, text attributes, expressions there; not classes, styles, conditions.
    const markup =
      'html`<p class="hint ${big && \'wide\'}" title="Copy ${n}">Hello <b>${x}</b>${ok && \' there\'}${n > 1 && \'items\'}</p>`; html` class="hl"`;' +
      "html`<button aria-label=\"${t('x')}\">${t('y')}</button> &nbsp;${rows.map((r) => html`<td>row ${r}</td>`)}`; confirm('Sure?');";
    assert.deepEqual(
      (await englishInSource(markup, 'probe.js')).map((w) => w.text),
      ['Copy', 'Hello', ' there', 'items', 'row', 'Sure?'],
    );
    // An error kept to be shown later: an error's or message's property, an errors table's entry.
    const kept =
      "errors[name] = `${name} is empty`; this.localError = v ? t('a') : 'no cell'; ok({ error: 'bad row', value: 'rows' }); a.message = m;";
    assert.deepEqual(
      (await englishInSource(kept, 'probe.js')).map((w) => w.text),
      [' is empty', 'no cell', 'bad row'],
    );
  });

  test('web/page/playground.html: every text of its body comes from the catalogue (data-i18n)', () => {
    const html = readFileSync(join(repo, 'web/page/playground.html'), 'utf8');
    const body = html.slice(html.indexOf('<body'));
    const ids = [...body.matchAll(/data-i18n="([^"]+)"/g)].map((m) => m[1]);
    for (const id of ids) assert.ok(Object.hasOwn(en, id), `data-i18n="${id}" is an id of the catalogue`);
    // Elements with data-i18n removed (innermost first), then comments and tags: what is left is not words.
    let rest = body.replace(/<!--[\s\S]*?-->/g, '');
    for (let before = ''; before !== rest;) {
      before = rest;
      rest = rest.replace(/<(\w+)\b[^>]*\bdata-i18n="[^"]*"[^>]*>(?:(?!<\1\b)[\s\S])*?<\/\1>/, '');
    }
    const left = rest.replace(/<[^>]*>/g, ' ').trim();
    assert.ok(!WORDS.test(left), `text outside data-i18n: ${left}`);
  });
});
