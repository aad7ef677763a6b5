// The page's import map, kept once in web/page/importmap.json: the page's modules import the
// package by its public names (`attention-explorer`, ...). Each HTML file of web/page holds
// MARKER where the map belongs. `npm run dev` (serve.mjs --dev) puts the map there inline;
// build-site.mjs applies it to the copied modules instead (a strict Content-Security-Policy,
// script-src 'self' as learning platforms use, blocks inline import maps) and drops the marker.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MARKER = '<!-- import map: web/page/importmap.json, put here by scripts/importmap.mjs -->';
const file = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'web', 'page', 'importmap.json');

/** The map's `imports`: specifier -> path relative to the page. */
export function pageImports() {
  return JSON.parse(readFileSync(file, 'utf8')).imports;
}

/** `html` with the map inline in place of MARKER (unchanged without a marker). */
export function withImportMap(html) {
  const map = JSON.stringify({ imports: pageImports() }, null, 2).replace(/\n/g, '\n  ');
  return html.replace(MARKER, `<script type="importmap">\n  ${map}\n  </script>`);
}
