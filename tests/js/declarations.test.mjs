// Each entry's runtime exports are exactly the names its hand-written .d.ts declares (the
// package's dist/, as package.json "exports" maps them). `npm run typecheck` checks the types of
// what is declared against the JS (docs/ARCHITECTURE.md, "Types"); this checks that nothing the
// JS exports is left undeclared, and that nothing declared is missing at run time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

/** The value exports a .d.ts declares (types and interfaces are not values). */
function declared(dts) {
  const text = readFileSync(`${dist}${dts}`, 'utf8');
  const names = [...text.matchAll(/^export (?:declare )?(?:function|const|let|class) (\w+)/gm)].map((m) => m[1]);
  for (const [, list] of text.matchAll(/^export \{([^}]*)\} from/gm)) names.push(...list.split(',').map((n) => n.trim()));
  if (/^export default /m.test(text)) names.push('default');
  return [...new Set(names)].sort();
}

const ENTRIES = [
  ['index.js', 'index.d.ts'],
  ['node.js', 'index.d.ts'],
  ['fast-index.js', 'fast-index.d.ts'],
  ['fast-node.js', 'fast-index.d.ts'],
  ['component.js', 'component.d.ts'],
  ['widget.js', 'widget.d.ts'],
  ['playground.js', 'playground.d.ts'],
  ['share.js', 'share.d.ts'],
  ['i18n.js', 'i18n.d.ts'],
];

for (const [entry, dts] of ENTRIES) {
  test(`${entry} exports what ${dts} declares, no more and no less`, async () => {
    const runtime = Object.keys(await import(`${dist}${entry}`)).sort();
    assert.deepEqual(runtime, declared(dts));
  });
}
