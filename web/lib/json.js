// JSON with non-finite numbers: a trace (or anything) as JSON text, Infinity, -Infinity and NaN
// written as the strings "inf", "-inf", "nan" that problem JSON reads back.
import { isNumberView, isPlainObject } from './input.js';

function jsonNumber(value) {
  if (typeof value !== 'number' || Number.isFinite(value)) return value;
  return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
}

/**
 * A JSON-safe deep copy: Infinity, -Infinity and NaN become "inf", "-inf", "nan".
 * @type {typeof import('./index.js').toJSON}
 */
export function toJSON(value) {
  if (typeof value === 'number') return jsonNumber(value);
  if (Array.isArray(value) || isNumberView(value)) return Array.from(value, toJSON);
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
 * @type {typeof import('./index.js').stringify}
 */
export function stringify(value, indent = 2) {
  const safe = toJSON(value);
  if (!indent) return JSON.stringify(safe);
  const pad = typeof indent === 'number' ? ' '.repeat(indent) : String(indent);
  const write = (v, depth) => {
    const inner = pad.repeat(depth + 1);
    const outer = pad.repeat(depth);
    if (Array.isArray(v)) {
      // A list of plain values on one line, each written alone (a comma inside a string stays as it is).
      if (v.every((x) => x === null || typeof x !== 'object')) return `[${v.map((x) => JSON.stringify(x) ?? 'null').join(', ')}]`;
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
