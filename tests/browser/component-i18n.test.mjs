// <attention-explorer lang="xx"> (issue 33): the element's words in the language of its lang
// attribute: step captions (with their heads), colour legends, inputs' captions and fields' labels,
// a lesson's question's words and buttons, its error messages; no English of the catalogue shows;
// Arabic is right to left with its tables and formulas left to right; lang changes at run time.
//   node --test tests/browser/component-i18n.test.mjs
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { dist } from '../js/helpers.mjs';
import { browserSuite, catalogue, englishFor, englishShown } from './server.mjs';

const pkg = await import(join(dist, 'node.js'));
const engine = await pkg.loadAttention();
const problem000 = pkg.presetProblem(pkg.findPreset('000'), engine).problem;

// A lesson whose teacher's words are not English (they are the teacher's, shown as written).
const LESSON = {
  format: 'attention-explorer lesson',
  version: 1,
  problem: problem000,
  tokens: { q: ['a', 'b', 'c', 'd'] },
  lesson: {
    'weights:0': { say: '…', ask: '¿?', answer: { kind: 'key', row: 1 } },
    'scores:0': { ask: '¿?', answer: { kind: 'number', row: 1, col: 1, tolerance: 0.01 } },
  },
};

const test = browserSuite('component-i18n', { contextPerTest: true, screenshots: 'component-i18n-' });

