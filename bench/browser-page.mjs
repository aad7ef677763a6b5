// The page side of `node bench/bench.mjs --browser` (bench/browser.mjs drives it): ours through
// attention-explorer/fast (relaxed SIMD where Chromium has it, and SIMD128 forced with
// { relaxedSimd: false }), onnxruntime-web and tfjs-backend-wasm, all in this page, one thread.
// window.benchSetup(options) loads them and checks they agree; window.benchRound(round) times
// every implementation once per size and precision, in rotating order.
import { loadAttention } from '/dist/index.js';
import { loadFastAttention } from '/dist/fast-index.js';
import { median, randomArray } from '/bench/inputs.mjs';
import { attentionModel } from '/bench/onnx-model.mjs';

const PRECISIONS = [
  ['float32', Float32Array],
  ['float64', Float64Array],
];
const state = { impls: {}, inputs: {} };

/**
 * Median ms of one call. performance.now() is coarsened to 100 µs in a page that is not
 * cross-origin isolated, so calls are timed in batches of at least 2 ms.
 */
async function timeCall(fn, budget) {
  const once = async () => {
    const r = fn();
    if (r && typeof r.then === 'function') await r;
  };
  let batch = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) await once();
    if (performance.now() - t0 >= 2) break;
    batch *= 2;
  }
  const samples = [];
  const start = performance.now();
  while (samples.length < 3 || performance.now() - start < budget) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) await once();
    samples.push((performance.now() - t0) / batch);
    if (samples[0] > 4 * budget) break; // a slow peer: one sample will do
  }
  return median(samples);
}

/** µs per call of a synchronous call, as bench/bench.mjs measures tiny problems: 7 rounds, median. */
function perCall(fn, calls) {
  const per = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) fn();
    per.push(((performance.now() - t0) / calls) * 1000);
  }
  return median(per);
}

async function makeOrt(precision, d) {
  const ort = await import('/ort/ort.wasm.min.mjs');
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const elem = precision === 'float64' ? 11 : 1;
  const session = await ort.InferenceSession.create(attentionModel(elem, 1 / Math.sqrt(d)), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  return {
    name: 'onnxruntime-web',
    version: ort.env.versions?.web ?? ort.env.versions?.common,
    async run(Q, K, V, N, dk) {
      const feeds = {
        Q: new ort.Tensor(precision, Q, [N, dk]),
        K: new ort.Tensor(precision, K, [N, dk]),
        V: new ort.Tensor(precision, V, [N, dk]),
      };
      const { output } = await session.run(feeds);
      const data = output.data;
      output.dispose?.();
      return data;
    },
  };
}

async function makeTfjs() {
  const tf = globalThis.tf;
  tf.wasm.setWasmPaths('/tfjs-wasm/dist/');
  await tf.setBackend('wasm');
  await tf.ready();
  return {
    name: 'tfjs-backend-wasm',
    version: tf.wasm.version_wasm,
    simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
    run(Q, K, V, N, dk) {
      return tf.tidy(() => {
        const weights = tf.softmax(tf.mul(tf.matMul(tf.tensor2d(Q, [N, dk]), tf.tensor2d(K, [N, dk]), false, true), 1 / Math.sqrt(dk)));
        return tf.matMul(weights, tf.tensor2d(V, [N, dk])).dataSync();
      });
    },
  };
}

window.benchSetup = async ({ sizes, d, peers }) => {
  state.sizes = sizes;
  state.d = d;
  const relaxed = await loadFastAttention();
  const simd128 = await loadFastAttention({ relaxedSimd: false });
  const ours = (engine, name) => ({ name, run: (Q, K, V, N) => engine.attention({ Q, K, V, L: N, S: N }).output });
  const list = [];
  if (relaxed.fastKernels() === 'wasm-relaxed-simd') list.push(ours(relaxed, 'ours (relaxed SIMD)'));
  list.push(ours(simd128, 'ours (SIMD128)'));
  const versions = {};
  for (const [precision] of PRECISIONS) state.impls[precision] = [...list];
  if (peers) {
    for (const [precision] of PRECISIONS) {
      const ort = await makeOrt(precision, d);
      versions[ort.name] = ort.version;
      state.impls[precision].push(ort);
    }
    const tfjs = await makeTfjs();
    versions[tfjs.name] = `${tfjs.version} (${tfjs.simd ? 'SIMD' : 'no SIMD'})`;
    state.impls.float32.push(tfjs); // tfjs has no float64
  }
  // Inputs as in bench/bench.mjs; every implementation is checked against ours (SIMD128).
  const agreement = {};
  for (const N of sizes) {
    for (const [precision, Float] of PRECISIONS) {
      const inputs = [1, 2, 3].map((seed) => randomArray(Float, N * d, seed + N));
      state.inputs[`${precision}/${N}`] = inputs;
      const reference = await simd128.attention({ Q: inputs[0], K: inputs[1], V: inputs[2], L: N, S: N }).output;
      for (const impl of state.impls[precision]) {
        const out = await impl.run(...inputs, N, d);
        let worst = 0;
        for (let i = 0; i < out.length; i++) worst = Math.max(worst, Math.abs(out[i] - reference[i]));
        agreement[`${impl.name}/${precision}/${N}`] = worst;
      }
    }
  }
  // Warm-up, so every module has been tiered up from V8's baseline compiler before the rounds
  // (fresh calls pick up the optimised code; the pauses let the background compiler finish).
  for (const [precision] of PRECISIONS) {
    const N = Math.max(...sizes.filter((n) => n <= 256), Math.min(...sizes)); // a size with inputs, ≤ 256 if any
    const inputs = state.inputs[`${precision}/${N}`];
    for (const impl of state.impls[precision]) {
      for (const start = performance.now(); performance.now() - start < 400;) {
        await impl.run(...inputs, N, d);
        await new Promise((done) => setTimeout(done, 5));
      }
    }
  }
  // Tiny problems through the JS API: attention N=4, d=8 (/fast) and a 16×16 engine.run (main entry).
  const engine = await loadAttention();
  const tiny = {};
  const [q4, k4, v4] = [1, 2, 3].map((seed) => randomArray(Float32Array, 32, seed));
  tiny['attention N=4 d=8 float32 (/fast)'] = perCall(() => relaxed.attention({ Q: q4, K: k4, V: v4, L: 4, S: 4 }), 5000);
  const rows = (seed) => {
    const a = randomArray(Float64Array, 256, seed);
    return Array.from({ length: 16 }, (_, i) => Array.from(a.subarray(i * 16, i * 16 + 16)));
  };
  const problem = { Q: rows(1), K: rows(2), V: rows(3) };
  tiny['engine.run 16x16 full trace'] = perCall(() => engine.run(problem), 500);
  return { kernels: relaxed.fastKernels(), versions, agreement, tiny, userAgent: navigator.userAgent, crossOriginIsolated };
};

window.benchRound = async (round) => {
  const out = {};
  for (const N of state.sizes) {
    for (const [precision] of PRECISIONS) {
      const list = state.impls[precision];
      const inputs = state.inputs[`${precision}/${N}`];
      for (let k = 0; k < list.length; k++) {
        const impl = list[(k + round) % list.length];
        out[`${impl.name}/${precision}/${N}`] = await timeCall(() => impl.run(...inputs, N, state.d), N <= 64 ? 40 : 120);
      }
    }
  }
  return out;
};
window.benchReady = true;
