// The output-only attention path for numbers at scale (cpp/fast_attention.h through
// cpp/bindings_fast.cpp): typed arrays and shapes in, the output as a fresh typed array out.
// Nothing of size L×S is kept, so long sequences (N = 16,384 at d = 64) fit a small wasm heap.
//
// Inputs are copied into one scratch block of wasm memory that is kept between calls, the core
// runs, and the output is copied out (slice), so the result never aliases wasm memory (which
// memory growth would detach) and nothing needs .delete().

import { moduleGuard, version } from './load.js';

function inputError(message, field) {
  const error = new Error(message);
  if (field !== undefined) error.field = field;
  return error;
}

const FLOAT_ARRAYS = [Float32Array, Float64Array];

/** Flat row-major values of a typed array, number[] or nested number[][]; rows if nested. */
function flatten(value, name, { allowBoolean = false } = {}) {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return { data: value, rows: undefined };
  if (!Array.isArray(value)) {
    throw inputError(`${name} must be a typed array, an array of numbers or an array of rows`, name);
  }
  if (value.length === 0) throw inputError(`${name} is empty`, name);
  if (!Array.isArray(value[0])) return { data: value, rows: undefined, boolean: allowBoolean && typeof value[0] === 'boolean' };
  const cols = value[0].length;
  const boolean = allowBoolean && typeof value[0][0] === 'boolean';
  const data = boolean ? new Uint8Array(value.length * cols) : new Float64Array(value.length * cols);
  value.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw inputError(`${name} row ${i + 1} has ${Array.isArray(row) ? row.length : 'no'} entries but row 1 has ${cols}`, name);
    }
    for (let j = 0; j < cols; j++) {
      const x = row[j];
      if (boolean ? typeof x !== 'boolean' : typeof x !== 'number') {
        throw inputError(`${name} row ${i + 1}, column ${j + 1} is ${JSON.stringify(x)}: expected ${boolean ? 'true or false' : 'a number'}`, name);
      }
      data[i * cols + j] = x;
    }
  });
  return { data, rows: value.length, boolean };
}

function count(value, name) {
  if (Number.isInteger(value) && value >= 1) return value;
  throw inputError(`${name} must be a positive integer, got ${JSON.stringify(value)}`, name);
}

const DEFAULT_SCALE = Object.freeze({ kind: 0, value: 0 });

/** scale: 'sqrt_dk' (default) | 'none' | number (multiplies QKᵀ) | '1/sqrt(n)' | '1/n'. */
function scaleFrom(scale) {
  if (scale === undefined || scale === null || scale === 'sqrt_dk') return DEFAULT_SCALE;
  if (scale === 'none') return { kind: 1, value: 1 };
  if (typeof scale === 'number' && Number.isFinite(scale)) return { kind: 1, value: scale };
  if (typeof scale === 'string') {
    const text = scale.replace(/\s+/g, '');
    let match = /^1\/sqrt\((\d+(?:\.\d+)?)\)$/.exec(text);
    if (match && Number(match[1]) > 0) return { kind: 2, value: Math.sqrt(Number(match[1])) };
    match = /^1\/(\d+(?:\.\d+)?)$/.exec(text);
    if (match && Number(match[1]) > 0) return { kind: 2, value: Number(match[1]) };
  }
  throw inputError(`scale must be "sqrt_dk", "none", a finite number, "1/sqrt(n)" or "1/n", got ${JSON.stringify(scale)}`, 'scale');
}

const KEYS = ['Q', 'K', 'V', 'L', 'S', 'causal', 'scale', 'mask', 'precision'];
const KNOWN = new Set(KEYS);
// Queries go to the core in chunks of this many rows. V8 first runs wasm in its baseline tier
// (Liftoff, ~5-10x slower here) and switches to optimised code only for calls that start after
// the tier-up: one long call would stay in the baseline tier from start to end. Chunks also
// repeat only O(S·d) work each (checking and packing K), under 1% of a 256-row chunk.
const CHUNK_ROWS = 256;

/**
 * Binds the output-only path to an instantiated module. Returns
 * `attention({ Q, K, V, L?, S?, causal?, scale?, mask?, precision? })` ->
 * `{ output, shape: [L, d_v], precision, fully_masked_rows }`.
 */
