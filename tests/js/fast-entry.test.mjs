// `attention-explorer/fast`: the output-only path on its own module (attention-fast.wasm). Same
// kernels, same JS as engine.attention, so the numbers must be identical bit for bit.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { dist, generator } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const { loadFastAttention, version } = await import(`${dist}fast-node.js`);
const engine = await loadAttention();
const lean = await loadFastAttention();

test('the lean engine has only the fast path', () => {
  assert.deepEqual(Object.keys(lean).sort(), ['attention', 'fastKernels', 'heapStats', 'version']);
  assert.equal(lean.version, version);
  assert.equal(lean.version, engine.version);
  assert.equal(lean.fastKernels(), 'wasm-simd128');
});

test('seed 004: 1.6604769 2.6604769 / 2.3395231 3.3395231', () => {
  const r = lean.attention({
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
  assert.deepEqual(r.shape, [2, 2]);
  [1.6604769, 2.6604769, 2.3395231, 3.3395231].forEach((x, i) => assert.ok(Math.abs(r.output[i] - x) <= 5e-8, `${r.output[i]}`));
});

test('bit for bit the numbers of engine.attention (sizes, masks, causal, both precisions)', () => {
  const next = generator(3);
  for (const [L, S, d] of [
    [1, 1, 1],
    [4, 4, 8],
    [17, 33, 64],
    [300, 257, 64],
  ]) {
    for (const Type of [Float32Array, Float64Array]) {
      const Q = Type.from({ length: L * d }, next);
      const K = Type.from({ length: S * d }, next);
      const V = Type.from({ length: S * d }, next);
      const mask = Uint8Array.from({ length: L * S }, () => (next() > -0.8 ? 1 : 0));
      for (const extra of [{}, { causal: true }, { mask }, { scale: 0.25, causal: true }]) {
        const input = { Q, K, V, L, S, ...extra };
        const a = lean.attention(input);
        const b = engine.attention(input);
        assert.equal(a.output.constructor, Type);
        assert.deepEqual(a.output, b.output, `L=${L} S=${S} ${Type.name} ${JSON.stringify(Object.keys(extra))}`);
        assert.equal(a.fully_masked_rows, b.fully_masked_rows);
      }
    }
  }
});

test('errors are the same Errors, and the module works after them', () => {
  const one = [[1]];
  for (const input of [
    { Q: [[1]], K: [[1, 2]], V: one },
    { Q: [[NaN]], K: one, V: one },
    { Q: one, K: one, V: one, causall: true },
    { Q: one, K: one, V: one, mask: [[Infinity]] },
  ]) {
    let message;
    assert.throws(
      () => engine.attention(input),
      (e) => {
        message = e.message;
        return e instanceof Error;
      },
    );
    assert.throws(() => lean.attention(input), { message });
  }
  assert.equal(lean.attention({ Q: one, K: one, V: [[5]] }).output[0], 5);
});

test('a wrong wasmUrl names the file', async () => {
  await assert.rejects(loadFastAttention({ wasmUrl: '/nowhere/attention-fast.wasm' }), {
    message: 'could not load the WebAssembly module from /nowhere/attention-fast.wasm: no such file',
  });
  await assert.rejects(loadFastAttention({ wasmUrl: `${dist}fast-node.js` }), /is not a WebAssembly module/);
});

test('a crash inside the wasm reloads the module; the next call is right', async () => {
  const { default: createFastModule } = await import(`${dist}attention-fast.js`);
  const { loadModule } = await import(`${dist}load.js`);
  const { createFastEngine } = await import(`${dist}fast.js`);
  let crashNext = false;
  let instances = 0;
  const createModule = (arg) =>
    createFastModule(arg).then((m) => {
      instances++;
      const real = m._fastRun;
      m._fastRun = (...args) => {
        if (crashNext) {
          crashNext = false;
          throw new WebAssembly.RuntimeError('unreachable');
        }
        return real(...args);
      };
      return m;
    });
  const bytes = readFileSync(`${dist}attention-fast.wasm`);
  const eng = createFastEngine(...(await loadModule(createModule, async () => bytes, 'attention-fast.wasm')));
  const input = {
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
  };
  const before = eng.attention(input).output;
  crashNext = true;
  let caught;
  try {
    eng.attention(input);
  } catch (error) {
    caught = error;
  }
  assert.equal(caught?.message, 'the attention engine crashed (unreachable) in attention() and was reloaded');
  assert.ok(caught.cause instanceof WebAssembly.RuntimeError);
  assert.throws(() => eng.attention(input), {
    message: 'the attention engine crashed earlier (unreachable) and is still being reloaded: try again in a moment',
  });
  await caught.reloaded;
  assert.equal(instances, 2);
  assert.deepEqual(eng.attention(input).output, before);
});
