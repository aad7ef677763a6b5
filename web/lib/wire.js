// The JS side of the trace module's wire format: packing a problem for _run and _explain, and
// reading the trace back. cpp/wire.h declares the format once (how numbers and texts travel, the
// problem's slots and option codes, the trace's records) and hands it over as _wireLayout() (read
// with load.js wireTable, which checks its version); every offset and code here comes from it.
import { english, fillFormula } from './i18n.js';
import { indexOf } from './load.js';
import en from './locales/en.json' with { type: 'json' };

/**
 * A step's English caption from its message id ("step.scaled" -> "Scaled scores"): the core names
 * the message (cpp/steps.cpp), the catalogue (web/lib/locales/en.json) has the words; a view in
 * another language formats `title_id` with its own catalogue.
 * @param {string} id
 */
export const englishTitle = (id) => /** @type {Record<string, string>} */ (/** @type {unknown} */ (en))[id] ?? id;

// ---- the problem ---------------------------------------------------------------------------------

const utf8Encoder = new TextEncoder();

/**
 * Packing a normalised problem (web/lib/problem.js) for `_run` and `_explain`. `headerLength`
 * numbers of header come first; each input's numbers or text bytes anywhere after them.
 */
export function problemWire(layout) {
  const { slots, slot_fields: slotFields, options } = layout.problem;
  const field = indexOf(slotFields);
  const stride = slotFields.length;
  const optionsAt = slots.length * stride;
  const headerLength = optionsAt + options.length;
  const forms = indexOf(layout.codes.form);
  const optionCodes = options.map((option) => (option.codes ? indexOf(layout.codes[option.codes]) : null));

  // Writes the header of `problem` into stream[base ...]. Texts are placed with `alloc`; numbers
  // too when `copy`, else they are in `stream` already (put there by `alloc` while normalising).
  function pack(problem, stream, base, alloc, copy) {
    for (let s = 0; s < slots.length; s++) {
      const part = problem.inputs[slots[s].name];
      let form = forms.absent;
      let rows = 0;
      let cols = 0;
      let at = 0;
      if (typeof part === 'string') {
        const bytes = utf8Encoder.encode(part);
        const [array, offset] = alloc(Math.ceil(bytes.length / 8));
        new Uint8Array(array.buffer, array.byteOffset + offset * 8, bytes.length).set(bytes);
        form = forms.text;
        rows = bytes.length;
        at = offset - base;
      } else if (part !== undefined) {
        let { offset } = part;
        if (copy) {
          const n = part.rows * part.cols;
          const [array, to] = alloc(n);
          array.set(part.data.subarray(offset, offset + n), to);
          offset = to;
        }
        form = forms.numbers;
        rows = part.rows;
        cols = part.cols;
        at = offset - base;
      }
      const h = base + s * stride;
      stream[h + field.form] = form;
      stream[h + field.rows] = rows;
      stream[h + field.cols] = cols;
      stream[h + field.at] = at;
    }
    for (let i = 0; i < options.length; i++) {
      const value = problem.options[options[i].name];
      const codes = optionCodes[i];
      if (codes && value !== undefined && codes[value] === undefined) {
        throw new Error(`wire: no ${options[i].codes} code for ${JSON.stringify(value)}`);
      }
      // NaN: not given (the core's default applies).
      stream[base + optionsAt + i] = value === undefined ? NaN : codes ? codes[value] : Number(value);
    }
  }

  return {
    headerLength,
    /**
     * Packs `problem` in place: its numbers were put after the header at stream[base ...] by
     * `alloc` while normalising; its texts go there by the same `alloc`.
     */
    packInPlace(problem, stream, base, alloc) {
      pack(problem, stream, base, alloc, false);
    },
    /** `problem` packed into a Float64Array of its own. */
    packed(problem) {
      let length = headerLength;
      for (const part of Object.values(problem.inputs)) {
        length += typeof part === 'string' ? Math.ceil(utf8Encoder.encode(part).length / 8) : part.rows * part.cols;
      }
      const stream = new Float64Array(length);
      let used = headerLength;
      pack(problem, stream, 0, (n) => [stream, (used += n) - n], true);
      return stream;
    },
  };
}

// ---- the trace -------------------------------------------------------------------------------------

/** A message as the wire carries it ({ id, params: [name, value, ...] }) -> { id, values }. */
function messageOf({ id, params }) {
  /** @type {Record<string, string>} */
  const values = {};
  for (let k = 0; k < params.length; k += 2) values[params[k]] = params[k + 1];
  return { id, values };
}

const utf8Decoder = new TextDecoder();

// The field types _wireLayout() names (cpp/wire.h FieldType); readRecord's switch reads each.
const FIELD_TYPES = [
  'number',
  'index',
  'text',
  'texts',
  'numbers',
  'shape',
  'values',
  'matrix',
  'code',
  'codes',
  'range',
  'record',
  'records',
  'boolean',
];

/**
 * Reading `_run`'s packed trace: `read(numbers, layout, precision, reuse)` -> { steps, output, warnings,
 * facts, meta }, each record built field by field as the table lists them (and in that key
 * order). `numbers` may be a view of wasm memory: it is read completely before anything else runs
 * in the module.
 */
