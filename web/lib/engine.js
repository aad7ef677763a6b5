// The JS side of the package: checks the problem JSON, hands a normalised problem to the wasm
// core and turns what comes back into plain objects. No attention maths happens here.
//
// Shared by index.js (browsers, workers, bundlers) and node.js (Node); both only differ in how
// they get the .wasm bytes.
import { fastKernels, guardedAttention } from './fast.js';
import { loadModule, moduleGuard, version } from './load.js';

export { version };

const MATRIX_KEYS = ['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O'];
const BIAS_KEYS = ['b_Q', 'b_K', 'b_V', 'b_O'];
const PROBLEM_KEYS = [...MATRIX_KEYS, ...BIAS_KEYS, 'options'];
const OPTION_KEYS = ['layout', 'scale', 'causal', 'mask', 'softcap', 'heads', 'kv_heads', 'precision'];
const DRAW_KEYS = ['kind', 'shape', 'loc', 'scale', 'low', 'high'];
const RANDOM_KINDS = ['randn', 'normal', 'rand', 'randint'];
const NON_FINITE = { inf: Infinity, '+inf': Infinity, infinity: Infinity, '-inf': -Infinity, '-infinity': -Infinity, nan: NaN };

/** Readable names of the trace's step ids, for captions. */
export const STEP_TITLES = Object.freeze({
  Q: 'Queries Q',
  K: 'Keys K',
  V: 'Values V',
  scores: 'Scores Q·Kᵀ',
  scaled: 'Scaled scores',
  softcapped: 'Soft-capped scores',
  masked: 'Masked scores',
  weights: 'Attention weights softmax(·)',
  head_output: 'Head output weights·V',
  concat: 'Concatenated heads',
  output: 'Output',
});

// ---- errors ------------------------------------------------------------------------------------

/** Thrown for input the package rejects; `field` names the input (e.g. "options.scale"). */
function inputError(message, field) {
  const error = new Error(message);
  if (field !== undefined) error.field = field;
  return error;
}

function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 37) + '...' : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function editDistance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

// Case and underscores do not count: 'wq' and 'Wq' suggest 'W_Q'.
const simplify = (word) => word.toLowerCase().replace(/_/g, '');

function suggestion(word, known) {
  let best = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(simplify(word), simplify(candidate));
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? ` (did you mean '${best}'?)` : '';
}

// Unknown keys are errors, never silently ignored: a typo such as "casual" must be reported.
function checkKeys(object, known, { prefix = '', noun = 'key', field = '' } = {}) {
  for (const key of Object.keys(object)) {
    if (known.includes(key)) continue;
    const hint = suggestion(key, known) || `; expected one of ${known.join(', ')}`;
    throw inputError(`${prefix ? `${prefix}: ` : ''}unknown ${noun} '${key}'${hint}`, field ? `${field}.${key}` : key);
  }
}

function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

// ---- problem JSON -> what the bindings take ---------------------------------------------------

function numberAt(value, field, where) {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const special = NON_FINITE[value.trim().toLowerCase()];
    if (special !== undefined) return special;
  }
  throw inputError(`${field}${where} is ${describe(value)}: expected a number or "inf", "-inf", "nan"`, field);
}

// Where a matrix's numbers go: [array, offset] for `n` numbers. By default a Float64Array of its
// own; run() passes one that places them in the wasm module's scratch block (see packInto).
const ownArray = (n) => [new Float64Array(n), 0];

