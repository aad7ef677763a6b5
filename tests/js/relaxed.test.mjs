// attention-explorer/fast's kernel choice in Node: the relaxed-SIMD module (attention-relaxed.wasm,
// f32x4/f64x2.relaxed_madd) where the engine validates it, the SIMD128 products where it does not.
// Node 20 validates relaxed SIMD only with --experimental-wasm-relaxed-simd, so this process shows
// the fallback and a child process with the flag the relaxed kernels.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist } from './helpers.mjs';
import { RELAXED_LIMITS } from './relaxed-check.mjs';

const entry = pathToFileURL(`${dist}fast-node.js`).href;
const { default: relaxedBase64 } = await import(pathToFileURL(`${dist}relaxed-kernels.js`).href);
const relaxedBytes = Buffer.from(relaxedBase64, 'base64');

test('the relaxed module is real relaxed SIMD: valid with the flag, not without it on Node 20', () => {
  const validates = WebAssembly.validate(relaxedBytes);
  if (process.versions.node.startsWith('20.')) assert.equal(validates, false);
  const child = spawnSync(
    process.execPath,
    [
      '--experimental-wasm-relaxed-simd',
      '-e',
      `console.log(WebAssembly.validate(Buffer.from(${JSON.stringify(relaxedBase64)}, 'base64')))`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(child.stdout.trim(), 'true', child.stderr);
});

test('without relaxed SIMD the fast entry falls back to the SIMD128 products', async () => {
  const { loadFastAttention } = await import(entry);
  const fast = await loadFastAttention();
  assert.equal(fast.fastKernels(), WebAssembly.validate(relaxedBytes) ? 'wasm-relaxed-simd' : 'wasm-simd128');
  assert.equal((await loadFastAttention({ relaxedSimd: false })).fastKernels(), 'wasm-simd128');
  // The fallback computes: seed 004's output.
  const r = fast.attention({
    Q: [
      [1, 0],
      [0, 1],
    ],
    K: [
      [1, 0],
      [0, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
    ],
  });
  [1.6604769, 2.6604769, 2.3395231, 3.3395231].forEach((x, i) => assert.ok(Math.abs(r.output[i] - x) <= 5e-8, `${r.output[i]}`));
});

test('with --experimental-wasm-relaxed-simd: relaxed kernels, equal to SIMD128 to rounding', () => {
  const script = `import { compareKernels } from ${JSON.stringify(new URL('./relaxed-check.mjs', import.meta.url).href)};
    console.log(JSON.stringify(await compareKernels(${JSON.stringify(entry)})));`;
  const child = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  assert.equal(child.status, 0, child.stderr);
  const report = JSON.parse(child.stdout.trim().split('\n').pop());
  assert.equal(report.relaxed, 'wasm-relaxed-simd');
  assert.equal(report.simd128, 'wasm-simd128');
  for (const c of report.cases) {
    assert.ok(c.finite, `${c.name}: non-finite output`);
    assert.ok(c.worst <= RELAXED_LIMITS[c.precision], `${c.name}: relaxed and SIMD128 differ by ${c.worst}`);
  }
});
