// The output-only attention path for numbers at scale (cpp/fast_attention.h through
// cpp/bindings_fast.cpp): typed arrays and shapes in, the output as a fresh typed array out.
// Nothing of size L×S is kept, so long sequences (N = 16,384 at d = 64) fit a small wasm heap.
//
// Inputs are copied into one scratch block of wasm memory that is kept between calls, the core
// runs, and the output is copied out (slice), so the result never aliases wasm memory (which
// memory growth would detach) and nothing needs .delete().

import { inputError, isNumberView, parseScale } from './input.js';
import { indexOf, moduleGuard, unwrap, version, wireTable } from './load.js';

const FLOAT_ARRAYS = [Float32Array, Float64Array];

// The English of the fast path's errors: the core names them by message id (cpp/fast_attention.cpp
// and cpp/bindings_fast.cpp throw error.fast-*, the words in locales/*.json), and the lean entry
// loads no catalogue, so its English is kept here, each {name} filled with its value
// (tests/js/errors-i18n.test.mjs checks these are en.json's words and every id those files throw).
// i18n.js errorWords(error, t) says them in any language.
export const FAST_ENGLISH = Object.freeze({
  'error.fast-missing': '{name} is missing',
  'error.fast-not-finite':
    '{name} row {row}, column {column} is {value}: inputs must be finite numbers (only an additive mask may hold -inf)',
  'error.fast-mask-entry': '{name} row {row}, column {column} is {value}: an additive mask holds finite numbers or -inf',
  'error.fast-empty': 'empty problem: L, S, d_k and d_v must be at least 1 (got L = {L}, S = {S}, d_k = {d_k}, d_v = {d_v})',
  'error.fast-no-output': 'no output buffer',
  'error.fast-masks-both': 'give an additive mask or a keep mask, not both',
  'error.fast-row-offset': 'row_offset must be >= 0',
  'error.fast-scale-both': 'give a scale or a divisor, not both',
  'error.fast-scale-finite': 'scale must be a finite number (got {value})',
  'error.fast-scale-divisor': 'the scale divisor must be a finite nonzero number (got {value})',
  'error.fast-scale-root': 'the scale divisor sqrt(n) needs a finite positive n in the working precision (got {value})',
  'error.fast-qk-width': 'Q has {q} columns but K has {k}: queries and keys need the same d_k',
  'error.fast-kv-rows': 'K has {k} rows but V has {v}: every key needs a value',
  'error.fast-mask-shape': 'mask is {shape} but the scores are {scores} (queries x keys)',
  'error.fast-memory': 'fast attention: the inputs do not fit in WebAssembly memory',
});

/** @param {string} id @param {Record<string, string>} values */
const fastEnglish = (id, values) =>
  Object.hasOwn(FAST_ENGLISH, id)
    ? FAST_ENGLISH[/** @type {keyof typeof FAST_ENGLISH} */ (id)].replace(/\{(\w+)\}/g, (_, name) => values[name])
    : id;

// The errors are message ids of the catalogues ("error.*") with their values, as the trace API's;
// this module says their English itself (the same words as en.json, errors-i18n.test.mjs checks)
// so that the lean entry (fast-index.js) loads no catalogue.
const said = (english, id, values, field) => inputError(english, field, `error.${id}`, values);

/**
 * Flat row-major values of a typed array, number[] or nested number[][]; rows if nested.
 * @returns {{ data: ArrayLike<number | boolean>, rows: number | undefined, boolean?: boolean }}
 */
function flatten(value, name, { allowBoolean = false } = {}) {
  if (isNumberView(value) && !(value instanceof DataView)) return { data: value, rows: undefined };
  if (!Array.isArray(value)) {
    throw said(`${name} must be a typed array, an array of numbers or an array of rows`, 'fast-array', { field: name }, name);
  }
  if (value.length === 0) throw said(`${name} is empty`, 'field-empty', { field: name }, name);
  if (!Array.isArray(value[0])) return { data: value, rows: undefined, boolean: allowBoolean && typeof value[0] === 'boolean' };
  const cols = value[0].length;
  const boolean = allowBoolean && typeof value[0][0] === 'boolean';
  const data = boolean ? new Uint8Array(value.length * cols) : new Float64Array(value.length * cols);
  value.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== cols) {
      const values = { field: name, row: String(i + 1), cols: String(cols) };
      throw Array.isArray(row)
        ? said(
            `${name} row ${i + 1} has ${row.length} entries but row 1 has ${cols}`,
            'fast-ragged',
            { ...values, count: String(row.length) },
            name,
          )
        : said(`${name} row ${i + 1} has no entries but row 1 has ${cols}`, 'fast-not-row', values, name);
    }
    for (let j = 0; j < cols; j++) {
      const x = row[j];
      if (boolean ? typeof x !== 'boolean' : typeof x !== 'number') {
        const values = {
          field: name,
          row: String(i + 1),
          column: String(j + 1),
          value: String(JSON.stringify(x)),
          kind: boolean ? 'boolean' : 'number',
        };
        throw said(
          `${name} row ${i + 1}, column ${j + 1} is ${JSON.stringify(x)}: expected ${boolean ? 'true or false' : 'a number'}`,
          'fast-cell',
          values,
          name,
        );
      }
      data[i * cols + j] = x;
    }
  });
  return { data, rows: value.length, boolean };
}

