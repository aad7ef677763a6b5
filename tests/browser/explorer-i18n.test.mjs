// The explorer page's words in each language of web/lib/locales (issue 33: index.html's data-i18n
// and the words its views write), at 1440 × 900 and 390 × 844: each translated element shows its
// catalogue's text, no placeholder is left unfilled, nothing in the header, the panels' headings,
// the step cards' heads, the glance, the heads, the open cell's line or the status line is
// clipped; with a weight open, no English of the catalogue shows in the page's main areas (the
// core's sentences left out until the core speaks in message ids); <html lang dir> are the
// language's, the link to the playground carries ?lang=, Arabic mirrors the panels and keeps
// matrices, heatmaps and formulas left to right. English's catalogue equals the HTML's words (so
// the prerendered English page is the catalogue's), and the menu switches language.
import { join } from 'node:path';

import { repo } from '../js/helpers.mjs';
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
// The core's words inside them, which the core's message ids bring (its explanation's sentence, its
// term table's caption and headers, the trace's warnings): left out here until the core speaks the
// catalogue's language.
const CORE_WORDS = '#drill-body > p:not(.drill-target, .drill-value), #drill-body table.terms :is(caption, thead), #warnings';
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

test("French: the scores card's facts are the catalogue's French, not English", async ({ page, base }) => {
  await page.goto(`${base}?lang=fr`);
  await page.waitForSelector('body[data-ready="true"]');
  const facts = await page.$eval('article[data-step="scores"] .facts', (e) => e.textContent ?? '');
  assert(!facts.includes('variance of all scores'), `the scores card's facts are English: ${facts}`);
  // The message up to its number: "variance de tous les scores : " and then the number itself.
  const before = shown(catalogue('fr')['explorer.facts.scores-variance']).split('{variance}')[0];
  assert(before === 'variance de tous les scores : ', before);
  assert(new RegExp(`^${before}\\d+\\.\\d+`).test(facts), `the scores card's facts: ${facts}`);
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
      const english = await englishShown(page, words, AREAS, CORE_WORDS);
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
    if (code === 'ar' || code === 'es') {
      await page.setViewportSize(VIEWPORTS[0]);
      await page.screenshot({ path: join(repo, 'docs', `i18n-explorer-${code}.png`) });
    }
  });
}
