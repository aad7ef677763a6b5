// The playground in each language of web/lib/locales (issue 33), at 1440 × 900 and 390 × 844, one
// page load each: no English interface words of the catalogue left on screen, no placeholder left
// unfilled, no text clipped in the header, the panels or the status line; <html lang dir> and the
// explorer link's ?lang; Arabic right to left with its curves, heatmaps and token rows left to
// right. One training step at the wide size, so that the status line and the heads' badges are
// filled. Screenshots of ar, es and fr go to docs/ (docs/i18n-playground-<lang>.png).
import { join } from 'node:path';

import { repo } from '../js/helpers.mjs';
import { assert, browserSuite, clippedText, englishFor, englishShown } from './server.mjs';

const LANGUAGES = ['zh-CN', 'es', 'pt-BR', 'fr', 'ja', 'ko', 'ar'];
// Languages whose script this machine's Chromium has fonts for (no CJK fonts are installed on it).
const SCREENSHOTS = new Set(['ar', 'es', 'fr']);
const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];
// The header, the panels and the status line: where the English and the clipped text are looked for.
const REGIONS = '.pg-site-header, .pg-side, .pg-panel, .pg-statusbar';

const test = browserSuite('playground-i18n', { contextPerTest: true, timeout: 20000, screenshots: 'playground-i18n-' });

/** What the page shows, read in the page: placeholders, lang/dir, directions. */
function readScreen() {
  const body = document.body.innerText;
  const direction = (selector) => [...document.querySelectorAll(selector)].map((e) => getComputedStyle(e).direction);
  return {
    placeholders: body.match(/\{\s*[A-Za-z_]\w*\s*(,[^}]*)?\}/g) ?? [],
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    explorerLink: document.getElementById('pg-explorer-link')?.getAttribute('href'),
    playgroundDir: getComputedStyle(document.querySelector('.pg')).direction,
    ltr: {
      curves: direction('.pg-curves'),
      maps: direction('.pg-map'),
      heads: direction('.pg-heads'),
      tokens: direction('.pg-tokens'),
      predictions: direction('.pg-predictions'),
      probe: direction('#pg-probe'),
    },
  };
}

for (const code of LANGUAGES) {
  test(`${code}: the playground in ${code} at 1440 × 900 and 390 × 844`, async ({ page, base }) => {
    const words = englishFor(code);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(`${base}playground.html?lang=${encodeURIComponent(code)}`);
      await page.waitForSelector('#playground-status[data-step="0"]');
      const wide = viewport.width > 800;
      if (wide) {
        // One step: the status line's numbers and the heads' badges drawn. Step is ignored while
        // the model is still being made and measured: clicked again until it is taken.
        await page.waitForSelector('#playground-status:not([data-accuracy=""])');
        for (let tries = 0; ; tries++) {
          await page.click('.pg-buttons button:nth-child(2)');
          const taken = await page.waitForSelector('#playground-status[data-step="1"]', { timeout: 2000 }).catch(() => null);
          if (taken) break;
          assert(tries < 10, `${code}: Step was not taken after ${tries + 1} clicks`);
        }
        await page.waitForSelector('.pg-badge');
      }
      const seen = await page.evaluate(readScreen);
      seen.english = await englishShown(page, words, REGIONS);
      seen.clipped = await clippedText(page, REGIONS, 'input, select, option, canvas, progress');
      const where = `${code} at ${viewport.width}×${viewport.height}`;
      assert(seen.english.length === 0, `${where}: English on screen: ${JSON.stringify(seen.english)}`);
      assert(seen.placeholders.length === 0, `${where}: placeholders left: ${seen.placeholders.join(' ')}`);
      assert(seen.clipped.length === 0, `${where}: text clipped: ${seen.clipped.join(' | ')}`);
      assert(seen.lang === code, `${where}: <html lang="${seen.lang}">`);
      assert(seen.explorerLink === `index.html?lang=${code}`, `${where}: the explorer link carries the language: ${seen.explorerLink}`);
      const rtl = code === 'ar';
      assert(
        seen.dir === (rtl ? 'rtl' : 'ltr') && seen.playgroundDir === seen.dir,
        `${where}: dir ${seen.dir}, the playground's ${seen.playgroundDir}`,
      );
      for (const [what, dirs] of Object.entries(seen.ltr)) {
        assert(dirs.length > 0 && dirs.every((d) => d === 'ltr'), `${where}: ${what} left to right: ${dirs.join(' ')}`);
      }
      if (wide && SCREENSHOTS.has(code)) await page.screenshot({ path: join(repo, 'docs', `i18n-playground-${code}.png`) });
    }
  });
}
