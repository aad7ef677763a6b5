// The explorer page's words in each language of web/lib/locales (issue 33: index.html's data-i18n
// and the words its views write), at 1440 × 900 and 390 × 844: each translated element shows its
// catalogue's text, no placeholder is left unfilled, nothing in the header, the panels' headings,
// the step cards' heads, the glance, the heads, the open cell's line or the status line is
// clipped; with a weight open, no English of the catalogue shows in the page's main areas (the
// worked calculation's sentence and term table and the trace's warnings too: the core names them as
// messages); <html lang dir> are the
// language's, the link to the playground carries ?lang=, Arabic mirrors the panels and keeps
// matrices, heatmaps and formulas left to right. English's catalogue equals the HTML's words (so
// the prerendered English page is the catalogue's), and the menu switches language. Each walkthrough
// of "In practice", stepped through in French, shows no English of the catalogue.
import { join } from 'node:path';

import { dist, repo } from '../js/helpers.mjs';
import { assert, browserSuite, catalogue, clippedText, englishFor, englishShown, settled } from './server.mjs';
const LANGUAGES = ['zh-CN', 'es', 'pt-BR', 'fr', 'ja', 'ko', 'ar'];
const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

// Elements and attributes a view writes after the language was shown: the lesson's title, the
// "why" panel's heading, the sigmoid bias's default (−ln S = its value).
const VIEWS_WRITE = new Set(['explorer.lesson-title', 'explorer.why-title', 'explorer.opt-sigmoid-bias.placeholder']);

// The page's main areas: the header, the problem's controls, the diagram, the weights at a glance,
// the step cards, the heads, the selection panel and the status line. Where the English of the
// catalogue must not show once a cell is open, and (less the tables and formulas, which scroll
// sideways by design) where no text may be clipped.
const AREAS = '.site-header, #setup, #lesson, #pipeline, .heads-link, #glance, #step-list, #heads-view, #drill, .status-bar';

const CLIPPED =
  '.site-header, .panel h2, .lesson-actions, .status-bar, #glance figcaption, .step-head, #drill .drill-target, .heads-link, #heads-view h3';

const test = browserSuite('explorer-i18n', { contextPerTest: true, screenshots: 'explorer-i18n-' });

/** What the page shows, read in the page: each data-i18n element's text and attributes, clipping, directions. */
function readScreen() {
  const visible = (e) => e.checkVisibility?.() ?? e.offsetParent !== null;
  const texts = {};
  for (const e of document.querySelectorAll('[data-i18n]')) texts[e.dataset.i18n] = e.textContent.replace(/\s+/g, ' ').trim();
  const attrs = {};
  for (const attr of ['aria-label', 'placeholder', 'title'])
    for (const e of document.querySelectorAll(`[data-i18n-${attr}]`)) attrs[e.getAttribute(`data-i18n-${attr}`)] = e.getAttribute(attr);
  const direction = (selector) => [...document.querySelectorAll(selector)].map((e) => getComputedStyle(e).direction);
  return {
    texts,
    attrs,
    overflow: document.documentElement.scrollWidth - innerWidth,
    placeholders: document.body.innerText.match(/\{\s*[A-Za-z_]\w*\s*(,[^}]*)?\}/g) ?? [],
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    menu: document.getElementById('lang-menu').value,
    playgroundLink: document.querySelector('.site-nav a').getAttribute('href'),
    panels: direction('#lesson, #setup'),
    captions: Object.fromEntries(
      [...document.querySelectorAll('#step-list article.step')].map((a) => [
        a.dataset.step,
        a
          .querySelector('.step-head :is(h3, h4)')
          .textContent.replace(/^\d+\s*/, '')
          .trim(),
      ]),
    ),
    ltr: direction('#step-list table, .heatmap, .editor table, .katex, .pipeline'),
  };
}

