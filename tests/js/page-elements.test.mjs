// web/page/app.js's PageElements (the element type of each id `$` finds, for `npm run typecheck`)
// against the page's HTML: index.html, playground.html, embedding.html and the templates in
// web/page/**/*.js. Only tags whose element type adds something to HTMLElement are listed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { repo } from './helpers.mjs';

const TYPES = {
  a: 'HTMLAnchorElement',
  button: 'HTMLButtonElement',
  canvas: 'HTMLCanvasElement',
  details: 'HTMLDetailsElement',
  dialog: 'HTMLDialogElement',
  form: 'HTMLFormElement',
  iframe: 'HTMLIFrameElement',
  img: 'HTMLImageElement',
  input: 'HTMLInputElement',
  output: 'HTMLOutputElement',
  progress: 'HTMLProgressElement',
  select: 'HTMLSelectElement',
  table: 'HTMLTableElement',
  template: 'HTMLTemplateElement',
  textarea: 'HTMLTextAreaElement',
};

test("app.js's PageElements lists every typed element of the page's HTML, with its tag's type", () => {
  const page = join(repo, 'web', 'page');
  const expected = {};
  for (const file of readdirSync(page, { recursive: true })
    .filter((f) => /\.(html|js)$/.test(f) && !f.startsWith('vendor'))
    .sort()) {
    const text = readFileSync(join(page, file), 'utf8');
    // An id written out (not `${...}`) on an element of a tag in TYPES.
    for (const [, tag, id] of text.matchAll(/<([a-z][a-z0-9-]*)\b[^>]*?\bid="([^"$]+)"/g)) {
      if (!(tag in TYPES)) continue;
      assert.ok(expected[id] === undefined || expected[id] === TYPES[tag], `#${id} is a ${expected[id]} and a ${TYPES[tag]} (${file})`);
      expected[id] = TYPES[tag];
    }
  }
  const app = readFileSync(join(page, 'app.js'), 'utf8');
  const block = /@typedef \{\{\n([\s\S]*?)\n \* \}\} PageElements/.exec(app);
  assert.ok(block, 'no PageElements typedef in web/page/app.js');
  const declared = Object.fromEntries([...block[1].matchAll(/'([^']+)': (\w+),/g)].map((m) => [m[1], m[2]]));
  assert.deepEqual(declared, expected);
});