export function createFastAttention(module) {
  let base = 0;
  let capacity = 0;

  const memory = () => (module.HEAPU8 ?? module._fastMemory()).buffer;
  // Views over the whole memory, made again only when growth replaced the buffer.
  let views = null;
  const heap = () => {
    const buffer = memory();
    if (!views || views.buffer !== buffer) {
      views = { buffer, f32: new Float32Array(buffer), f64: new Float64Array(buffer), u8: new Uint8Array(buffer) };
    }
    return views;
  };

  function attention(input) {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw inputError('attention takes an object { Q, K, V, L?, S?, causal?, scale?, mask?, precision? }');
    }
    // for-in rather than Object.keys: a 4-token call is a few µs, and allocations show up.
    for (const key in input) {
      if (!KNOWN.has(key)) throw inputError(`unknown key "${key}": attention takes ${KEYS.join(', ')}`, key);
    }
    const q = flatten(input.Q, 'Q');
    const k = flatten(input.K, 'K');
    const v = flatten(input.V, 'V');
    const L = input.L !== undefined ? count(input.L, 'L') : q.rows;
    const S = input.S !== undefined ? count(input.S, 'S') : k.rows;
    if (L === undefined) throw inputError('L (the number of queries) is needed when Q is a flat array', 'L');
    if (S === undefined) throw inputError('S (the number of keys) is needed when K is a flat array', 'S');
    if (q.rows !== undefined && q.rows !== L) throw inputError(`Q has ${q.rows} rows but L is ${L}`, 'L');
    if (k.rows !== undefined && k.rows !== S) throw inputError(`K has ${k.rows} rows but S is ${S}`, 'S');
    if (v.rows !== undefined && v.rows !== S) throw inputError(`V has ${v.rows} rows but K has ${S}: every key needs a value`, 'V');
    const dk = q.data.length / L;
    if (!Number.isInteger(dk) || dk < 1) throw inputError(`Q has ${q.data.length} values: not a whole number of rows of ${L} queries`, 'Q');
    if (k.data.length !== S * dk) {
      const kWidth = k.data.length / S;
      throw inputError(Number.isInteger(kWidth)
        ? `Q has ${dk} columns but K has ${kWidth}: queries and keys need the same d_k`
        : `K has ${k.data.length} values: not a whole number of rows of ${S} keys`, 'K');
    }
    const dv = v.data.length / S;
    if (!Number.isInteger(dv) || dv < 1) throw inputError(`V has ${v.data.length} values: not a whole number of rows of ${S} keys`, 'V');

    let precision = input.precision;
    if (precision === undefined) precision = input.Q instanceof Float32Array ? 'float32' : 'float64';
    if (precision !== 'float32' && precision !== 'float64') {
      throw inputError(`precision must be "float32" or "float64", got ${JSON.stringify(precision)}`, 'precision');
    }
    const Float = precision === 'float64' ? Float64Array : Float32Array;
    const size = Float.BYTES_PER_ELEMENT;

    let mask = null;
    let maskKind = 0;
    if (input.mask !== undefined && input.mask !== null) {
      mask = flatten(input.mask, 'mask', { allowBoolean: true });
      maskKind = mask.boolean || mask.data instanceof Uint8Array ? 2 : 1;
      if (mask.data.length !== L * S) {
        throw inputError(`mask has ${mask.data.length} values but the scores are ${L}x${S} (queries x keys)`, 'mask');
      }
      if (maskKind === 1 && !FLOAT_ARRAYS.some((A) => mask.data instanceof A) && !Array.isArray(mask.data)) {
        throw inputError('an additive mask is a Float32Array, Float64Array or numbers; a keep mask is a Uint8Array or booleans', 'mask');
      }
    }
    const scale = scaleFrom(input.scale);
    const causal = input.causal ?? false;
    if (typeof causal !== 'boolean') throw inputError(`causal must be true or false, got ${JSON.stringify(causal)}`, 'causal');

    // One block: header (15 doubles) | Q | K | V | mask | output, each 16-byte aligned.
    const align = (n) => Math.ceil(n / 16) * 16;
    const headerBytes = 128;
    const qBytes = align(L * dk * size);
    const kBytes = align(S * dk * size);
    const vBytes = align(S * dv * size);
    const maskBytes = maskKind === 0 ? 0 : align(L * S * (maskKind === 2 ? 1 : size));
    const outBytes = align(L * dv * size);
    const total = headerBytes + qBytes + kBytes + vBytes + maskBytes + outBytes;
    if (total > capacity) {
      base = module._fastReserve(total);
      capacity = total;
    }
    const qAt = base + headerBytes;
    const kAt = qAt + qBytes;
    const vAt = kAt + kBytes;
    const maskAt = vAt + vBytes;
    const outAt = maskAt + maskBytes;
    let h = heap();
    const data = precision === 'float64' ? h.f64 : h.f32;
    data.set(q.data, qAt / size);
    data.set(k.data, kAt / size);
    data.set(v.data, vAt / size);
    if (maskKind === 2) {
      if (mask.data instanceof Uint8Array) h.u8.set(mask.data, maskAt);
      else for (let i = 0; i < L * S; i++) h.u8[maskAt + i] = mask.data[i] ? 1 : 0;
    } else if (maskKind === 1) {
      data.set(mask.data, maskAt / size);
    }
    const header = base / 8;
    h.f64[header] = precision === 'float64' ? 1 : 0;
    h.f64[header + 2] = kAt;
    h.f64[header + 3] = vAt;
    h.f64[header + 7] = S;
    h.f64[header + 8] = dk;
    h.f64[header + 9] = dv;
    h.f64[header + 10] = maskKind;
    h.f64[header + 11] = scale.kind;
    h.f64[header + 12] = scale.value;
    h.f64[header + 13] = causal ? 1 : 0;
    const maskElement = maskKind === 2 ? 1 : size;
    let fullyMasked = 0;
    for (let r0 = 0; r0 < L; r0 += CHUNK_ROWS) {
      const f64 = heap().f64; // a previous chunk may have grown the memory
      f64[header + 1] = qAt + r0 * dk * size;
      f64[header + 4] = maskAt + r0 * S * maskElement;
      f64[header + 5] = outAt + r0 * dv * size;
      f64[header + 6] = Math.min(CHUNK_ROWS, L - r0);
      f64[header + 14] = r0;
      fullyMasked += module._fastRun(base);
    }
    // The run may have grown the memory: take the views again before copying out.
    h = heap();
    const out = precision === 'float64' ? h.f64 : h.f32;
    const output = out.slice(outAt / size, outAt / size + L * dv);
    return { output, shape: [L, dv], precision, fully_masked_rows: fullyMasked };
  }

  return attention;
}