/** A message's text as the DOM shows it: rich-text tags' names and ICU's quotes gone, spaces folded. */
const shown = (message) =>
  message
    .replace(/<\/?[a-z]+>/g, '')
    .replace(/'([<{}])'/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();

test("English: the catalogue's words are the HTML's, so the page is the same with or without it", async ({ page, base }) => {
  const en = catalogue('en');
  await page.goto(`${base}?lang=en`);
  await page.waitForSelector('body[data-ready="true"]');
  const seen = await page.evaluate(readScreen);
  const ids = Object.keys(seen.texts);
  assert(ids.length >= 140, `only ${ids.length} translated elements`);
  for (const id of ids)
    assert(seen.texts[id] === shown(en[id]), `${id}: the page says "${seen.texts[id]}", the catalogue "${shown(en[id])}"`);
  for (const [id, value] of Object.entries(seen.attrs))
    if (!VIEWS_WRITE.has(id)) assert(value === shown(en[id]), `${id}: "${value}" vs "${shown(en[id])}"`);
  assert(seen.lang === 'en' && seen.dir === 'ltr' && seen.menu === 'en', `lang ${seen.lang}, dir ${seen.dir}, menu ${seen.menu}`);
  assert(seen.playgroundLink === 'playground.html', seen.playgroundLink);
  // The menu reloads the page in the chosen language, keeping the state in the hash.
  await page.selectOption('#lang-menu', 'fr');
  await page.waitForURL(/lang=fr/);
  await page.waitForSelector('body[data-ready="true"]');
  const french = await page.evaluate(readScreen);
  assert(
    french.lang === 'fr' && french.texts['explorer.step-mode'] === shown(catalogue('fr')['explorer.step-mode']),
    JSON.stringify(french.texts['explorer.step-mode']),
  );
});

test("French: the core's input error under the options is the catalogue's French (errorWords), naming the same option", async ({
  page,
  base,
}) => {
  await page.goto(`${base}?lang=fr`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.fill('#opt-heads', '3');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  const said = await page.$eval('#options-error', (e) => e.textContent ?? '');
  assert(/^heads = 3 ne divise pas d_model = (\d+) \(les \1 colonnes de W?_?Q\)$/.test(said), said);
});

test("French: the scores card's facts and its colour legend are the catalogue's French, not English", async ({ page, base }) => {
  await page.goto(`${base}?lang=fr`);
  await page.waitForSelector('body[data-ready="true"]');
  const facts = await page.$eval('article[data-step="scores"] .facts', (e) => e.textContent ?? '');
  assert(!facts.includes('variance of all scores'), `the scores card's facts are English: ${facts}`);
  // The message up to its number: "variance de tous les scores : " and then the number itself.
  const before = shown(catalogue('fr')['explorer.facts.scores-variance']).split('{variance}')[0];
  assert(before === 'variance de tous les scores : ', before);
  assert(new RegExp(`^${before}\\d+\\.\\d+`).test(facts), `the scores card's facts: ${facts}`);
  // The colour legends' words (export.legend.<scale>), as the component's.
  const legends = await page.$$eval('article[data-step="scores"] .scale-meaning, article[data-step="weights"] .scale-meaning', (es) =>
    es.map((e) => e.textContent),
  );
  const fr = catalogue('fr');
  const want = [`${fr['export.legend.signed']}:`, `${fr['export.legend.probability']}:`];
  assert(JSON.stringify(legends) === JSON.stringify(want), `the legends: ${legends.join(' | ')}`);
  // The example's source line: its French words (example.<id>.source), the paper's title as written.
  const preset = await page.$eval('#preset', (e) => e.value);
  const source = await page.$eval('#preset-source', (e) => e.textContent ?? '');
  assert(source.includes(fr[`example.${preset}.source`]) && !/made for this explorer/.test(source), `the source line: ${source}`);
});

for (const code of LANGUAGES) {
  test(`${code}: the explorer's own words in ${code} at 1440 × 900 and 390 × 844`, async ({ page, base }) => {
    const own = catalogue(code);
    const words = englishFor(code);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(`${base}?lang=${encodeURIComponent(code)}`);
      await page.waitForSelector('body[data-ready="true"]');
      const seen = await page.evaluate(readScreen);
      const where = `${code} at ${viewport.width}×${viewport.height}`;
      for (const [id, text] of Object.entries(seen.texts)) {
        if (VIEWS_WRITE.has(id)) continue;
        assert(text === shown(own[id]), `${where}: ${id} shows "${text}", not its translation "${shown(own[id])}"`);
      }
      for (const [id, value] of Object.entries(seen.attrs))
        if (!VIEWS_WRITE.has(id)) assert(value === shown(own[id]), `${where}: ${id} is "${value}"`);
      // The step cards' captions are the catalogue's (the core names them: title_id).
      for (const id of ['Q', 'scores', 'weights', 'output']) {
        assert(
          seen.captions[id] === own[`step.${id}`],
          `${where}: the ${id} card is captioned "${seen.captions[id]}", not "${own[`step.${id}`]}"`,
        );
      }
      assert(seen.placeholders.length === 0, `${where}: placeholders left: ${seen.placeholders.join(' ')}`);
      assert(seen.overflow <= 0, `${where}: the page is ${seen.overflow} px wider than the window (it would scroll sideways)`);
      const clipped = await clippedText(page, CLIPPED);
      assert(clipped.length === 0, `${where}: text clipped: ${clipped.join(' | ')}`);
      assert(seen.lang === code && seen.menu === code, `${where}: <html lang="${seen.lang}">, the menu on ${seen.menu}`);
      assert(seen.playgroundLink === `playground.html?lang=${code}`, `${where}: the playground link: ${seen.playgroundLink}`);
      const rtl = code === 'ar';
      assert(seen.dir === (rtl ? 'rtl' : 'ltr'), `${where}: dir ${seen.dir}`);
      assert(
        seen.panels.every((d) => d === seen.dir),
        `${where}: the panels run ${seen.panels.join(' ')}`,
      );
      assert(seen.ltr.length > 3 && seen.ltr.every((d) => d === 'ltr'), `${where}: matrices, heatmaps, formulas: ${seen.ltr.join(' ')}`);
      // A weight opened: the views' words (the panel's calculation, the cards, the glance, the
      // heads, the diagram, the status line) are the language's, with every placeholder filled.
      await page.click('article[data-step="weights"] td[data-r="0"][data-c="1"]');
      await page.waitForSelector('#drill .drill-target');
      await settled(page);
      const english = await englishShown(page, words, AREAS);
      assert(english.length === 0, `${where}: English on screen: ${JSON.stringify(english)}`);
      const open = await page.evaluate(() => document.querySelector('main')?.innerText ?? document.body.innerText);
      const left = open.match(/\{\s*[A-Za-z_]\w*\s*(,[^}]*)?\}/g) ?? [];
      assert(left.length === 0, `${where}: placeholders left with a cell open: ${left.join(' ')}`);
      const clippedOpen = await clippedText(page, CLIPPED);
      assert(clippedOpen.length === 0, `${where}: text clipped with a cell open: ${clippedOpen.join(' | ')}`);
    }
    // Step by step: where the stepper is, and its sentence, in the language.
    await page.click('#step-mode');
    const stepper = await page.evaluate(() => [
      document.getElementById('stepper-pos').textContent,
      document.getElementById('stepper-text').textContent,
    ]);
    const first = shown(own['explorer.stepper.position'])
      .replace('{n}', '1')
      .replace(/\{count\}.*$/, '');
    assert(stepper[0].startsWith(first) && stepper[0].endsWith(own['step.Q']), `${code}: the stepper says "${stepper[0]}"`);
    assert(
      stepper[1].length > 10 && !/[{}]/.test(stepper[1]) && !/\b(the|each|given|per)\b/.test(stepper[1]),
      `${code}: the step's sentence "${stepper[1]}"`,
    );
    await page.click('#step-all');
    // docs/: three languages' first screen (three scripts this machine's fonts draw; no CJK font here).
    if (code === 'ar' || code === 'es' || code === 'fr') {
      await page.setViewportSize(VIEWPORTS[0]);
      await page.evaluate(() => scrollTo(0, 0));
      await settled(page);
      await page.screenshot({ path: join(repo, 'docs', `i18n-explorer-${code}.png`) });
    }
  });
}

