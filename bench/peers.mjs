// The peers of `npm run bench`: onnxruntime-web (wasm, SIMD, one thread), tfjs with its wasm
// backend, and plain JavaScript loops. Each maker returns { name, run(Q, K, V, N, d) } where
// run computes softmax(QKᵀ/√d)·V for N×d row-major typed arrays and resolves to the output.
// Benchmark-only: nothing here is part of the package.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
// onnxruntime-web's "exports" hide package.json: find packages in the repository's node_modules.
const pkgDir = (name) => join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', name);
const pkgVersion = (name) => require(join(pkgDir(name), 'package.json')).version;

// ---- a minimal ONNX (protobuf) writer: just enough for a 5-node graph ---------------------------

function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, n) => [...key(field, 0), ...varint(n)];
const bytes = (field, content) => [...key(field, 2), ...varint(content.length), ...content];
const str = (field, text) => bytes(field, [...new TextEncoder().encode(text)]);

/** ValueInfoProto of a 2-D tensor with symbolic dims. elem: 1 float, 11 double. */
function valueInfo(name, elem, dims) {
  const shape = dims.flatMap((d) => bytes(1, typeof d === 'string' ? str(2, d) : int(1, d)));
  const tensorType = [...int(1, elem), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

function node(op, inputs, outputs, attributes = []) {
  return [...inputs.flatMap((i) => str(1, i)), ...outputs.flatMap((o) => str(2, o)), ...str(4, op), ...attributes.flatMap((a) => bytes(5, a))];
}

/** TensorProto scalar initializer (dims none, data in raw_data). */
function scalar(name, elem, value) {
  const raw = new Uint8Array((elem === 11 ? new Float64Array([value]) : new Float32Array([value])).buffer);
  return [...int(2, elem), ...str(8, name), ...bytes(9, [...raw])];
}

/** attention(Q, K, V) = Softmax(MatMul(Q, Transpose(K)) * scale) · V as an ONNX model. */
export function attentionModel(elem, scale) {
  const perm = [...str(1, 'perm'), ...int(20, 7), ...bytes(8, [...varint(1), ...varint(0)])];
  const axis = [...str(1, 'axis'), ...int(20, 2), ...int(3, 1)];
  const graph = [
    ...bytes(1, node('Transpose', ['K'], ['Kt'], [perm])),
    ...bytes(1, node('MatMul', ['Q', 'Kt'], ['scores'])),
    ...bytes(1, node('Mul', ['scores', 'scale'], ['scaled'])),
    ...bytes(1, node('Softmax', ['scaled'], ['weights'], [axis])),
    ...bytes(1, node('MatMul', ['weights', 'V'], ['output'])),
    ...str(2, 'attention'),
    ...bytes(5, scalar('scale', elem, scale)),
    ...bytes(11, valueInfo('Q', elem, ['L', 'd'])),
    ...bytes(11, valueInfo('K', elem, ['S', 'd'])),
    ...bytes(11, valueInfo('V', elem, ['S', 'dv'])),
    ...bytes(12, valueInfo('output', elem, ['L', 'dv'])),
  ];
  const model = [...int(1, 8), ...bytes(8, [...str(1, ''), ...int(2, 17)]), ...bytes(7, graph)];
  return new Uint8Array(model);
}

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
    out['onnxruntime-web'] = (await gz(join(ortDist, 'ort.min.mjs'))) + (await gz(join(ortDist, 'ort-wasm-simd-threaded.mjs'))) +
      (await gz(join(ortDist, 'ort-wasm-simd-threaded.wasm')));
  } catch { /* layout changed */ }
  try {
    out['tfjs-backend-wasm'] = (await gz(join(tfCore, 'dist/tf-core.min.js'))) + (await gz(join(tfWasm, 'dist/tf-backend-wasm.min.js'))) +
      (await gz(join(tfWasm, 'dist/tfjs-backend-wasm-simd.wasm')));
  } catch { /* layout changed */ }
  return out;
}