/** Which kernels the module was built with: "wasm-simd128" or "eigen". */
export function fastKernels(module) {
  return module._fastKernels();
}

/**
 * The lean engine of `attention-explorer/fast` over the fast-only module (attention-fast.wasm):
 * the same attention() as the whole engine's, without the trace API. After a crash inside the
 * wasm (a WebAssembly.RuntimeError) the dead module is replaced by `reload()`'s fresh one.
 */
export function createFastEngine(wasm, reload) {
  const guard = moduleGuard(wasm, reload);
  return Object.freeze({
    version,
    attention: guardedAttention(guard),
    /** Which kernels `attention` runs: "wasm-simd128" or "eigen". */
    fastKernels() {
      return fastKernels(guard.module());
    },
    /** Diagnostic: wasm memory size and bytes in use by malloc (for leak checks). */
    heapStats() {
      return guard.module()._heapStats();
    },
  });
}

/**
 * attention() over a moduleGuard's live module, bound again after a reload (the binding keeps a
 * scratch block in its module). A crash is reported through the guard; `describe(input)`, if
 * given, adds the input to its message.
 */
export function guardedAttention(guard, describe) {
  let bound = null;
  return (input) => {
    const module = guard.module();
    if (bound?.module !== module) bound = { module, attention: createFastAttention(module) };
    try {
      return bound.attention(input);
    } catch (error) {
      if (error instanceof WebAssembly.RuntimeError) throw guard.crashed('attention', error, describe?.(input));
      throw error;
    }
  };
}
