// Problem JSON -> the normalised problem that web/lib/wire.js packs for the core: every key,
// type and value checked here (unknown keys get a did-you-mean), numbers converted, text left for
// the core's parser. Which keys a problem has, their JSON types and what messages say is expected
// come from the wire table (cpp/wire.h: each slot's and option's `json`); the types' rules are
// here. Also the checks of explain()'s cell and of random()'s draws.
//
// The normalised problem: { inputs: { Q, K, ..., mask, ... }, options: { layout, scale_kind, ... } }
// with only what was given; the names are the wire's (cpp/wire.h kSlots, kOptions). An input is
// its text, or { rows, cols, data, offset } (its numbers at data[offset ...], row-major; a bias or
// a list is n x 1 with `vector: true`).
import { numberWord } from './format.js';
import { english } from './i18n.js';
import { inputError, isNumberView, isPlainObject, parseScale } from './input.js';
import en from './locales/en.json' with { type: 'json' };

const DRAW_KEYS = ['kind', 'shape', 'loc', 'scale', 'low', 'high'];
const RANDOM_KINDS = ['randn', 'normal', 'rand', 'randint'];
const CELL_KEYS = ['step', 'head', 'row', 'col'];

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

/**
 * A value as messages show it (describe), as a message of the catalogues ("error.value").
 * @returns {{ id: string, values: Record<string, string> }}
 */
export function valueWords(value) {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const text = kind === 'string' ? describe(value) : kind === 'object' || kind === 'array' ? '' : String(value);
  return { id: 'error.value', values: { kind, text } };
}

/**
 * An input error named by a message id ("error.*" of the catalogues): English from en.json as
 * `message`, `message_id` and `values` for any language (i18n.js errorWords). Numbers are passed
 * as text, as the core passes them.
 * @param {string} id
 * @param {Record<string, string | import('./index.js').ErrorMessage>} values
 * @param {string} [field]
 */
export function said(id, values, field) {
  const full = `error.${id}`;
  return inputError(String(english(full, values)), field, full, values);
}

// The wire table's (cpp/wire.h) `expected` phrases in English, as the catalogues' "expected.*"
// messages: the id whose English is the phrase (a phrase without one, from a newer table, stays
// as it is).
let expectedIds = null;
/** What a key holds, as a message (or the wire table's English when no message says it). */
export function expectedWords(phrase) {
  expectedIds ??= new Map(
    Object.keys(en)
      .filter((id) => id.startsWith('expected.') && id !== 'expected.or')
      .map((id) => [String(english(id)), id]),
  );
  const id = expectedIds.get(phrase);
  return id === undefined ? phrase : { id, values: {} };
}

/** Names as `"a" or "b" or "c"`: a message ("expected.or") of the first and the rest. */
function eitherOf(names) {
  const quoted = names.map((a) => `"${a}"`);
  return quoted.slice(0, -1).reduceRight((b, a) => ({ id: 'expected.or', values: { a, b } }), quoted[quoted.length - 1]);
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

// The hint after a word not known: " (did you mean 'x'?)" as a message, or '' when none is close.
function suggestion(word, known) {
  let best = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(simplify(word), simplify(candidate));
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? { id: 'error.did-you-mean', values: { name: best } } : '';
}

// Unknown keys are errors, never silently ignored: a typo such as "casual" must be reported.
function checkKeys(object, known, { prefix = '', noun = 'key', field = '' } = {}) {
  for (const key of Object.keys(object)) {
    if (known.includes(key)) continue;
    const hint = suggestion(key, known) || { id: 'error.one-of-keys', values: { names: known.join(', ') } };
    const id = prefix ? 'unknown-key-in' : noun === 'option' ? 'unknown-option' : 'unknown-key';
    throw said(id, prefix ? { place: prefix, key, hint } : { key, hint }, field ? `${field}.${key}` : key);
  }
}

// ---- problem JSON -> the normalised problem ----------------------------------------------------

// `where`: [entry] of a list, or [row, column] of a matrix (1-based).
function numberAt(value, field, where) {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const special = numberWord(value);
    if (special !== undefined) return special;
  }
  const v = valueWords(value);
  throw where.length === 1
    ? said('entry-not-number', { field, entry: String(where[0]), value: v }, field)
    : said('cell-not-number', { field, row: String(where[0]), column: String(where[1]), value: v }, field);
}