// A matrix as JSON: nested array (booleans allowed only for a keep-mask), a flat list (one row),
// { shape: [r, c], data: flat row-major numbers }, or text for the core's parser. The numbers go
// where `alloc` says; an `offset` property says where when they do not fill `data` from 0.
function matrixFrom(value, field, { allowBoolean = false, alloc = ownArray } = {}) {
  if (typeof value === 'string') return { matrix: value, keep: false };
  if (isPlainObject(value) && 'shape' in value && 'data' in value) {
    checkKeys(value, ['shape', 'data'], { prefix: field, field });
    const [rows, cols] = Array.isArray(value.shape) ? value.shape : [];
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || value.shape.length !== 2 || rows < 1 || cols < 1) {
      throw inputError(`${field}.shape must be [rows, columns] with positive integers, got ${JSON.stringify(value.shape)}`, field);
    }
    let data;
    let offset = 0;
    if (Array.isArray(value.data)) {
      // A loop, and the position's text only for an error: cheaper than Float64Array.from(data, fn).
      const source = value.data;
      if (source.length !== rows * cols) {
        // Every entry is still checked first, as before: a bad entry is reported before the count.
        for (let i = 0; i < source.length; i++) numberAt(source[i], field, ` entry ${i + 1}`);
        throw inputError(`${field} has ${source.length} values but its shape ${rows}x${cols} needs ${rows * cols}`, field);
      }
      [data, offset] = alloc(source.length);
      for (let i = 0; i < source.length; i++) {
        const v = source[i];
        data[offset + i] = typeof v === 'number' ? v : numberAt(v, field, ` entry ${i + 1}`);
      }
    } else {
      data = Float64Array.from(value.data, (v, i) => numberAt(v, field, ` entry ${i + 1}`));
      if (data.length !== rows * cols) {
        throw inputError(`${field} has ${data.length} values but its shape ${rows}x${cols} needs ${rows * cols}`, field);
      }
      if (alloc !== ownArray) {
        const [target, at] = alloc(data.length);
        target.set(data, at);
        [data, offset] = [target, at];
      }
    }
    return { matrix: alloc === ownArray ? { rows, cols, data } : { rows, cols, data, offset }, keep: false };
  }
  if (!Array.isArray(value)) {
    throw inputError(`${field} is ${describe(value)}: expected a nested array of numbers or a string`, field);
  }
  const nested = value.length > 0 && value.every(Array.isArray);
  if (!nested && value.some(Array.isArray)) {
    throw inputError(`${field} mixes numbers and lists: expected a list of rows`, field);
  }
  const rows = nested ? value : [value];
  const cols = rows[0].length;
  if (rows.length === 0 || cols === 0) throw inputError(`${field} is empty`, field);
  const [data, offset] = alloc(rows.length * cols);
  let booleans = 0;
  // Plain loops, and the position's text only for an error: a string per number cost more than
  // the rest of a small run. Holes of a sparse array are skipped (left 0), as forEach did.
  for (let i = 0, k = offset; i < rows.length; i++, k = offset + i * cols) {
    if (!(i in rows)) {
      data.fill(0, k, k + cols);
      continue;
    }
    const row = rows[i];
    if (row.length !== cols) {
      throw inputError(`${field} row ${i + 1} has ${row.length} ${row.length === 1 ? 'number' : 'numbers'} but row 1 has ${cols}`, field);
    }
    for (let j = 0; j < cols; j++, k++) {
      const v = row[j];
      if (typeof v === 'number') {
        data[k] = v;
      } else if (v === undefined && !(j in row)) {
        data[k] = 0;
      } else if (typeof v === 'boolean') {
        if (!allowBoolean) throw inputError(`${field} row ${i + 1}, column ${j + 1} is ${v}: only options.mask may hold booleans`, field);
        booleans++;
        data[k] = v ? 1 : 0;
      } else {
        data[k] = numberAt(v, field, ` row ${i + 1}, column ${j + 1}`);
      }
    }
  }
  if (booleans > 0 && booleans !== rows.length * cols) {
    throw inputError(`${field} mixes booleans and numbers: a mask is either all true/false (keep) or all numbers (additive)`, field);
  }
  const matrix = alloc === ownArray ? { rows: rows.length, cols, data } : { rows: rows.length, cols, data, offset };
  return { matrix, keep: booleans > 0 };
}

// A bias: text, or its numbers as a Float64Array; with an `alloc` other than ownArray, as
// { length, data, offset } (its numbers placed where `alloc` said).
function biasFrom(value, field, alloc = ownArray) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length > 0 && value.every(Array.isArray)) {
    const { matrix } = matrixFrom(value, field, { alloc });
    if (matrix.rows !== 1 && matrix.cols !== 1) {
      throw inputError(`${field} is ${matrix.rows}x${matrix.cols}: expected a list of numbers`, field);
    }
    return alloc === ownArray ? matrix.data : { length: matrix.rows * matrix.cols, data: matrix.data, offset: matrix.offset };
  }
  if (!Array.isArray(value) && !ArrayBuffer.isView(value)) {
    throw inputError(`${field} is ${describe(value)}: expected a list of numbers or a string`, field);
  }
  if (value.length === 0) throw inputError(`${field} is empty`, field);
  const data = Float64Array.from(value, (v, i) => numberAt(v, field, ` entry ${i + 1}`));
  if (alloc === ownArray) return data;
  const [target, offset] = alloc(data.length);
  target.set(data, offset);
  return { length: data.length, data: target, offset };
}

