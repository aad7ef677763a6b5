// The browser entry's two modules in Chromium: the page loads the core alone, and
// engine.loadWalkthroughs() fetches attention-walkthroughs.{js,wasm} only when asked.
//   node --test tests/browser/walkthroughs.test.mjs
import assert from 'node:assert/strict';

import { browserSuite } from './server.mjs';

const test = browserSuite('walkthroughs', { httpErrors: true, timeout: 30000, screenshots: 'walkthroughs-' });

test('the page loads the core only; loadWalkthroughs() fetches the walkthroughs once', async ({ page, base, requests }) => {
  await page.waitForFunction(() => document.querySelector('article[data-key]'), null, { timeout: 60000 });
  const walkthroughRequests = () => requests.filter((u) => u.includes('attention-walkthroughs'));
  assert.ok(
    requests.some((u) => u.endsWith('/attention.wasm')),
    'the core was fetched',
  );
  assert.deepEqual(walkthroughRequests(), []);

  const result = await page.evaluate(async (entry) => {
    const { loadAttention } = await import(entry);
    const engine = await loadAttention();
    const problem = {
      Q: [
        [1, 0],
        [0, 1],
      ],
      K: [
        [1, 2],
        [0, 1],
      ],
      V: [
        [1, 2],
        [3, 4],
      ],
    };
    let before;
    try {
      engine.gradients(problem);
    } catch (error) {
      before = error.message;
    }
    const loaded = await Promise.all([engine.loadWalkthroughs(), engine.loadWalkthroughs()]);
    const weights = engine.run(problem).steps.find((s) => s.id === 'weights').data;
    const dV = engine.gradients(problem).steps.find((s) => s.id === 'dV' && s.head === null).data;
    return { before, same: loaded.every((e) => e === engine), loaded: engine.walkthroughsLoaded, weights, dV };
  }, `${base}lib/index.js`);

  assert.equal(
    result.before,
    'engine.gradients needs the walkthroughs module: await engine.loadWalkthroughs() first, ' + 'or loadAttention({ walkthroughs: true })',
  );
  assert.ok(result.same && result.loaded);
  // dO all ones: dV[j][c] = Σ_i A[i][j], whatever the column.
  result.dV.forEach((row, j) => {
    const column = result.weights[0][j] + result.weights[1][j];
    row.forEach((x) => assert.ok(Math.abs(x - column) < 1e-15, `dV[${j}] ${x} vs ${column}`));
  });
  const fetched = walkthroughRequests()
    .map((u) => u.slice(u.lastIndexOf('/') + 1))
    .sort();
  assert.deepEqual(fetched, ['attention-walkthroughs.js', 'attention-walkthroughs.wasm']);
});