function count(value, name) {
  if (Number.isInteger(value) && value >= 1) return value;
  const values = { field: name, value: String(JSON.stringify(value)) };
  throw said(`${name} must be a positive integer, got ${JSON.stringify(value)}`, 'positive-integer', values, name);
}

/** scale: 'sqrt_dk' (default) | 'none' | number (multiplies QKᵀ) | '1/sqrt(n)' | '1/n' (input.js). */
const DEFAULT_SCALE = Object.freeze({ kind: 'sqrt_dk', value: undefined });

function scaleFrom(scale) {
  const parsed = scale === undefined || scale === null ? DEFAULT_SCALE : parseScale(scale);
  if (parsed !== null) return parsed;
  const english = `scale must be "sqrt_dk", "none", a finite number, "1/sqrt(n)" or "1/n", got ${JSON.stringify(scale)}`;
  throw said(english, 'fast-scale', { value: String(JSON.stringify(scale)) }, 'scale');
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
  // The header's offsets and codes, from the fast path's section of the wire table (cpp/wire.h
  // kFastHeader).
  const table = wireTable(module, '_fastWireLayout');
  const at = indexOf(table.fast);
  const codes = {
    precision: indexOf(table.codes.precision),
    scaleKind: indexOf(table.codes.scale_kind),
    mask: indexOf(table.codes.fast_mask),
  };
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
      throw said('attention takes an object { Q, K, V, L?, S?, causal?, scale?, mask?, precision? }', 'fast-input', {});
    }
    // for-in rather than Object.keys: a 4-token call is a few µs, and allocations show up.
    for (const key in input) {
      if (!KNOWN.has(key)) {
        throw said(
          `unknown key "${key}": attention takes ${KEYS.join(', ')}; the problem's other options (heads, softcap, rope, window, ...) are engine.run's`,
          'fast-key',
          { key, keys: KEYS.join(', ') },
          key,
        );
      }
    }
    const q = flatten(input.Q, 'Q');
    const k = flatten(input.K, 'K');
    const v = flatten(input.V, 'V');
    const L = input.L !== undefined ? count(input.L, 'L') : q.rows;
    const S = input.S !== undefined ? count(input.S, 'S') : k.rows;
    if (L === undefined) throw said('L (the number of queries) is needed when Q is a flat array', 'fast-no-L', {}, 'L');
    if (S === undefined) throw said('S (the number of keys) is needed when K is a flat array', 'fast-no-S', {}, 'S');
    if (q.rows !== undefined && q.rows !== L)
      throw said(`Q has ${q.rows} rows but L is ${L}`, 'fast-rows-L', { rows: String(q.rows), L: String(L) }, 'L');
    if (k.rows !== undefined && k.rows !== S)
      throw said(`K has ${k.rows} rows but S is ${S}`, 'fast-rows-S', { rows: String(k.rows), S: String(S) }, 'S');
    if (v.rows !== undefined && v.rows !== S) {
      throw said(
        `V has ${v.rows} rows but K has ${S}: every key needs a value`,
        'fast-rows-V',
        { rows: String(v.rows), S: String(S) },
        'V',
      );
    }
    const dk = q.data.length / L;
    if (!Number.isInteger(dk) || dk < 1) {
      const values = { count: String(q.data.length), L: String(L) };
      throw said(`Q has ${q.data.length} values: not a whole number of rows of ${L} queries`, 'fast-q-values', values, 'Q');
    }
    if (k.data.length !== S * dk) {
      const kWidth = k.data.length / S;
      throw Number.isInteger(kWidth)
        ? said(
            `Q has ${dk} columns but K has ${kWidth}: queries and keys need the same d_k`,
            'fast-d-k',
            { q_cols: String(dk), k_cols: String(kWidth) },
            'K',
          )
        : said(
            `K has ${k.data.length} values: not a whole number of rows of ${S} keys`,
            'fast-kv-values',
            { field: 'K', count: String(k.data.length), S: String(S) },
            'K',
          );
    }
    const dv = v.data.length / S;
    if (!Number.isInteger(dv) || dv < 1) {
      const values = { field: 'V', count: String(v.data.length), S: String(S) };
      throw said(`V has ${v.data.length} values: not a whole number of rows of ${S} keys`, 'fast-kv-values', values, 'V');
    }

    let precision = input.precision;
    if (precision === undefined) precision = input.Q instanceof Float32Array ? 'float32' : 'float64';
    if (precision !== 'float32' && precision !== 'float64') {
      const values = { value: String(JSON.stringify(precision)) };
      throw said(`precision must be "float32" or "float64", got ${JSON.stringify(precision)}`, 'fast-precision', values, 'precision');
    }
    const Float = precision === 'float64' ? Float64Array : Float32Array;
    const size = Float.BYTES_PER_ELEMENT;

    let mask = null;
    let maskKind = 'none';
    if (input.mask !== undefined && input.mask !== null) {
      mask = flatten(input.mask, 'mask', { allowBoolean: true });
      maskKind = mask.boolean || mask.data instanceof Uint8Array ? 'keep' : 'additive';
      if (mask.data.length !== L * S) {
        const values = { count: String(mask.data.length), L: String(L), S: String(S) };
        throw said(`mask has ${mask.data.length} values but the scores are ${L}x${S} (queries x keys)`, 'fast-mask-size', values, 'mask');
      }
      if (maskKind === 'additive' && !FLOAT_ARRAYS.some((A) => mask.data instanceof A) && !Array.isArray(mask.data)) {
        const english = 'an additive mask is a Float32Array, Float64Array or numbers; a keep mask is a Uint8Array or booleans';
        throw said(english, 'fast-mask-type', {}, 'mask');
      }
    }
    const scale = scaleFrom(input.scale);
    const causal = input.causal ?? false;
    if (typeof causal !== 'boolean') {
      throw said(
        `causal must be true or false, got ${JSON.stringify(causal)}`,
        'fast-causal',
        { value: String(JSON.stringify(causal)) },
        'causal',
      );
    }

    // One block: header | Q | K | V | mask | output, each 16-byte aligned.
    const align = (n) => Math.ceil(n / 16) * 16;
    const headerBytes = align(table.fast.length * 8);
    const qBytes = align(L * dk * size);
    const kBytes = align(S * dk * size);
    const vBytes = align(S * dv * size);
    const maskElement = maskKind === 'keep' ? 1 : size;
    const maskBytes = maskKind === 'none' ? 0 : align(L * S * maskElement);
    const outBytes = align(L * dv * size);
    const total = headerBytes + qBytes + kBytes + vBytes + maskBytes + outBytes;
    if (total > capacity) {
      base = unwrap(module._fastReserve(total), fastEnglish);
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
    if (maskKind === 'keep') {
      if (mask.data instanceof Uint8Array) h.u8.set(mask.data, maskAt);
      else for (let i = 0; i < L * S; i++) h.u8[maskAt + i] = mask.data[i] ? 1 : 0;
    } else if (maskKind === 'additive') {
      data.set(mask.data, maskAt / size);
    }
    const first = base / 8;
    h.f64[first + at.precision] = codes.precision[precision];
    h.f64[first + at.k] = kAt;
    h.f64[first + at.v] = vAt;
    h.f64[first + at.S] = S;
    h.f64[first + at.d_k] = dk;
    h.f64[first + at.d_v] = dv;
    h.f64[first + at.mask_kind] = codes.mask[maskKind];
    h.f64[first + at.scale_kind] = codes.scaleKind[scale.kind];
    h.f64[first + at.scale_value] = scale.value ?? NaN;
    h.f64[first + at.causal] = causal ? 1 : 0;
    let fullyMasked = 0;
    for (let r0 = 0; r0 < L; r0 += CHUNK_ROWS) {
      const f64 = heap().f64; // a previous chunk may have grown the memory
      f64[first + at.q] = qAt + r0 * dk * size;
      f64[first + at.mask] = maskAt + r0 * S * maskElement;
      f64[first + at.out] = outAt + r0 * dv * size;
      f64[first + at.L] = Math.min(CHUNK_ROWS, L - r0);
      f64[first + at.row_offset] = r0;
      unwrap(module._fastRun(base), fastEnglish);
      fullyMasked += heap().f64[first + at.fully_masked];
    }
    // The run may have grown the memory: take the views again before copying out.
    h = heap();
    const out = precision === 'float64' ? h.f64 : h.f32;
    const output = out.slice(outAt / size, outAt / size + L * dv);
    return { output, shape: [L, dv], precision, fully_masked_rows: fullyMasked };
  }

  return attention;
}

/** The diagnostics both engines offer, each on the guard's live module. */
export function diagnostics(guard) {
  return {
    /** Which kernels `attention` runs: "wasm-relaxed-simd" (attention-fast.wasm with relaxed SIMD), "wasm-simd128" or "eigen". */
    fastKernels() {
      return guard.module()._fastKernels();
    },
    /** Diagnostic: wasm memory size and bytes in use by malloc (for leak checks). */
    heapStats() {
      return guard.module()._heapStats();
    },
  };
}

/**
 * The lean engine of `attention-explorer/fast` over the fast-only module (attention-fast.wasm):
 * the same attention() as the whole engine's, without the trace API. After a crash inside the
 * wasm (a WebAssembly.RuntimeError) the dead module is replaced by `reload()`'s fresh one. Throws
 * when the module's wire format is not this JS's (load.js wireTable).
 */
export function createFastEngine(wasm, reload) {
  wireTable(wasm, '_fastWireLayout');
  const guard = moduleGuard(wasm, reload);
  return Object.freeze({ version, attention: guardedAttention(guard), ...diagnostics(guard) });
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