function oneOf(value, allowed, field) {
  if (typeof value === 'string' && allowed.includes(value)) return value;
  const hint = typeof value === 'string' ? suggestion(value, allowed) : '';
  throw inputError(`${field} must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got ${describe(value)}${hint}`, field);
}

function positiveInteger(value, field) {
  // heads divide d_model, itself at most 4096 (the core's kMaxDim): a larger count would also
  // wrap around in the bindings' 32-bit int.
  if (Number.isInteger(value) && value > 4096) throw inputError(`${field} is ${value}: at most 4096`, field);
  if (Number.isInteger(value) && value >= 1) return value;
  throw inputError(`${field} must be a positive integer, got ${describe(value)}`, field);
}

function scaleFrom(value) {
  const field = 'options.scale';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw inputError(`${field} must be a finite number, got ${value}`, field);
    return { scaleKind: 'multiply', scaleValue: value };
  }
  if (value === 'sqrt_dk' || value === 'none') return { scaleKind: value };
  if (typeof value === 'string') {
    const text = value.replace(/\s+/g, '');
    const root = /^1\/sqrt\(([0-9.eE+-]+)\)$/.exec(text);
    const plain = /^1\/([0-9.eE+-]+)$/.exec(text);
    const n = Number((root ?? plain ?? [])[1]);
    if ((root || plain) && Number.isFinite(n) && n > 0) {
      return { scaleKind: 'divide', scaleValue: root ? Math.sqrt(n) : n };
    }
  }
  throw inputError(`${field} must be "sqrt_dk", "none", a number, "1/sqrt(<n>)" or "1/<n>", got ${describe(value)}` +
    (typeof value === 'string' ? suggestion(value, ['sqrt_dk', 'none']) : ''), field);
}

function optionsFrom(options, alloc = ownArray) {
  if (options === undefined) return {};
  if (!isPlainObject(options)) throw inputError(`options is ${describe(options)}: expected an object`, 'options');
  checkKeys(options, OPTION_KEYS, { noun: 'option', field: 'options' });
  const out = {};
  if (options.layout !== undefined) out.layout = oneOf(options.layout, ['rows', 'columns'], 'options.layout');
  if (options.scale !== undefined) Object.assign(out, scaleFrom(options.scale));
  if (options.causal !== undefined) {
    if (typeof options.causal !== 'boolean') {
      throw inputError(`options.causal must be true or false, got ${describe(options.causal)}`, 'options.causal');
    }
    out.causal = options.causal;
  }
  if (options.mask !== undefined && options.mask !== null) {
    const { matrix, keep } = matrixFrom(options.mask, 'options.mask', { allowBoolean: true, alloc });
    out.mask = matrix;
    out.maskKind = keep ? 'keep' : 'additive';
  }
  if (options.softcap !== undefined) {
    if (typeof options.softcap !== 'number' || !Number.isFinite(options.softcap) || options.softcap < 0) {
      throw inputError(`options.softcap must be 0 (off) or a positive number, got ${describe(options.softcap)}`, 'options.softcap');
    }
    out.softcap = options.softcap;
  }
  if (options.heads !== undefined) out.heads = positiveInteger(options.heads, 'options.heads');
  if (options.kv_heads !== undefined) out.kvHeads = positiveInteger(options.kv_heads, 'options.kv_heads');
  if (options.precision !== undefined) {
    out.precision = oneOf(options.precision, ['float64', 'float32'], 'options.precision');
  }
  return out;
}

/**
 * Checks a problem's JSON shape (keys, types, values) and converts it for the bindings. With an
 * `alloc` (see ownArray), the numbers go where it says, in the order of the packed layout.
 */