/**
 * Where an input's numbers go: [array, offset] for `n` numbers.
 * @typedef {(n: number) => [Float64Array, number]} Alloc
 */
/**
 * An input's numbers at data[offset ...], row-major (a bias or a list: n x 1, `vector`).
 * @typedef {{ rows: number, cols: number, data: Float64Array, offset: number, vector?: boolean }} Matrix
 */

// By default a Float64Array of its own; engine.js passes one that places them in the wasm module's
// scratch block.
/** @type {Alloc} */
export const ownArray = (n) => [new Float64Array(n), 0];

// A matrix as JSON: nested array (booleans allowed only for a keep-mask), a flat list (one row),
// { shape: [r, c], data: flat row-major numbers }, or text for the core's parser. The numbers go
// where `alloc` says.
/**
 * @param {*} value the input as given (JSON, checked here)
 * @param {string} field
 * @param {{ allowBoolean?: boolean, alloc?: Alloc }} [options]
 * @returns {{ matrix: Matrix | string, keep: boolean }}
 */
function matrixFrom(value, field, { allowBoolean = false, alloc = ownArray } = {}) {
  if (typeof value === 'string') return { matrix: value, keep: false };
  if (isPlainObject(value) && 'shape' in value && 'data' in value) {
    checkKeys(value, ['shape', 'data'], { prefix: field, field });
    const [rows, cols] = Array.isArray(value.shape) ? value.shape : [];
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || value.shape.length !== 2 || rows < 1 || cols < 1) {
      throw said('shape-pair', { field, shape: String(JSON.stringify(value.shape)) }, field);
    }
    let data;
    let offset = 0;
    if (Array.isArray(value.data)) {
      // A loop, and the position's text only for an error: cheaper than Float64Array.from(data, fn).
      const source = value.data;
      if (source.length !== rows * cols) {
        // Every entry is still checked first, as before: a bad entry is reported before the count.
        for (let i = 0; i < source.length; i++) numberAt(source[i], field, [i + 1]);
        throw said(
          'shape-count',
          { field, count: String(source.length), rows: String(rows), cols: String(cols), needed: String(rows * cols) },
          field,
        );
      }
      [data, offset] = alloc(source.length);
      for (let i = 0; i < source.length; i++) {
        const v = source[i];
        data[offset + i] = typeof v === 'number' ? v : numberAt(v, field, [i + 1]);
      }
    } else {
      data = Float64Array.from(value.data, (v, i) => numberAt(v, field, [i + 1]));
      if (data.length !== rows * cols) {
        throw said(
          'shape-count',
          { field, count: String(data.length), rows: String(rows), cols: String(cols), needed: String(rows * cols) },
          field,
        );
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
    throw said('matrix-type', { field, value: valueWords(value) }, field);
  }
  const nested = value.length > 0 && value.every(Array.isArray);
  if (!nested && value.some(Array.isArray)) {
    throw said('mixed-lists', { field }, field);
  }
  const rows = nested ? value : [value];
  const cols = rows[0].length;
  if (rows.length === 0 || cols === 0) throw said('field-empty', { field }, field);
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
      throw said('ragged-row', { field, row: String(i + 1), count: String(row.length), cols: String(cols) }, field);
    }
    for (let j = 0; j < cols; j++, k++) {
      const v = row[j];
      if (typeof v === 'number') {
        data[k] = v;
      } else if (v === undefined && !(j in row)) {
        data[k] = 0;
      } else if (typeof v === 'boolean') {
        if (!allowBoolean) throw said('boolean-not-mask', { field, row: String(i + 1), column: String(j + 1), value: String(v) }, field);
        booleans++;
        data[k] = v ? 1 : 0;
      } else {
        data[k] = numberAt(v, field, [i + 1, j + 1]);
      }
    }
  }
  if (booleans > 0 && booleans !== rows.length * cols) {
    throw said('mask-mixed', { field }, field);
  }
  return { matrix: { rows: rows.length, cols, data, offset }, keep: booleans > 0 };
}

