// The peers of `npm run bench`: onnxruntime-web (wasm, SIMD, one thread), tfjs with its wasm
// backend, and plain JavaScript loops. Each maker returns { name, run(Q, K, V, N, d) } where
// run computes softmax(QKᵀ/√d)·V for N×d row-major typed arrays and resolves to the output.
// Benchmark-only: nothing here is part of the package.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { attentionModel } from './onnx-model.mjs';

const require = createRequire(import.meta.url);
// onnxruntime-web's "exports" hide package.json: find packages in the repository's node_modules.
const pkgDir = (name) => join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', name);
const pkgVersion = (name) => require(join(pkgDir(name), 'package.json')).version;

// ---- onnxruntime-web ---------------------------------------------------------------------------

export async function makeOrt(precision, d) {
  const ort = await import('onnxruntime-web');
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
  const type = precision === 'float64' ? 'float64' : 'float32';
  return {
    name: 'onnxruntime-web',
    version: pkgVersion('onnxruntime-web'),
    async run(Q, K, V, N, dk) {
      const feeds = {
        Q: new ort.Tensor(type, Q, [N, dk]),
        K: new ort.Tensor(type, K, [N, dk]),
        V: new ort.Tensor(type, V, [N, dk]),
      };
      const { output } = await session.run(feeds);
      const data = output.data;
      output.dispose?.();
      return data;
    },
  };
}

// ---- tfjs with the wasm backend ----------------------------------------------------------------

export async function makeTfjs() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const dist = pkgDir('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(join(dist, 'dist') + '/');
  wasm.setThreadsCount?.(1);
  await tf.setBackend('wasm');
  await tf.ready();
  return {
    name: 'tfjs-backend-wasm',
    version: pkgVersion('@tensorflow/tfjs-backend-wasm'),
    simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
    async run(Q, K, V, N, dk) {
      return tf.tidy(() => {
        const q = tf.tensor2d(Q, [N, dk]);
        const k = tf.tensor2d(K, [N, dk]);
        const v = tf.tensor2d(V, [N, dk]);
        const weights = tf.softmax(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(dk)));
        return tf.matMul(weights, v).dataSync();
      });
    },
  };
}

// ---- plain JavaScript ----------------------------------------------------------------------------

/** Straight loops, two-pass softmax per row, arithmetic in JS numbers, storage in `Float`. */
export function makePlainJs(Float) {
  return {
    name: 'plain JS',
    run(Q, K, V, N, dk) {
      const out = new Float(N * dk);
      const scores = new Float(N);
      const scale = 1 / Math.sqrt(dk);
      for (let i = 0; i < N; i++) {
        let max = -Infinity;
        for (let j = 0; j < N; j++) {
          let dot = 0;
          for (let k = 0; k < dk; k++) dot += Q[i * dk + k] * K[j * dk + k];
          scores[j] = dot * scale;
          if (scores[j] > max) max = scores[j];
        }
        let sum = 0;
        for (let j = 0; j < N; j++) {
          scores[j] = Math.exp(scores[j] - max);
          sum += scores[j];
        }
        for (let j = 0; j < N; j++) {
          const w = scores[j] / sum;
          for (let k = 0; k < dk; k++) out[i * dk + k] += w * V[j * dk + k];
        }
      }
      return out;
    },
  };
}

/** Sizes (bytes, gzipped) of what a browser downloads for a peer, from node_modules. */
export async function peerDownloads() {
  const { gzipSync } = await import('node:zlib');
  const gz = async (path) => gzipSync(await readFile(path), { level: 9 }).length;
  const ortDist = join(pkgDir('onnxruntime-web'), 'dist');
  const tfCore = pkgDir('@tensorflow/tfjs-core');
  const tfWasm = pkgDir('@tensorflow/tfjs-backend-wasm');
  const out = {};
  try {
    out['onnxruntime-web'] =
      (await gz(join(ortDist, 'ort.min.mjs'))) +
      (await gz(join(ortDist, 'ort-wasm-simd-threaded.mjs'))) +
      (await gz(join(ortDist, 'ort-wasm-simd-threaded.wasm')));
  } catch {
    /* layout changed */
  }
  try {
    out['tfjs-backend-wasm'] =
      (await gz(join(tfCore, 'dist/tf-core.min.js'))) +
      (await gz(join(tfWasm, 'dist/tf-backend-wasm.min.js'))) +
      (await gz(join(tfWasm, 'dist/tfjs-backend-wasm-simd.wasm')));
  } catch {
    /* layout changed */
  }
  return out;
}
