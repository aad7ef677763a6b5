// Problem JSON -> the normalised problem that web/lib/wire.js packs for the core: every key,
// type and value checked here (unknown keys get a did-you-mean), numbers converted, text left for
// the core's parser. Also the checks of explain()'s cell and of random()'s draws.
//
// The normalised problem: { inputs: { Q, K, ..., b_O, mask }, options: { layout, scale_kind,
// scale_value, causal, mask_kind, softcap, heads, kv_heads, precision } } with only what was
// given; the names are the wire's (cpp/wire.h kSlots, kOptions). An input is its text, or
// { rows, cols, data, offset } (its numbers at data[offset ...], row-major; a bias is n x 1 with
// `vector: true`).
import { inputError, isPlainObject, parseScale } from './input.js';

// The problem JSON's keys; its matrices and biases are the wire's slots of the same names.
const MATRIX_KEYS = ['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O'];
const BIAS_KEYS = ['b_Q', 'b_K', 'b_V', 'b_O'];
const PROBLEM_KEYS = [...MATRIX_KEYS, ...BIAS_KEYS, 'options'];
const OPTION_KEYS = ['layout', 'scale', 'causal', 'mask', 'softcap', 'heads', 'kv_heads', 'precision'];
const DRAW_KEYS = ['kind', 'shape', 'loc', 'scale', 'low', 'high'];
const RANDOM_KINDS = ['randn', 'normal', 'rand', 'randint'];
const CELL_KEYS = ['step', 'head', 'row', 'col'];
const NON_FINITE = { inf: Infinity, '+inf': Infinity, infinity: Infinity, '-inf': -Infinity, '-infinity': -Infinity, nan: NaN };

// ---- messages ------------------------------------------------------------------------------------

/** A value as messages show it: "x", number 3, an array, null. */
export function describe(value) {
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

// ---- problem JSON -> the normalised problem ----------------------------------------------------

function numberAt(value, field, where) {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const special = NON_FINITE[value.trim().toLowerCase()];
    if (special !== undefined) return special;
  }
  throw inputError(`${field}${where} is ${describe(value)}: expected a number or "inf", "-inf", "nan"`, field);
}

// Where an input's numbers go: [array, offset] for `n` numbers. By default a Float64Array of its
// own; engine.js passes one that places them in the wasm module's scratch block.
export const ownArray = (n) => [new Float64Array(n), 0];

// A matrix as JSON: nested array (booleans allowed only for a keep-mask), a flat list (one row),
// { shape: [r, c], data: flat row-major numbers }, or text for the core's parser. The numbers go
// where `alloc` says.
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
    return { matrix: { rows, cols, data, offset }, keep: false };
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
  return { matrix: { rows: rows.length, cols, data, offset }, keep: booleans > 0 };
}

// A bias: text, or its numbers as an n x 1 input (placed where `alloc` says).
function biasFrom(value, field, alloc = ownArray) {
  if (typeof value === 'string') return value;
  const vector = (length, data, offset) => ({ rows: length, cols: 1, data, offset, vector: true });
  if (Array.isArray(value) && value.length > 0 && value.every(Array.isArray)) {
    const { matrix } = matrixFrom(value, field, { alloc });
    if (matrix.rows !== 1 && matrix.cols !== 1) {
      throw inputError(`${field} is ${matrix.rows}x${matrix.cols}: expected a list of numbers`, field);
    }
    return vector(matrix.rows * matrix.cols, matrix.data, matrix.offset);
  }
  if (!Array.isArray(value) && !ArrayBuffer.isView(value)) {
    throw inputError(`${field} is ${describe(value)}: expected a list of numbers or a string`, field);
  }
  if (value.length === 0) throw inputError(`${field} is empty`, field);
  const data = Float64Array.from(value, (v, i) => numberAt(v, field, ` entry ${i + 1}`));
  if (alloc === ownArray) return vector(data.length, data, 0);
  const [target, offset] = alloc(data.length);
  target.set(data, offset);
  return vector(data.length, target, offset);
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
  if (typeof value === 'number' && !Number.isFinite(value)) throw inputError(`${field} must be a finite number, got ${value}`, field);
  const scale = parseScale(value);
  if (scale !== null) return scale;
  throw inputError(`${field} must be "sqrt_dk", "none", a number, "1/sqrt(<n>)" or "1/<n>", got ${describe(value)}` +
    (typeof value === 'string' ? suggestion(value, ['sqrt_dk', 'none']) : ''), field);
}