/** Writes a host page with the elements of `body` and opens it, waiting until every element drew its steps or an error. */
async function host(page, base, siteDir, body) {
  writeFileSync(
    join(siteDir, 'component-i18n.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>component i18n</title>
    <link rel="icon" href="data:,"><script type="module" src="lib/component.js"></script></head><body>${body}</body></html>`,
  );
  await page.goto(`${base}component-i18n.html`);
  await page.waitForFunction(() =>
    [...document.querySelectorAll('attention-explorer')].every((el) => el.shadowRoot?.querySelector('section.step, .error')),
  );
}

/** What element `id` shows: its steps' captions and headings, legends, labels, directions. */
const read = (page, id) =>
  page.$eval(`#${id}`, (el) => {
    const r = el.shadowRoot;
    const all = (sel, f = (e) => e.textContent.trim()) => [...r.querySelectorAll(sel)].map(f);
    return {
      lang: r.querySelector('.body').lang,
      dir: getComputedStyle(r.querySelector('.body')).direction,
      headings: all('section.step > h3', (h) => h.firstChild.textContent.trim()),
      captions: all('table[data-step] caption'),
      legends: all('.scale-meaning'),
      labels: all('[aria-label]', (e) => e.getAttribute('aria-label')),
      inputCaptions: all('table[data-input] caption'),
      buttons: all('button'),
      ltr: all('table, .formula, .shape', (e) => getComputedStyle(e).direction),
      error: r.querySelector('.error')?.textContent ?? null,
      title: r.querySelector('.title')?.textContent ?? null,
      text: r.querySelector('.body').innerText,
    };
  });

/** The catalogue's English that element `id` shows (its text, and its fields' labels as a whole message). */
async function englishIn(page, id, code) {
  const words = englishFor(code);
  const shownEnglish = await englishShown(page, words, '.body', null, `#${id}`);
  const { labels } = await read(page, id);
  for (const label of labels) for (const p of words.pieces) if (label.includes(p)) shownEnglish.push(`aria-label: ${p}`);
  return shownEnglish;
}

test('lang="fr" and lang="ar": no English of the catalogue; Arabic right to left, its tables and formulas left to right', async ({
  page,
  base,
  siteDir,
}) => {
  await host(
    page,
    base,
    siteDir,
    `<attention-explorer id="fr" lang="fr" preset="multihead" editable="X"></attention-explorer>
    <attention-explorer id="ar" lang="ar" preset="000" editable="Q"></attention-explorer>
    <attention-explorer id="lesson-fr" lang="fr"><script type="application/json" slot="lesson">${JSON.stringify(LESSON)}</script></attention-explorer>
    <attention-explorer id="bad-fr" lang="fr" preset="nope"></attention-explorer>
    <attention-explorer id="en" preset="multihead"></attention-explorer>`,
  );
  const fr = catalogue('fr');
  const ar = catalogue('ar');
  const shownFr = await read(page, 'fr');
  assert.equal(shownFr.lang, 'fr');
  assert.equal(shownFr.dir, 'ltr');
  // Captions with their heads, in French: "Poids d'attention, tête 2".
  const weightsFr = fr['export.caption.head'].replace('{title}', fr['step.weights']).replace('{head}', '2');
  assert(shownFr.headings.includes(weightsFr), `French headings: ${shownFr.headings.join(' | ')}`);
  assert(shownFr.captions.includes(weightsFr), `French table captions: ${shownFr.captions.join(' | ')}`);
  assert(shownFr.legends.includes(`${fr['export.legend.probability']}:`), `French legends: ${shownFr.legends.join(' | ')}`);
  assert(shownFr.labels.includes('X ligne 1, colonne 1'), `French fields' labels: ${shownFr.labels.slice(0, 3).join(' | ')}`);
  assert.deepEqual(shownFr.inputCaptions, ['X (modifiable)']);
  assert.equal(shownFr.title, fr['example.multihead.title']);
  // English, for comparison: the same element without lang, in the test browser's English.
  const shownEn = await read(page, 'en');
  assert(shownEn.headings.includes('Attention weights, head 2'), `English headings: ${shownEn.headings.join(' | ')}`);
  assert(shownEn.legends.includes('weight, 0 to 1:'), `English legends: ${shownEn.legends.join(' | ')}`);

  const shownAr = await read(page, 'ar');
  assert.equal(shownAr.lang, 'ar');
  assert.equal(shownAr.dir, 'rtl', 'the Arabic element reads right to left');
  assert(shownAr.ltr.length > 10 && shownAr.ltr.every((d) => d === 'ltr'), `Arabic tables, formulas and shapes: ${shownAr.ltr}`);
  assert(shownAr.headings.includes(ar['step.weights']), `Arabic headings: ${shownAr.headings.join(' | ')}`);
  assert(shownAr.legends.includes(`${ar['export.legend.probability']}:`), `Arabic legends: ${shownAr.legends.join(' | ')}`);
  // The numbers keep the code's digits and decimal point.
  assert(/\d\.\d{4}/.test(shownAr.text), 'Arabic numbers as the code writes them');

  const lesson = await read(page, 'lesson-fr');
  assert.deepEqual(lesson.buttons, [fr['explorer.step-check'], fr['explorer.step-check']]);
  assert(lesson.text.includes(fr['explorer.predict-first']), `French question: ${lesson.text}`);
  assert(lesson.text.includes(fr['explorer.label.answer-number']), `French number field: ${lesson.text}`);
  // Answered: the verdict is French too (the lesson's checked answer, lesson.verdict.*).
  await page.$eval('#lesson-fr', (el) => {
    const form = el.shadowRoot.querySelector('form.ask input[name="key"]').closest('form');
    form.querySelector('input[name="key"]').checked = true;
    form.requestSubmit();
  });
  await page.waitForFunction(() => document.getElementById('lesson-fr').shadowRoot.querySelector('.verdict'));
  const verdict = await page.$eval('#lesson-fr', (el) => el.shadowRoot.querySelector('.verdict').textContent);
  assert.match(verdict, /^(Exact|Pas tout à fait) : a? ?\S+ reçoit \d\.\d{4} /);

  const bad = await read(page, 'bad-fr');
  assert.equal(bad.error, 'préréglage inconnu « nope »');

  for (const [id, code] of [
    ['fr', 'fr'],
    ['ar', 'ar'],
    ['lesson-fr', 'fr'],
    ['bad-fr', 'fr'],
  ]) {
    const english = await englishIn(page, id, code);
    assert.deepEqual(english, [], `#${id} (${code}) shows English: ${english.join(' | ')}`);
  }
});

test('lang changes at run time, through every language: every word is redrawn, no English shows, a failed load says its error again', async ({
  page,
  base,
  siteDir,
}) => {
  await host(
    page,
    base,
    siteDir,
    `<attention-explorer id="x" lang="fr" preset="multihead" editable="X"></attention-explorer>
    <attention-explorer id="bad" lang="fr" preset="nope"></attention-explorer>`,
  );
  const before = await read(page, 'x');
  const values = await page.$eval('#x', (el) => [...el.shadowRoot.querySelectorAll('td')].map((td) => td.textContent));
  // Every language of the catalogues in turn (French was the first), and English between them.
  for (const [code, heading, legend] of [
    ['ar', null, null],
    ['en', 'Attention weights, head 2', 'weight, 0 to 1:'],
    ['ja', null, null],
    ['zh-CN', null, null],
    ['es', null, null],
    ['pt-BR', null, null],
    ['ko', null, null],
  ]) {
    const t = catalogue(code);
    const wantHeading = heading ?? t['export.caption.head'].replace('{title}', t['step.weights']).replace('{head}', '2');
    const wantLegend = legend ?? `${t['export.legend.probability']}:`;
    await page.$eval('#x', (el, c) => el.setAttribute('lang', c), code);
    await page.$eval('#bad', (el, c) => el.setAttribute('lang', c), code);
    await page.waitForFunction(
      ([c, h]) => {
        const r = document.getElementById('x').shadowRoot;
        return (
          r.querySelector('.body').lang === c && [...r.querySelectorAll('section.step > h3')].some((e) => e.firstChild.textContent === h)
        );
      },
      [code, wantHeading],
    );
    const now = await read(page, 'x');
    assert.equal(now.dir, code === 'ar' ? 'rtl' : 'ltr', `${code}: direction`);
    assert(now.legends.includes(wantLegend), `${code}: legends ${now.legends.join(' | ')}`);
    assert.notDeepEqual(now.headings, before.headings, `${code}: the headings were redrawn`);
    assert.equal(now.title, t['example.multihead.title'], `${code}: the example's title`);
    if (code !== 'en') {
      const english = await englishIn(page, 'x', code);
      assert.deepEqual(english, [], `${code} shows English: ${english.join(' | ')}`);
    }
    // The numbers are the same in every language.
    assert.deepEqual(await page.$eval('#x', (el) => [...el.shadowRoot.querySelectorAll('td')].map((td) => td.textContent)), values);
    const wantError = code === 'en' ? 'unknown preset "nope"' : t['component.unknown-preset'].replace('{preset}', 'nope');
    await page.waitForFunction((w) => document.getElementById('bad').shadowRoot.querySelector('.error')?.textContent === w, wantError);
  }
});

test('a lesson\'s "lang": the component speaks it without a lang attribute (its attribute wins); the page opens ?lesson=URL in it unless ?lang= says otherwise', async ({
  page,
  base,
  siteDir,
}) => {
  writeFileSync(join(siteDir, 'lesson-fr.json'), JSON.stringify({ ...LESSON, lang: 'fr' }));
  await host(
    page,
    base,
    siteDir,
    `<attention-explorer id="from-lesson" lesson="lesson-fr.json"></attention-explorer>
    <attention-explorer id="chosen" lang="ja" lesson="lesson-fr.json"></attention-explorer>`,
  );
  const fr = catalogue('fr');
  const ja = catalogue('ja');
  const fromLesson = await read(page, 'from-lesson');
  assert.equal(fromLesson.lang, 'fr');
  assert.deepEqual(fromLesson.buttons, [fr['explorer.step-check'], fr['explorer.step-check']]);
  assert.deepEqual(await englishIn(page, 'from-lesson', 'fr'), []);
  const chosen = await read(page, 'chosen');
  assert.equal(chosen.lang, 'ja');
  assert.deepEqual(chosen.buttons, [ja['explorer.step-check'], ja['explorer.step-check']]);

  // The page: ?lesson=URL of a French lesson opens in French (reloaded with ?lang=fr, the lesson kept).
  await page.goto(`${base}index.html?lesson=lesson-fr.json`);
  await page.waitForFunction(() => document.documentElement.lang === 'fr' && document.body.dataset.ready === 'true');
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('lang'), 'fr');
  assert.equal(url.searchParams.get('lesson'), 'lesson-fr.json');
  assert.equal(await page.$eval('#step-check', (e) => e.textContent.trim()), fr['explorer.step-check']);
  // The reader's ?lang= wins over the lesson's.
  await page.goto(`${base}index.html?lang=es&lesson=lesson-fr.json`);
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'es');
  assert.equal(new URL(page.url()).searchParams.get('lang'), 'es');
});

test("the core's input errors in the element's language, redrawn when lang changes (English the API's own words)", async ({
  page,
  base,
  siteDir,
}) => {
  const problem = {
    Q: [[1, 2]],
    K: [
      [1, 2],
      [3, 4],
    ],
    V: [[1]],
  };
  await host(
    page,
    base,
    siteDir,
    `<attention-explorer id="kv" lang="fr"><script type="application/json">${JSON.stringify(problem)}</script></attention-explorer>`,
  );
  assert.equal((await read(page, 'kv')).error, 'K a 2 lignes mais V en a 1 : chaque clé a besoin d’une valeur (K est 2x2, V est 1x1)');
  for (const want of [
    ['en', 'K has 2 rows but V has 1: every key needs a value (K is 2x2, V is 1x1)'],
    ['ja', 'K は 2 行ですが V は 1 です：各キーにはバリューが必要です（K は 2x2、V は 1x1）'],
  ]) {
    await page.$eval('#kv', (el, c) => el.setAttribute('lang', c), want[0]);
    await page.waitForFunction((w) => document.getElementById('kv').shadowRoot.querySelector('.error')?.textContent === w, want[1]);
  }
});