export function traceReader(layout) {
  let numbers = null;
  let bytes = null;
  let at = 0;

  // `old`: a matrix of the trace given to reuse (or anything else): its rows are refilled when it
  // is a rows x cols array of arrays, else new ones are made.
  const rowsOf = (rows, cols, old) => {
    if (Array.isArray(old) && old.length === rows && old.every((row) => Array.isArray(row) && row.length === cols)) {
      for (let i = 0; i < rows; i++) {
        const row = old[i];
        for (let j = 0; j < cols; j++) row[j] = numbers[at++];
      }
      return old;
    }
    // Plain loops: Array.from over subarrays costs ten times more for the small matrices of a trace.
    const out = new Array(rows);
    for (let i = 0; i < rows; i++) {
      const row = new Array(cols);
      for (let j = 0; j < cols; j++) row[j] = numbers[at++];
      out[i] = row;
    }
    return out;
  };
  const text = () => {
    const n = numbers[at++];
    const start = at * 8;
    at += Math.ceil(n / 8);
    let ascii = '';
    for (let i = start; i < start + n; i++) {
      const c = bytes[i];
      if (c > 127) return utf8Decoder.decode(bytes.subarray(start, start + n));
      ascii += String.fromCharCode(c);
    }
    return ascii;
  };

  // Each record: its fields, and a template object with their keys in order (copying it gives
  // every record of a kind the same shape, which V8 reads and writes faster).
  const records = {};
  for (const [name, fields] of Object.entries(layout.records)) {
    const template = {};
    // A step's formula: `tex` and `text` in English, the core's templates (its words as
    // @{formula.*} placeholders, filled in a language by i18n.js stepFormula) in `formula_ids`.
    const formula = fields.some((f) => f.name === 'tex') && fields.some((f) => f.name === 'text');
    for (const f of fields) {
      template[f.name] = null;
      if (f.name === 'title_id') template.title = null; // the English caption, read beside it
      if (formula && f.name === 'text') template.formula_ids = null;
    }
    records[name] = {
      template,
      formula,
      fields: fields.map((f) => {
        const type = FIELD_TYPES.indexOf(f.type);
        if (type < 0) throw new Error(`wire: unknown field type '${f.type}' (the package's JS and .wasm are from different builds)`);
        return { name: f.name, type, names: f.codes === undefined ? null : layout.codes[f.codes], record: f.record };
      }),
    };
  }
  for (const record of Object.values(records)) {
    for (const f of record.fields) if (f.record !== undefined) f.record = records[f.record];
  }

  // One switch rather than a closure per field: measurably faster for the many small records.
  // `old`: the same record of a trace given to reuse, or undefined; its matrices are refilled.
  function readRecord(record, old) {
    const out = { ...record.template };
    const { fields } = record;
    let shape = null; // the record's Shape field, for the Values field after it
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      let v;
      switch (
        f.type // FIELD_TYPES[f.type]
      ) {
        case 0:
          v = numbers[at++];
          break; // number
        case 1:
          v = numbers[at++];
          if (v < 0) v = null;
          break; // index
        case 2:
          v = text();
          if (f.name === 'title_id') out.title = englishTitle(v);
          else if (record.formula && (f.name === 'tex' || f.name === 'text')) {
            (out.formula_ids ??= { tex: '', text: '' })[f.name] = v;
            v = fillFormula(v, english, f.name === 'tex');
          }
          break; // text
        case 3:
          v = new Array(numbers[at++]);
          for (let k = 0; k < v.length; k++) v[k] = text();
          break; // texts
        case 4:
          v = new Array(numbers[at++]);
          for (let k = 0; k < v.length; k++) v[k] = numbers[at++];
          break; // numbers
        case 5:
          v = shape = [numbers[at], numbers[at + 1]];
          at += 2;
          break; // shape
        case 6:
          v = rowsOf(shape[0], shape[1], old?.[f.name]);
          break; // values
        case 7: {
          const rows = numbers[at];
          const cols = numbers[at + 1];
          at += 2;
          v = rowsOf(rows, cols, old?.[f.name]);
          break;
        } // matrix
        case 8:
          v = f.names[numbers[at++]];
          break; // code
        case 9:
          v = new Array(numbers[at++]);
          for (let k = 0; k < v.length; k++) v[k] = f.names[numbers[at++]];
          break; // codes
        case 10:
          v = numbers[at + 1] === 0 ? null : [numbers[at], numbers[at] + numbers[at + 1]];
          at += 2;
          break; // range
        case 11:
          v = readRecord(f.record, old?.[f.name]);
          break; // record
        case 12: {
          // records
          const before = old?.[f.name];
          v = new Array(numbers[at++]);
          for (let k = 0; k < v.length; k++) v[k] = readRecord(f.record, Array.isArray(before) ? before[k] : undefined);
          if (f.name === 'warnings') {
            // The core names each warning (cpp/attention.h Message): the API's `warnings` are their
            // English, `warning_messages` the messages for a view in another language.
            out.warning_messages = v.map(messageOf);
            v = out.warning_messages.map((m) => english.message(m));
          }
          break;
        }
        case 13:
          v = numbers[at++] !== 0;
          break; // boolean
      }
      out[f.name] = v;
    }
    return out;
  }

  // The whole of `packed` as the record `name` (`old`: one to reuse the matrices of).
  function readPacked(packed, name, old) {
    numbers = packed;
    bytes = new Uint8Array(packed.buffer, packed.byteOffset, packed.length * 8);
    at = 0;
    const out = readRecord(records[name], old !== null && typeof old === 'object' ? old : undefined);
    if (at !== packed.length) throw new Error(`wire: the packed ${name} has ${packed.length - at} numbers left over`);
    numbers = bytes = null;
    return out;
  }

  return {
    /** `reuse`: a trace whose matrices of the same place and shape are refilled (engine.run's option). */
    read(packed, layoutName, precision, reuse) {
      const trace = readPacked(packed, 'trace', reuse);
      trace.meta = { layout: layoutName, precision, ...trace.meta };
      return trace;
    },
    /** Another packed record of the table: decode, tiles, online_softmax, gradients (cpp/wire.h). */
    record: readPacked,
  };
}