// A bias: text, or its numbers as an n x 1 input (placed where `alloc` says).
/**
 * @param {*} value the input as given (JSON, checked here)
 * @param {string} field
 * @param {Alloc} [alloc]
 * @returns {string | Matrix}
 */
function biasFrom(value, field, alloc = ownArray) {
  if (typeof value === 'string') return value;
  const vector = (length, data, offset) => ({ rows: length, cols: 1, data, offset, vector: true });
  if (Array.isArray(value) && value.length > 0 && value.every(Array.isArray)) {
    // Nested arrays, never text: the matrix is numbers.
    const { matrix } = /** @type {{ matrix: Matrix }} */ (matrixFrom(value, field, { alloc }));
    if (matrix.rows !== 1 && matrix.cols !== 1) {
      throw said('bias-shape', { field, rows: String(matrix.rows), cols: String(matrix.cols) }, field);
    }
    return vector(matrix.rows * matrix.cols, matrix.data, matrix.offset);
  }
  if (!Array.isArray(value) && !isNumberView(value)) {
    throw said('bias-type', { field, value: valueWords(value) }, field);
  }
  if (value.length === 0) throw said('field-empty', { field }, field);
  const data = Float64Array.from(value, (v, i) => numberAt(v, field, [i + 1]));
  if (alloc === ownArray) return vector(data.length, data, 0);
  const [target, offset] = alloc(data.length);
  target.set(data, offset);
  return vector(data.length, target, offset);
}

function oneOf(value, allowed, field) {
  if (typeof value === 'string' && allowed.includes(value)) return value;
  const hint = typeof value === 'string' ? suggestion(value, allowed) : '';
  throw said('must-be', { field, expected: eitherOf(allowed), value: valueWords(value), hint }, field);
}

function scaleFrom(value, field, expected) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw said('finite', { field, value: String(value) }, field);
  const scale = parseScale(value);
  if (scale !== null) return scale;
  const hint = typeof value === 'string' ? suggestion(value, ['sqrt_dk', 'none']) : '';
  throw said('must-be', { field, expected: expectedWords(expected), value: valueWords(value), hint }, field);
}

// ---- the problem's keys, from the wire table ----------------------------------------------------

// A JSON type's rules (cpp/wire.h JsonType). Lists of numbers are read as a list or text.
const TYPE_WORDS = { matrix: 'a matrix', bias: 'a list of numbers' };
// Types whose key may be null, meaning not given (as an absent key).
const NULL_IS_ABSENT = new Set(['matrix', 'bias', 'mask', 'numbers']);
const COUNT_WORDS = ['no', 'one', 'two', 'three', 'four'];

/**
 * The problem JSON as a tree from the wire table: a node per key ({ key: what messages call it,
 * entries: the slots and options read there, children: its keys in order, list: whether its
 * keys are list positions }). The problem's inputs come first, then the options' keys in the
 * order of the options, then the keys only slots have (options.positions, options.sink_logit).
 */
function jsonTree(layout) {
  const root = { key: '', entries: [], children: new Map(), list: false };
  const add = (kind, entry, codes) => {
    const { key, ...json } = entry.json;
    if (key === undefined) return;
    let node = root;
    for (const part of key.match(/[^.[\]]+|\[\d+\]/g)) {
      const index = part.startsWith('[');
      const name = index ? part.slice(1, -1) : part;
      if (!node.children.has(name)) {
        node.list = index;
        node.children.set(name, {
          key: node.key ? node.key + (index ? part : `.${part}`) : part,
          entries: [],
          children: new Map(),
          list: false,
        });
      }
      node = node.children.get(name);
    }
    node.entries.push({ kind, name: entry.name, codes, ...json });
  };
  const { slots, options } = layout.problem;
  const topLevel = (slot) => !slot.json.key.includes('.');
  for (const slot of slots.filter(topLevel)) add('slot', slot);
  for (const option of options) add('option', option, option.codes && layout.codes[option.codes]);
  for (const slot of slots.filter((s) => !topLevel(s))) add('slot', slot);
  return root;
}

/** What a key holds, in words: its entry's `expected`, its code names, or its type. */
const expectedOf = (e) => e.expected ?? (e.codes ? e.codes.map((c) => `"${c}"`).join(' or ') : TYPE_WORDS[e.type]);