function problemFrom(problem, alloc = ownArray) {
  if (!isPlainObject(problem)) {
    throw inputError(`the problem is ${describe(problem)}: expected an object with Q, K, V or X, W_Q, W_K, W_V`);
  }
  checkKeys(problem, PROBLEM_KEYS);
  const out = {};
  for (const key of MATRIX_KEYS) {
    if (problem[key] !== undefined && problem[key] !== null) out[key] = matrixFrom(problem[key], key, { alloc }).matrix;
  }
  for (const key of BIAS_KEYS) {
    if (problem[key] !== undefined && problem[key] !== null) out[key] = biasFrom(problem[key], key, alloc);
  }
  out.options = optionsFrom(problem.options, alloc);
  return { raw: out, layout: out.options.layout ?? 'rows', precision: out.options.precision ?? 'float64' };
}

// The packed form of a problem for the bindings' `_run` (layout in cpp/bindings.cpp, "the packed
// run"), so the problem crosses into the wasm in one copy: a header of shapes and option codes,
// then every matrix's numbers. A problem holding text, which only the core can parse, is not
// packed: it goes as the object itself.
const PACKED_SLOTS = [...MATRIX_KEYS, ...BIAS_KEYS];
const PACKED_HEADER = 2 * PACKED_SLOTS.length + 11;
const PACKED_CODES = {
  layout: { rows: 0, columns: 1 },
  scaleKind: { sqrt_dk: 0, none: 1, multiply: 2, divide: 3 },
  maskKind: { keep: 0, additive: 1 },
  precision: { float64: 0, float32: 1 },
};

/** How many numbers `raw` packs into, or -1 when it holds text. */
function packedLength(raw) {
  let length = PACKED_HEADER;
  for (const key of PACKED_SLOTS) {
    const part = raw[key];
    if (part === undefined) continue;
    if (typeof part === 'string') return -1;
    length += part.rows === undefined ? part.length : part.rows * part.cols;
  }
  const { mask } = raw.options;
  if (mask !== undefined) {
    if (typeof mask === 'string') return -1;
    length += mask.rows * mask.cols;
  }
  return length;
}

/**
 * Writes the packed header of `raw` into `out` (a Float64Array) from index `at`, and the numbers
 * after it unless they are there already (`withData` false: `raw` came from problemFrom with the
 * scratch block's alloc, which placed them).
 */
function packInto(raw, out, at, withData = true) {
  const { options } = raw;
  let next = at + PACKED_HEADER;
  const put = (data) => {
    if (withData) out.set(data, next);
    next += data.length;
  };
  for (let slot = 0; slot < PACKED_SLOTS.length; slot++) {
    const part = raw[PACKED_SLOTS[slot]];
    if (part === undefined) {
      out[at + 2 * slot] = 0;
      out[at + 2 * slot + 1] = 0;
    } else if (ArrayBuffer.isView(part)) {
      out[at + 2 * slot] = part.length;
      out[at + 2 * slot + 1] = 1;
      put(part);
    } else if (!withData) {
      out[at + 2 * slot] = part.rows ?? part.length;
      out[at + 2 * slot + 1] = part.cols ?? 1;
    } else {
      out[at + 2 * slot] = part.rows;
      out[at + 2 * slot + 1] = part.cols;
      put(part.data);
    }
  }
  const o = at + 2 * PACKED_SLOTS.length;
  const code = (table, value) => (value === undefined ? NaN : table[value]);
  const number = (value) => (value === undefined ? NaN : Number(value));
  out[o] = code(PACKED_CODES.layout, options.layout);
  out[o + 1] = code(PACKED_CODES.scaleKind, options.scaleKind);
  out[o + 2] = number(options.scaleValue);
  out[o + 3] = number(options.causal);
  out[o + 4] = options.mask === undefined ? 0 : options.mask.rows;
  out[o + 5] = options.mask === undefined ? 0 : options.mask.cols;
  if (options.mask !== undefined && withData) put(options.mask.data);
  out[o + 6] = code(PACKED_CODES.maskKind, options.maskKind);
  out[o + 7] = number(options.softcap);
  out[o + 8] = number(options.heads);
  out[o + 9] = number(options.kvHeads);
  out[o + 10] = code(PACKED_CODES.precision, options.precision);
}

// ---- what the bindings return -> plain objects --------------------------------------------------