// The options into `out` (the normalised options), the mask into `inputs`.
function optionsFrom(options, inputs, alloc) {
  const out = {};
  if (options === undefined) return out;
  if (!isPlainObject(options)) throw inputError(`options is ${describe(options)}: expected an object`, 'options');
  checkKeys(options, OPTION_KEYS, { noun: 'option', field: 'options' });
  if (options.layout !== undefined) out.layout = oneOf(options.layout, ['rows', 'columns'], 'options.layout');
  if (options.scale !== undefined) {
    const { kind, value } = scaleFrom(options.scale);
    out.scale_kind = kind;
    if (value !== undefined) out.scale_value = value;
  }
  if (options.causal !== undefined) {
    if (typeof options.causal !== 'boolean') {
      throw inputError(`options.causal must be true or false, got ${describe(options.causal)}`, 'options.causal');
    }
    out.causal = options.causal;
  }
  if (options.mask !== undefined && options.mask !== null) {
    const { matrix, keep } = matrixFrom(options.mask, 'options.mask', { allowBoolean: true, alloc });
    inputs.mask = matrix;
    out.mask_kind = keep ? 'keep' : 'additive';
  }
  if (options.softcap !== undefined) {
    if (typeof options.softcap !== 'number' || !Number.isFinite(options.softcap) || options.softcap < 0) {
      throw inputError(`options.softcap must be 0 (off) or a positive number, got ${describe(options.softcap)}`, 'options.softcap');
    }
    out.softcap = options.softcap;
  }
  if (options.heads !== undefined) out.heads = positiveInteger(options.heads, 'options.heads');
  if (options.kv_heads !== undefined) out.kv_heads = positiveInteger(options.kv_heads, 'options.kv_heads');
  if (options.precision !== undefined) {
    out.precision = oneOf(options.precision, ['float64', 'float32'], 'options.precision');
  }
  return out;
}

/**
 * Checks a problem's JSON (keys, types, values) and normalises it (see the top of this file);
 * the numbers go where `alloc` says, in the order of the keys above.
 */
export function problemFrom(problem, alloc = ownArray) {
  if (!isPlainObject(problem)) {
    throw inputError(`the problem is ${describe(problem)}: expected an object with Q, K, V or X, W_Q, W_K, W_V`);
  }
  checkKeys(problem, PROBLEM_KEYS);
  const inputs = {};
  for (const key of MATRIX_KEYS) {
    if (problem[key] !== undefined && problem[key] !== null) inputs[key] = matrixFrom(problem[key], key, { alloc }).matrix;
  }
  for (const key of BIAS_KEYS) {
    if (problem[key] !== undefined && problem[key] !== null) inputs[key] = biasFrom(problem[key], key, alloc);
  }
  return { inputs, options: optionsFrom(problem.options, inputs, alloc) };
}

// ---- explain()'s cell ------------------------------------------------------------------------------

/** A row or column index of explain()'s cell. */
export function cellIndex(value, field) {
  if (Number.isInteger(value) && value >= 0) return value;
  throw inputError(`${field} must be an integer >= 0 (counted from 0), got ${describe(value)}`, field);
}

/** explain()'s step and head (-1 for concat and output by default); row and col: cellIndex. */
export function cellStep(cell) {
  if (!isPlainObject(cell)) throw inputError(`the cell is ${describe(cell)}: expected { step, head, row, col }`);
  checkKeys(cell, CELL_KEYS, { prefix: 'cell' });
  if (typeof cell.step !== 'string') throw inputError(`step must be a step id such as "scores", got ${describe(cell.step)}`, 'step');
  const head = cell.head === undefined || cell.head === null ? (cell.step === 'concat' || cell.step === 'output' ? -1 : 0) : cell.head;
  if (!Number.isInteger(head) || head < -1) throw inputError(`head must be an integer >= 0 or null, got ${describe(head)}`, 'head');
  return { step: cell.step, head };
}

// ---- random()'s draws ------------------------------------------------------------------------------

export function drawsFrom(draws) {
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

export function seedFrom(seed) {
  if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) return seed;
  throw inputError(`seed must be an integer from 0 to 2**32 - 1 (as np.random.seed takes), got ${describe(seed)}`, 'seed');
}