/**
 * The problem JSON's keys and what each holds, in order, from the wire table (the CLI's help):
 * [{ key: "options.rope.base", expected: "a positive number" }, ...].
 */
/** @returns {{ key: string, expected: string }[]} */
export function problemKeys(layout) {
  const out = [];
  const visit = (node) => {
    const shown = node.entries.find((e) => e.type !== 'none' && e.type !== 'numbers') ?? node.entries.find((e) => e.type !== 'none');
    if (shown) out.push({ key: node.key, expected: expectedOf(shown) });
    for (const child of node.children.values()) visit(child);
  };
  visit(jsonTree(layout));
  return out;
}

// A number an entry of type number or numbers takes, or undefined (its maximum aside).
function numberOf(value, e) {
  if (value === null) return e.nullable ? Infinity : undefined;
  const x = typeof value === 'string' ? numberWord(value) : value;
  if (typeof x !== 'number' || Number.isNaN(x)) return undefined;
  if (x === -Infinity) return e.minus_inf ? x : undefined;
  if (!Number.isFinite(x) || (e.integer && !Number.isInteger(x))) return undefined;
  if (e.minimum !== undefined && (e.exclusive_minimum ? x <= e.minimum : x < e.minimum)) return undefined;
  return x;
}

function numberFrom(value, e, field) {
  const x = numberOf(value, e);
  if (x === undefined) throw said('must-be', { field, expected: expectedWords(e.expected), value: valueWords(value), hint: '' }, field);
  if (e.maximum !== undefined && Number.isFinite(x) && x > e.maximum)
    throw said('at-most', { field, value: String(x), max: String(e.maximum) }, field);
  return x;
}

// A list of numbers (one number too when the entry says so), as an n x 1 input; text for the core.
/**
 * @param {*} value the input as given (JSON, checked here)
 * @param {*} e the wire table's entry (cpp/wire.h, as wire.js reads it)
 * @param {string} field
 * @param {Alloc} alloc
 * @returns {string | Matrix}
 */
function listFrom(value, e, field, alloc) {
  if (typeof value === 'string') return value;
  const list = e.scalar && !Array.isArray(value) && !isNumberView(value) ? [value] : value;
  if (!Array.isArray(list) && !isNumberView(list))
    throw said('must-be', { field, expected: expectedWords(e.expected), value: valueWords(value), hint: '' }, field);
  if (list.length === 0) throw said('field-empty', { field }, field);
  const [data, offset] = alloc(list.length);
  for (let i = 0; i < list.length; i++) {
    const x = numberOf(list[i], e);
    if (x === undefined)
      throw said('list-entry', { field, expected: expectedWords(e.expected), entry: String(i + 1), value: valueWords(list[i]) }, field);
    if (e.maximum !== undefined && Number.isFinite(x) && x > e.maximum)
      throw said('entry-at-most', { field, entry: String(i + 1), value: String(x), max: String(e.maximum) }, field);
    data[offset + i] = x;
  }
  return { rows: list.length, cols: 1, data, offset, vector: true };
}

/**
 * Reads problems as the wire table describes them: `problemFrom(problem, alloc)` checks a
 * problem's JSON (keys, types, values) and normalises it (see the top of this file); the numbers
 * go where `alloc` says, in the order of the keys.
 */