function nested({ rows, cols, data }) {
  // Plain loops: Array.from over subarrays costs ten times more for the small matrices of a trace.
  const out = new Array(rows);
  for (let i = 0, k = 0; i < rows; i++) {
    const row = new Array(cols);
    for (let j = 0; j < cols; j++, k++) row[j] = data[k];
    out[i] = row;
  }
  return out;
}

const utf8 = new TextDecoder();

// The trace from `_run`'s packed answer (layout in cpp/bindings.cpp, "the packed run"). `numbers`
// may be a view of wasm memory: read it all before anything else runs in the module.
function traceFrom(numbers, layout, precision) {
  let at = 0;
  const next = () => numbers[at++];
  const matrix = () => {
    const rows = next();
    const cols = next();
    const out = new Array(rows);
    for (let i = 0; i < rows; i++) {
      const row = new Array(cols);
      for (let j = 0; j < cols; j++) row[j] = numbers[at++];
      out[i] = row;
    }
    return out;
  };
  const list = () => {
    const n = next();
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = numbers[at++];
    return out;
  };
  const text = () => {
    const n = next();
    let ascii = '';
    for (let i = 0; i < n; i++) {
      const c = numbers[at + i];
      if (c > 127) {
        ascii = utf8.decode(Uint8Array.from(numbers.subarray(at, at + n)));
        break;
      }
      ascii += String.fromCharCode(c);
    }
    at += n;
    return ascii;
  };
  const meta = { layout, precision, scale: next(), d_k: next(), d_v: next(), heads: next(), kv_heads: next(), queries: next(), keys: next() };
  const stepCount = next();
  const factCount = next();
  const steps = new Array(stepCount);
  for (let i = 0; i < stepCount; i++) {
    const head = next();
    const rows = numbers[at];
    const cols = numbers[at + 1];
    steps[i] = { id: '', head: head < 0 ? null : head, shape: [rows, cols], data: matrix() };
  }
  const output = matrix();
  const facts = new Array(factCount);
  for (let i = 0; i < factCount; i++) {
    facts[i] = {
      head: next(),
      scores_variance: next(),
      scaled_variance: next(),
      weight_sums: list(),
      max_weight: list(),
      entropy: list(),
      fully_masked: list(),
    };
  }
  for (let i = 0; i < stepCount; i++) steps[i].id = text();
  const warnings = new Array(next());
  for (let i = 0; i < warnings.length; i++) warnings[i] = text();
  return { steps, output, warnings, facts, meta };
}

function explanationFrom(raw) {
  const out = {};
  for (const [key, value] of Object.entries(raw)) out[key] = ArrayBuffer.isView(value) ? Array.from(value) : value;
  if (out.source_head < 0) out.source_head = null;
  return out;
}

// ---- JSON with non-finite numbers ------------------------------------------------------------

function jsonNumber(value) {
  if (typeof value !== 'number' || Number.isFinite(value)) return value;
  return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
}

/** A JSON-safe deep copy: Infinity, -Infinity and NaN become "inf", "-inf", "nan". */
export function toJSON(value) {
  if (typeof value === 'number') return jsonNumber(value);
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return Array.from(value, toJSON);
  if (isPlainObject(value)) {
    const out = {};
    for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = toJSON(v);
    return out;
  }
  return value;
}

/**
 * JSON text of a trace (or anything): non-finite numbers as "inf"/"-inf"/"nan"; with an indent,
 * arrays of plain values stay on one line so a matrix reads row by row.
 */
export function stringify(value, indent = 2) {
  const safe = toJSON(value);
  if (!indent) return JSON.stringify(safe);
  const pad = typeof indent === 'number' ? ' '.repeat(indent) : String(indent);
  const write = (v, depth) => {
    const inner = pad.repeat(depth + 1);
    const outer = pad.repeat(depth);
    if (Array.isArray(v)) {
      if (v.every((x) => x === null || typeof x !== 'object')) return JSON.stringify(v).replace(/,/g, ', ');
      return `[\n${v.map((x) => inner + write(x, depth + 1)).join(',\n')}\n${outer}]`;
    }
    if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      if (entries.length === 0) return '{}';
      return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${write(x, depth + 1)}`).join(',\n')}\n${outer}}`;
    }
    return JSON.stringify(v);
  };
  return write(safe, 0);
}