// ---- the share panel, the export panel and the embed builder (explorer.share/export/embed.*) ----
// Their words are written by views (share-panel.js, export-panel.js, embed-builder.js) in the
// page's language. English's words of those messages must not show in another language: the
// literal parts of each English message (its text outside placeholders and selects) that the
// language's own message does not also hold.
const { createTranslator } = await import(`${dist}i18n.js`);
const SHARE_IDS = (en) =>
  Object.keys(en).filter((id) => /^(explorer\.(share|export|embed|lesson)\.|explorer\.nav\.back|export\.)/.test(id));

/** The English parts of `id`'s message (outside {…}) that `own`'s message does not hold: words a translated view must not show. */
function englishParts(en, own, id) {
  let text = shown(en[id]);
  // Placeholders and selects (nested braces) removed, innermost first.
  for (let before = ''; before !== text;) {
    before = text;
    text = text.replace(/\{[^{}]*\}/g, '\u0000');
  }
  return text
    .split('\u0000')
    .map((s) => s.trim())
    .filter((s) => /\p{L}{2,}/u.test(s) && !shown(own[id]).includes(s));
}

/** The share panel's words in the page: its visible text, its controls' labels and options, what is clipped. */
function readSharePanel() {
  const share = document.getElementById('share');
  const visible = (e) => e.checkVisibility?.() ?? e.offsetParent !== null;
  const words = [share.innerText];
  for (const e of share.querySelectorAll('[aria-label], [title], [placeholder]'))
    for (const a of ['aria-label', 'title', 'placeholder']) if (e.hasAttribute(a)) words.push(e.getAttribute(a));
  for (const o of share.querySelectorAll('option')) words.push(o.textContent);
  const clipped = [];
  for (const e of share.querySelectorAll('*')) {
    if (!visible(e) || e.matches('input, select, option, textarea')) continue;
    if (![...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      clipped.push(`${e.tagName.toLowerCase()}#${e.id}: ${e.textContent.trim().slice(0, 50)}`);
  }
  return { text: words.join('\n'), clipped, overflow: document.documentElement.scrollWidth - innerWidth };
}

for (const code of ['fr', 'ar']) {
  test(`${code}: the share panel, the export panel and the embed builder speak ${code}`, async ({ page, base }) => {
    const en = catalogue('en');
    const own = catalogue(code);
    const t = createTranslator(code, own);
    const ids = SHARE_IDS(en);
    assert(ids.length > 80, `only ${ids.length} share/export/embed ids`);
    const parts = ids.flatMap((id) => englishParts(en, own, id).map((text) => ({ id, text })));
    assert(parts.length > 60, `only ${parts.length} English parts to look for`);
    const english = (text) =>
      parts.filter(({ text: p }) => new RegExp(`(^|[^\\p{L}])${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\p{L}]|$)`, 'u').test(text));
    for (const viewport of VIEWPORTS) {
      const where = `${code} at ${viewport.width}×${viewport.height}`;
      await page.setViewportSize(viewport);
      await page.goto(`${base}?lang=${code}`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#share', { state: 'attached' });
      await page.click('#embed-options summary');
      await page.click('#exercise-setup summary');
      // The export list and the embed choices are filled once the frame is painted.
      await page.waitForFunction(
        () => document.querySelectorAll('#export-what option').length > 3 && document.querySelectorAll('#embed-hide label').length > 3,
      );
      await page.click('#copy-link');
      await page.waitForFunction(() => document.getElementById('share-status').textContent.length > 0);
      const seen = await page.evaluate(readSharePanel);
      const found = english(seen.text);
      assert(found.length === 0, `${where}: English in the share panel: ${found.map((f) => `${f.id} "${f.text}"`).join(' | ')}`);
      assert(!/\{\s*[A-Za-z_]\w*\s*(,[^}]*)?\}/.test(seen.text), `${where}: a placeholder left unfilled: ${seen.text}`);
      assert(seen.clipped.length === 0, `${where}: text clipped: ${seen.clipped.join(' | ')}`);
      assert(seen.overflow <= 0, `${where}: the page is ${seen.overflow} px wider than the window`);
      // The copy message is the language's own (copied, or in the box when the clipboard is refused).
      const status = await page.$eval('#share-status', (e) => e.textContent);
      const said = ['explorer.share.copied', 'explorer.share.copyHere'].map((id) => t(id, { what: 'link' }));
      assert(said.includes(status), `${where}: the copy message "${status}" is not the catalogue's (${said.join(' | ')})`);
      // The step list of the export menu: the steps' captions in the language.
      const options = await page.$$eval('#export-what option', (os) => os.map((o) => o.textContent));
      assert(
        options[0] === own['explorer.export.all'] && options.includes(own['step.scores']),
        `${where}: export list ${options.join(' | ')}`,
      );
    }
    // An export: the whole solution's LaTeX, its headings in the language, in the preview box.
    await page.click('#share button[data-export="latex"]');
    await page.waitForFunction(() => document.getElementById('export-preview').dataset.format === 'latex');
    const tex = await page.$eval('#export-preview', (e) => /** @type {HTMLTextAreaElement} */ (e).value);
    assert(tex.includes(`\\paragraph{${t('export.solution.given')}}`), `${code}: the LaTeX export's "Given": ${tex.slice(0, 400)}`);
    assert(
      tex.includes(`. ${own['step.scores']}}`) && !tex.includes('Scaled dot-product attention'),
      `${code}: the LaTeX export's headings`,
    );
    // The link back to the playground.
    await page.goto(`${base}?lang=${code}&from=playground&back=${encodeURIComponent('playground.html#step=3')}`);
    await page.waitForSelector('.back-link');
    const back = await page.$eval('.back-link', (e) => e.textContent);
    assert(back === t('explorer.nav.back-step', { step: '3' }), `${code}: the back link says "${back}"`);
  });
}

// ---- the walkthroughs ("In practice", explorer.practice.*) ----------------------------------------
// Each walkthrough opened in French and stepped through to its end: no English of the catalogue in
// the panel (its frame, narration, body, fields), no placeholder left; the trace's warnings are the
// core's words (left out). The chunked form of linear attention, on the linear example. And the
// decoding's and the tiles' LaTeX downloads: their headings in French.
const { readFileSync } = await import('node:fs');

/** Steps a walkthrough from its first position to its last, checking the panel's words at each. */
async function walkThrough(page, words, where) {
  await page.focus('#pr-next');
  let position = null;
  for (let k = 0; k < 40; k++) {
    await settled(page);
    const now = await page.$eval('#practice-pos', (e) => e.textContent);
    if (now === position) return k;
    position = now;
    const english = await englishShown(page, words, '#practice', '.warning, #pr-do-error, #pr-drill');
    assert(english.length === 0, `${where}, ${now}: English on screen: ${JSON.stringify(english)}`);
    const text = await page.$eval('#practice', (e) => e.innerText);
    const left = text.match(/\{\s*[A-Za-z_]\w*\s*(,[^}]*)?\}/g) ?? [];
    assert(left.length === 0, `${where}, ${now}: placeholders left: ${left.join(' ')}`);
    await page.keyboard.press('ArrowRight');
  }
  throw new Error(`${where}: more than 40 positions`);
}

test('fr: each walkthrough, stepped through, speaks French', async ({ page, base }) => {
  const code = 'fr';
  const own = catalogue(code);
  const words = englishFor(code);
  await page.setViewportSize(VIEWPORTS[0]);
  const steps = {};
  for (const walk of ['softmax', 'decode', 'tiles', 'gradients']) {
    await page.goto(`${base}?lang=${code}&walk=${walk}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#practice-body :is(table, article)');
    assert(
      (await page.$eval(`#pr-tab-${walk}`, (e) => e.textContent.trim())) === own[`explorer.practice.${walk}.title`],
      `${walk}: the tab`,
    );
    steps[walk] = await walkThrough(page, words, `${code} ${walk}`);
    if (walk === 'decode' || walk === 'tiles') {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#practice-export button[data-walk-export="latex"]')]);
      const tex = readFileSync(await dl.path(), 'utf8');
      assert(tex.includes(`\\title{${own[`export.${walk}.title`]}}`), `${walk}: the LaTeX's title: ${tex.slice(0, 400)}`);
      assert(!/Multiply-adds|Every token|Query block|The recurrence/.test(tex), `${walk}: English in the LaTeX`);
    }
  }
  assert(steps.softmax >= 3 && steps.decode >= 3 && steps.tiles >= 3 && steps.gradients >= 3, JSON.stringify(steps));
  // Linear attention's recurrence: on the linear example, token by token and then in chunks of 2.
  await page.goto(`${base}?lang=${code}&walk=recurrent`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', 'linear');
  await page.waitForSelector('#pr-costs');
  steps.recurrent = await walkThrough(page, words, `${code} recurrent`);
  await page.fill('#pr-chunk', '2');
  await page.press('#pr-chunk', 'Tab');
  await page.waitForFunction((p) => document.getElementById('practice-pos').textContent.includes(p), 'Étape par bloc');
  await page.waitForSelector('#practice-body figure');
  const captions = await page.$$eval('#practice-body figcaption', (fs) => fs.map((f) => f.textContent));
  assert(captions.includes(own['explorer.practice.recurrent.inter']), `the chunked form's captions: ${captions.join(' | ')}`);
  steps.chunked = await walkThrough(page, words, `${code} recurrent in chunks`);
  assert(steps.recurrent >= 3 && steps.chunked >= 2, JSON.stringify(steps));
});

test("the page's own input errors in the language: an additive mask left empty", async ({ page, base }) => {
  for (const code of ['en', 'fr', 'ar']) {
    const want = catalogue(code)['explorer.mask.empty-additive'];
    await page.goto(`${base}?lang=${code}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.selectOption('#opt-mask', 'additive');
    // The page starts the mask as zeros; its text emptied.
    await page.click('#extras .editor button.tab[data-tab="text"]');
    await page.fill('#extras textarea', '');
    await page.waitForFunction((w) => document.body.innerText.includes(w), want, { timeout: 5000 });
  }
  const english = catalogue('en')['explorer.mask.empty-additive'];
  assert(english === 'the mask is empty: type an additive mask (0 keeps, -inf hides)', english);
});