export function problemReader(layout) {
  const root = jsonTree(layout);

  function put(out, entry, value) {
    (entry.kind === 'slot' ? out.inputs : out.options)[entry.name] = value;
  }

  // The value of a key read by `entries` (those of one node that are not a switch).
  function readValue(entries, value, field, out, alloc) {
    const e = entries.find((x) => x.type !== 'none');
    const also = entries.find((x) => x.type === 'none'); // set with it
    switch (e.type) {
      case 'boolean':
        if (typeof value !== 'boolean')
          throw said('must-be', { field, expected: expectedWords(e.expected), value: valueWords(value), hint: '' }, field);
        return put(out, e, value);
      case 'code':
        return put(out, e, oneOf(value, e.codes, field));
      case 'scale': {
        const { kind, value: amount } = scaleFrom(value, field, e.expected);
        put(out, e, kind);
        if (amount !== undefined) put(out, also, amount);
        return undefined;
      }
      case 'mask': {
        const { matrix, keep } = matrixFrom(value, field, { allowBoolean: true, alloc });
        put(out, e, matrix);
        return put(out, also, keep ? 'keep' : 'additive');
      }
      case 'matrix':
        return put(out, e, matrixFrom(value, field, { alloc }).matrix);
      case 'bias':
        return put(out, e, biasFrom(value, field, alloc));
      case 'number':
        return put(out, e, numberFrom(value, e, field));
      case 'numbers':
        return put(out, e, listFrom(value, e, field, alloc));
      default:
        throw new Error(`wire: unknown JSON type '${e.type}' (the package's JS and .wasm are from different builds)`);
    }
  }

  // A key: a switch (a boolean with settings: true/false, an object of its keys, or the value of
  // the other entry of its key, e.g. options.alibi's slopes), a value, or an object or list of keys.
  function read(node, value, field, out, alloc) {
    const flag = node.entries.find((e) => e.type === 'boolean');
    const others = node.entries.filter((e) => e !== flag);
    if (flag && (node.children.size > 0 || others.length > 0)) {
      if (typeof value === 'boolean') return put(out, flag, value);
      if (node.children.size > 0 && isPlainObject(value)) {
        put(out, flag, true);
        return readKeys(node, value, field, out, alloc);
      }
      if (others.length > 0 && value !== null && !isPlainObject(value)) {
        put(out, flag, true);
        return readValue(others, value, field, out, alloc);
      }
      throw said('must-be', { field, expected: expectedWords(flag.expected), value: valueWords(value), hint: '' }, field);
    }
    if (node.entries.length > 0) return readValue(node.entries, value, field, out, alloc);
    return readKeys(node, value, field, out, alloc);
  }

  function readKeys(node, value, field, out, alloc) {
    const keys = [...node.children.keys()];
    if (node.list) {
      // The count as English writes it ("two"): a select of the catalogues' words, else the number.
      const count = { count: String(keys.length), word: COUNT_WORDS[keys.length] ?? 'other' };
      if (!Array.isArray(value)) throw said('list-type', { field, ...count, value: valueWords(value) }, field);
      if (value.length !== keys.length) throw said('list-length', { field, ...count, got: String(value.length) }, field);
      keys.forEach((key, i) => read(node.children.get(key), value[i], `${field}[${i}]`, out, alloc));
      return undefined;
    }
    if (!isPlainObject(value)) {
      if (node === root) throw said('problem-type', { value: valueWords(value) });
      throw said('object-type', { field, value: valueWords(value) }, field);
    }
    // The problem's keys and the options' are named plainly; deeper keys with where they are.
    if (node === root) checkKeys(value, keys);
    else if (node.key === 'options') checkKeys(value, keys, { noun: 'option', field });
    else checkKeys(value, keys, { prefix: field, field });
    for (const key of keys) {
      const child = node.children.get(key);
      const v = value[key];
      if (v === undefined) continue;
      if (v === null && child.entries.length > 0 && child.entries.every((e) => e.type === 'none' || NULL_IS_ABSENT.has(e.type))) continue;
      read(child, v, child.key, out, alloc);
    }
    return undefined;
  }

  return function problemFrom(problem, alloc = ownArray) {
    const out = { inputs: {}, options: {} };
    readKeys(root, problem, '', out, alloc);
    return out;
  };
}

// ---- explain()'s cell ------------------------------------------------------------------------------

/** A row or column index of explain()'s cell. */
export function cellIndex(value, field) {
  if (Number.isInteger(value) && value >= 0) return value;
  throw said('cell-index', { field, value: valueWords(value) }, field);
}

/** explain()'s step and head (-1 for concat and output by default); row and col: cellIndex. */
export function cellStep(cell) {
  if (!isPlainObject(cell)) throw said('cell-type', { value: valueWords(cell) });
  checkKeys(cell, CELL_KEYS, { prefix: 'cell' });
  if (typeof cell.step !== 'string') throw said('step-type', { value: valueWords(cell.step) }, 'step');
  // null: no head (a whole step: concat, output, a whole gradient such as dQ; a per-head step
  // answers as head 0); left out: head 0, or none for concat and output.
  const head = cell.head === null ? -1 : cell.head === undefined ? (cell.step === 'concat' || cell.step === 'output' ? -1 : 0) : cell.head;
  if (!Number.isInteger(head) || head < -1) throw said('head-type', { value: valueWords(head) }, 'head');
  return { step: cell.step, head };
}