// ---- numpy random --------------------------------------------------------------------------------

function drawsFrom(draws) {
  if (!Array.isArray(draws)) throw inputError(`draws is ${describe(draws)}: expected an array of draws`, 'draws');
  return draws.map((d, i) => {
    const field = `draws[${i}]`;
    if (!isPlainObject(d)) throw inputError(`${field} is ${describe(d)}: expected { kind, shape }`, field);
    checkKeys(d, DRAW_KEYS, { prefix: field, field });
    const kind = oneOf(d.kind, RANDOM_KINDS, `${field}.kind`);
    const shape = d.shape;
    if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((n) => Number.isInteger(n) && n >= 1)) {
      throw inputError(`${field}.shape must be [rows, columns] with positive integers, got ${JSON.stringify(shape)}`, `${field}.shape`);
    }
    const number = (key, fallback) => {
      const v = d[key] ?? fallback;
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw inputError(`${field}.${key} must be a finite number, got ${describe(v)}`, `${field}.${key}`);
      }
      return v;
    };
    const out = { kind, rows: shape[0], cols: shape[1], loc: number('loc', 0), scale: number('scale', 1) };
    if (kind === 'randint') {
      if (d.high === undefined) throw inputError(`${field}.high is missing: randint draws from [low, high)`, `${field}.high`);
      out.low = number('low', 0);
      out.high = number('high');
      if (!Number.isInteger(out.low) || !Number.isInteger(out.high)) {
        throw inputError(`${field}: randint needs integer low and high`, field);
      }
    }
    return out;
  });
}

function seedFrom(seed) {
  if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) return seed;
  throw inputError(`seed must be an integer from 0 to 2**32 - 1 (as np.random.seed takes), got ${describe(seed)}`, 'seed');
}

// ---- the engine --------------------------------------------------------------------------------

function defaultHead(step) {
  return step === 'concat' || step === 'output' ? -1 : 0;
}

function cellIndex(value, field) {
  if (Number.isInteger(value) && value >= 0) return value;
  throw inputError(`${field} must be an integer >= 0 (counted from 0), got ${describe(value)}`, field);
}

// What a problem looked like, for the message after a crash (shapes, not numbers).
function sketch(args) {
  const text = (v) => (v && typeof v === 'object' && 'rows' in v && 'cols' in v ? `${v.rows}x${v.cols}` : typeof v === 'string' ? `text (${v.length} characters)` : ArrayBuffer.isView(v) ? `${v.length} numbers` : JSON.stringify(v));
  const [first, ...rest] = args;
  if (first && typeof first === 'object' && !Array.isArray(first)) {
    const parts = Object.entries(first).map(([k, v]) => `${k} ${k === 'options' ? JSON.stringify(v, (key, x) => (key === 'mask' ? text(x) : x)) : text(v)}`);
    return [parts.join(', '), ...rest.map((r) => JSON.stringify(r))].join('; ');
  }
  return args.map((a) => (typeof a === 'string' ? JSON.stringify(a.length > 60 ? `${a.slice(0, 57)}...` : a) : JSON.stringify(a))).join(', ');
}

/**
 * Wraps an instantiated Emscripten module in the public engine API. `reload` (optional) returns a
 * promise of a fresh module: after a crash inside the wasm (a WebAssembly.RuntimeError such as
 * "unreachable", or an abort), the dead module is dropped and replaced by a fresh one.
 */
