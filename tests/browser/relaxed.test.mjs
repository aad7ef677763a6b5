// attention-explorer/fast in Chromium, which validates relaxed SIMD without a flag: the relaxed
// products (attention-relaxed.wasm, f32x4/f64x2.relaxed_madd) are linked in, and their outputs
// equal the SIMD128 products' ({ relaxedSimd: false }) to float32 / float64 rounding, also under
// a strict Content-Security-Policy (compiling the relaxed module needs only 'wasm-unsafe-eval').
//   node --test tests/browser/relaxed.test.mjs
import assert from 'node:assert/strict';

import { compareKernels, RELAXED_LIMITS } from '../js/relaxed-check.mjs';
import { browserSuite } from './server.mjs';

const test = browserSuite('relaxed', { contextPerTest: true, timeout: 120000 });

/**
 * compareKernels (tests/js/relaxed-check.mjs) run in an empty page of the site's origin (the
 * site's own page would load the whole explorer), served with the `headers` given.
 */
async function inPage(page, base, headers = {}) {
  await page.route(`${base}empty.html`, (route) =>
    route.fulfill({
      contentType: 'text/html',
      headers,
      body: '<!doctype html><title>relaxed</title><link rel="icon" href="data:,">',
    }),
  );
  await page.goto(`${base}empty.html`);
  return page.evaluate(compareKernels, '/lib/fast-index.js');
}

function check(report) {
  assert.equal(report.relaxed, 'wasm-relaxed-simd');
  assert.equal(report.simd128, 'wasm-simd128');
  for (const c of report.cases) {
    assert.ok(c.finite, `${c.name}: non-finite output`);
    assert.ok(c.worst <= RELAXED_LIMITS[c.precision], `${c.name}: relaxed and SIMD128 differ by ${c.worst}`);
  }
}

test('relaxed SIMD is chosen, and equals SIMD128 to rounding', async ({ page, base }) => {
  const report = await inPage(page, base);
  check(report);
  const worst = (precision) => Math.max(...report.cases.filter((c) => c.precision === precision).map((c) => c.worst));
  console.log(
    `# relaxed vs SIMD128 in Chromium: largest |difference| ${worst('float32').toExponential(1)} (float32), ${worst('float64').toExponential(1)} (float64)`,
  );
});

test('the same under a strict Content-Security-Policy', async ({ page, base }) => {
  const violations = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Content-Security-Policy/i.test(m.text())) violations.push(m.text());
  });
  check(await inPage(page, base, { 'Content-Security-Policy': "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; img-src data:" }));
  assert.deepEqual(violations, []);
});