// ---- random()'s draws ------------------------------------------------------------------------------

export function drawsFrom(draws) {
  if (!Array.isArray(draws)) throw said('draws-type', { value: valueWords(draws) }, 'draws');
  return draws.map((d, i) => {
    const field = `draws[${i}]`;
    if (!isPlainObject(d)) throw said('draw-type', { field, value: valueWords(d) }, field);
    checkKeys(d, DRAW_KEYS, { prefix: field, field });
    const kind = oneOf(d.kind, RANDOM_KINDS, `${field}.kind`);
    const shape = d.shape;
    if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((n) => Number.isInteger(n) && n >= 1)) {
      throw said('shape-pair', { field, shape: String(JSON.stringify(shape)) }, `${field}.shape`);
    }
    const number = (key, fallback) => {
      const v = d[key] ?? fallback;
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw said('finite', { field: `${field}.${key}`, value: valueWords(v) }, `${field}.${key}`);
      }
      return v;
    };
    const out = { kind, rows: shape[0], cols: shape[1], loc: number('loc', 0), scale: number('scale', 1) };
    if (kind === 'randint') {
      if (d.high === undefined) throw said('randint-high', { field }, `${field}.high`);
      out.low = number('low', 0);
      out.high = number('high');
      if (!Number.isInteger(out.low) || !Number.isInteger(out.high)) {
        throw said('randint-integers', { field }, field);
      }
    }
    return out;
  });
}

export function seedFrom(seed) {
  if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) return seed;
  throw said('seed', { value: valueWords(seed) }, 'seed');
}

// ---- tiles() and onlineSoftmax()'s arguments --------------------------------------------------------

const BLOCK_KEYS = ['block_q', 'block_k'];
const ONLINE_SOFTMAX_KEYS = ['subtractMax', 'precision'];

/** tiles()'s { block_q, block_k }: positive integers, both required. */
export function blockSizes(blocks) {
  if (!isPlainObject(blocks)) throw said('tiles-blocks', { value: valueWords(blocks) });
  checkKeys(blocks, BLOCK_KEYS);
  return BLOCK_KEYS.map((key) => {
    const n = blocks[key];
    if (Number.isInteger(n) && n >= 1) return n;
    throw said('positive-integer', { field: key, value: valueWords(n) }, key);
  });
}

/** recurrent()'s options: { chunk } (absent: token by token), as [chunk] with 0 for none. */
export function chunkSize(options) {
  if (options === undefined) return [0];
  if (!isPlainObject(options)) throw said('recurrent-options', { value: valueWords(options) });
  checkKeys(options, ['chunk']);
  const n = options.chunk;
  if (n === undefined) return [0];
  if (Number.isInteger(n) && n >= 1) return [n];
  throw said('positive-integer', { field: 'chunk', value: valueWords(n) }, 'chunk');
}

/** onlineSoftmax()'s row (numbers; -Infinity hides an entry; the core checks the values) and options. */
export function onlineSoftmaxFrom(row, options, precisions) {
  const numbers = Array.isArray(row) || isNumberView(row) ? Array.from(row) : null;
  if (numbers === null || !numbers.every((x) => typeof x === 'number')) {
    throw numbers === null
      ? said('online-softmax-row', { value: valueWords(row) }, 'row')
      : said('online-softmax-entry', { value: valueWords(numbers.find((x) => typeof x !== 'number')) }, 'row');
  }
  if (!isPlainObject(options)) throw said('online-softmax-options', { value: valueWords(options) });
  checkKeys(options, ONLINE_SOFTMAX_KEYS);
  const { subtractMax = true, precision = 'float64' } = options;
  if (typeof subtractMax !== 'boolean')
    throw said(
      'must-be',
      { field: 'subtractMax', expected: expectedWords('true or false'), value: valueWords(subtractMax), hint: '' },
      'subtractMax',
    );
  return { row: Float64Array.from(numbers), subtractMax, precision: oneOf(precision, precisions, 'precision') };
}