export function createEngine(wasm, reload) {
  const guard = moduleGuard(wasm, reload);
  // The bindings return a C++ exception as an Error object (see cpp/bindings.cpp): throw it here.
  // `shown` is what a crash message describes (the problem as given, not its packed form; or a
  // function making it), and `label` the function it names.
  const invoke = (name, args, shown = args, label = name) => {
    const module = guard.module();
    let result;
    try {
      result = module[name](...args);
    } catch (error) {
      // An input error is returned, not thrown; anything thrown is the module failing.
      if (error instanceof WebAssembly.RuntimeError) {
        throw guard.crashed(label.slice(1), error, sketch(typeof shown === 'function' ? shown() : shown));
      }
      throw error;
    }
    if (result instanceof Error) throw result;
    return result;
  };
  const call = (name) => (...args) => invoke(name, args);
  const attention = guardedAttention(guard, (input) => sketch([input]));
  const module = { _explain: call('_explain'), _parseMatrix: call('_parseMatrix'), _random: call('_random') };
  // The module's scratch block for packed problems (cpp/bindings.cpp), found again after a reload.
  let scratch = null;
  const run = (problem) => {
    // What a crash message shows: the problem as converted without the scratch block.
    const shown = () => [problemFrom(problem).raw];
    if (scratch === null || scratch.module !== guard.module()) {
      const [address, size] = invoke('_runScratch', [], shown, '_run');
      scratch = { module: guard.module(), index: address / 8, size };
    }
    const current = guard.module();
    // The numbers go straight into the scratch block, after the header, in the packed order.
    // Nothing runs in the module between here and _run, so the heap view stays valid.
    const heap = current.HEAPF64 ?? new Float64Array(current._fastMemory().buffer);
    const { index, size } = scratch;
    let used = PACKED_HEADER;
    let fits = true;
    const alloc = (n) => {
      if (fits && used + n <= size) {
        used += n;
        return [heap, index + used - n];
      }
      fits = false;
      return ownArray(n);
    };
    const { raw, layout, precision } = problemFrom(problem, alloc);
    let argument;
    if (fits && packedLength(raw) === used) {
      packInto(raw, heap, index, false);
      argument = used;
    } else {
      // Text for the core's parser, or more numbers than the scratch block holds: converted again
      // the plain way, and sent as the object or as one packed Float64Array.
      const plain = problemFrom(problem).raw;
      const length = packedLength(plain);
      argument = plain;
      if (length >= 0) {
        argument = new Float64Array(length);
        packInto(plain, argument, 0);
      }
    }
    return traceFrom(invoke('_run', [argument], shown), layout, precision);
  };
  return Object.freeze({
    version,
    run,
    runAll(problems) {
      if (!Array.isArray(problems)) {
        throw inputError(`runAll takes an array of problems, got ${describe(problems)}`);
      }
      return problems.map((problem, i) => {
        try {
          return run(problem);
        } catch (error) {
          const wrapped = new Error(`problem ${i + 1} of ${problems.length}: ${error.message}`, { cause: error });
          wrapped.problemIndex = i;
          if (error.field !== undefined) wrapped.field = error.field;
          throw wrapped;
        }
      });
    },
    explain(problem, cell = {}) {
      if (!isPlainObject(cell)) throw inputError(`the cell is ${describe(cell)}: expected { step, head, row, col }`);
      checkKeys(cell, ['step', 'head', 'row', 'col'], { prefix: 'cell' });
      if (typeof cell.step !== 'string') throw inputError(`step must be a step id such as "scores", got ${describe(cell.step)}`, 'step');
      const head = cell.head === undefined || cell.head === null ? defaultHead(cell.step) : cell.head;
      if (!Number.isInteger(head) || head < -1) throw inputError(`head must be an integer >= 0 or null, got ${describe(head)}`, 'head');
      const { raw } = problemFrom(problem);
      return explanationFrom(module._explain(raw, cell.step, head, cellIndex(cell.row, 'row'), cellIndex(cell.col, 'col')));
    },
    parseMatrix(text, name = 'matrix') {
      if (typeof text !== 'string') throw inputError(`parseMatrix takes text, got ${describe(text)}`);
      return nested(module._parseMatrix(text, String(name)));
    },
    random(seed, draws) {
      return module._random(seedFrom(seed), drawsFrom(draws)).map(nested);
    },
    /** The output-only path for numbers at scale (fast.js): typed arrays in, a typed array out. */
    attention,
    /** Which kernels the fast path runs: "wasm-simd128" or "eigen". */
    fastKernels() {
      return fastKernels(guard.module());
    },
    /** Diagnostic: wasm memory size and bytes in use by malloc (for leak checks). */
    heapStats() {
      return guard.module()._heapStats();
    },
  });
}

// ---- loading -----------------------------------------------------------------------------------

/**
 * Instantiates the Emscripten factory with bytes from `loadBytes()` and wraps it in the engine;
 * every failure is an Error naming `where` (the URL or path tried).
 */
export async function instantiate(createModule, loadBytes, where) {
  return createEngine(...(await loadModule(createModule, loadBytes, where)));
}
