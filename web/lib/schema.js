// A small schema checker for the JSON the explorer is handed (links, students' papers, lesson files,
// embed flags, the web component's attributes: formats.js declares them). A schema is a plain
// object saying a value's type, range and size; check() walks a value against it and returns the
// value (an object's unknown keys dropped, unless it refuses them) or the first problem, in words
// that name the field: `student.steps[0].cells is a string ("abc"); expected a list of rows`.
// The schemas are data, so the tests generate values from them and docs/formats.md describes them.
//
// No library: the package's modules load in a browser as they are (dist/component.js straight from
// node_modules, no bundler and no import map), so a dependency would have to be vendored into dist/
// and into the site; these ~200 lines are what the formats need.
//
// Kinds (`type`): string, number (finite; JSON has nothing else), boolean, literal (one of
// `values`), list (`item`, `min`/`max` items), tuple (`items`), object (`fields`, `required`,
// `unknown`: 'drop' | 'refuse' | a schema they must fit), record (`key`: a string schema, `value`, `max` entries), variant
// (an object whose `key` field picks one of `cases`: [[value, object schema], ...]), anyOf
// (`options`, the first that fits), json (any JSON value, `maxDepth`, `max` items or characters).
// Any schema may have: `nullable` (null fits too), `expected` (the phrase of its messages),
// `message(value, path)` (a whole message instead), `refine(value)` (a check across fields, after
// the rest: null, a message, or { at: [path], is, expected }), `doc` (what it means, for docs).

import { english, isMessage } from './i18n.js';

/** A string: `max` characters (10,000 unless told), `min`, a `pattern` (RegExp) it must match. */
export const string = (o = {}) => ({ type: 'string', max: 10_000, ...o });
/** A finite number: `min`, `max`, `above` (greater than), `integer`. */
export const number = (o = {}) => ({ type: 'number', ...o });
/** A whole number from `min` (0 unless told) to `max`. */
export const whole = (o = {}) => ({ type: 'number', integer: true, min: 0, ...o });
export const boolean = (o = {}) => ({ type: 'boolean', ...o });
/** One of `values` (strings, numbers, booleans). */
export const literal = (values, o = {}) => ({ type: 'literal', values, ...o });
/** A list of `item`s: `max` items (10,000 unless told), `min`. */
export const list = (item, o = {}) => ({ type: 'list', item, max: 10_000, ...o });
export const tuple = (items, o = {}) => ({ type: 'tuple', items, ...o });
/** An object: `fields` by name, the `required` ones; unknown keys dropped (`unknown: 'refuse'`: refused; a schema: kept if they fit it). */
export const object = (fields, o = {}) => ({ type: 'object', fields, required: [], unknown: 'drop', ...o });
/** An object of entries whose keys fit `key` (a string schema) and values fit `value`. */
export const record = (key, value, o = {}) => ({ type: 'record', key, value, max: 10_000, ...o });
/** An object whose field `key` chooses its schema: `cases` is [[that field's value, object schema], ...]. */
export const variant = (key, cases, o = {}) => ({ type: 'variant', key, cases, ...o });
export const anyOf = (options, o = {}) => ({ type: 'anyOf', options, ...o });
/** Any JSON value, nested at most `maxDepth` deep, lists, objects and strings at most `max` long. */
export const json = (o = {}) => ({ type: 'json', maxDepth: 16, max: 1_000_000, ...o });
/** The same schema, where null fits too. */
export const nullable = (schema) => ({ ...schema, nullable: true });

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const quote = (v) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** A phrase of the messages: { id: 'schema.<name>', values } (English in locales/en.json). */
const phrase = (name, values = {}) => ({ id: `schema.${name}`, values });
/** Text shown as it is (code: a key, a path, a quoted JSON value, a schema's own English words). */
const text = (value) => phrase('text', { text: String(value) });
/** A schema's own words (a string, kept as text, or a message) as a message. */
const words = (w) => (isMessage(w) ? w : text(w));
/** Phrases one after the other: "a, b, c" (each a message). */
const joined = (items) => items.reduceRight((tail, head) => (tail ? phrase('join', { head, tail }) : head), null) ?? text('');

/** A value in a message, as a message ({ id, values }): short, never the whole of a large one. */
export function showMessage(value) {
  if (value === undefined) return phrase('value.missing');
  if (typeof value === 'string') {
    return value.length > 40
      ? phrase('value.long-string', { count: value.length, start: JSON.stringify(value.slice(0, 24)) })
      : text(JSON.stringify(value));
  }
  if (Array.isArray(value)) return value.length ? phrase('value.list', { count: value.length }) : phrase('value.empty-list');
  if (isObject(value)) return phrase('value.object');
  return text(String(value)); // number, boolean, null
}

/** A value in a message (English): short, never the whole of a large one. */
export const show = (value) => english.message(showMessage(value));

/** The phrase "expected ..." of a schema's messages, as a message ({ id, values }). */
export function expectedMessage(s) {
  const what = expectedBare(s);
  return s.nullable ? phrase('or-null', { what }) : what;
}

function expectedBare(s) {
  if (s.expected) return words(s.expected);
  switch (s.type) {
    case 'string':
      return phrase('expected.string');
    case 'number': {
      const whole = s.integer ? 'yes' : 'no';
      const n = (x) => (Math.abs(x) >= 10_000 ? x.toLocaleString('en') : String(x));
      const hi = s.max !== undefined ? n(s.max) : undefined;
      if (s.above !== undefined || s.min !== undefined) {
        const from = s.above !== undefined ? 'above' : 'from';
        const low = n(s.above ?? s.min);
        return hi === undefined
          ? phrase(`expected.number-${from}`, { whole, low })
          : phrase(`expected.number-${from}-to`, { whole, low, high: hi });
      }
      return hi === undefined ? phrase('expected.number', { whole }) : phrase('expected.number-at-most', { whole, high: hi });
    }
    case 'boolean':
      return phrase('expected.boolean');
    case 'literal':
      return s.values.length === 1 ? text(quote(s.values[0])) : phrase('expected.one-of', { values: s.values.map(quote).join(', ') });
    case 'list':
      return phrase('expected.list', { item: expectedMessage(s.item) });
    case 'tuple':
      return phrase('expected.tuple', { count: String(s.items.length), items: joined(s.items.map(expectedMessage)) });
    case 'json':
      return phrase('expected.json');
    default:
      return phrase('expected.object');
  }
}

/** The phrase "expected ..." of a schema's messages (English). */
export const expected = (s) => english.message(expectedMessage(s));

/** Where a problem is: `a.b[2]["weights:0"]`, after the last label ({ label }) of the path. */
function render(path) {
  let label = '';
  let rel = '';
  for (const seg of path) {
    if (isObject(seg)) {
      label = seg.label;
      rel = '';
    } else if (typeof seg === 'number') rel += `[${seg}]`;
    else rel += IDENTIFIER.test(seg) ? `${rel ? '.' : ''}${seg}` : `[${JSON.stringify(seg)}]`;
  }
  return { label, rel };
}

/** out[k] = v, also for a key "__proto__" (an own property, as JSON.parse makes it, not the prototype). */
function put(out, k, v) {
  Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
}

class Problem {
  constructor(path, body) {
    this.path = path;
    this.body = body;
  }
}

/** Where a problem is, as a message: the path (code) or "the value". */
const where = (rel) => (rel ? text(rel) : phrase('the-value'));
/** "<where> is <is>; expected <what>" (messages). */
const isExpected = (rel, is, what) => phrase('is-expected', { where: where(rel), is, expected: what });

/** Throws the problem of `value` at `path`: `what` it should be (a size, say) unless it is of the wrong kind. */
function fail(s, value, path, what, is = showMessage(value)) {
  const { rel } = render(path);
  if (s.message && what === undefined) throw new Problem(path, words(s.message(value, rel)));
  throw new Problem(path, isExpected(rel, is, what ?? expectedMessage(s)));
}

function walk(s, value, path) {
  if (value === null && s.nullable) return null;
  const out = walkType(s, value, path);
  if (s.refine) {
    const found = s.refine(out);
    if (typeof found === 'string' || isMessage(found)) throw new Problem(path, words(found));
    if (found) {
      const at = [...path, ...(found.at ?? [])];
      const { rel } = render(at);
      throw new Problem(at, found.message ? words(found.message) : isExpected(rel, words(found.is), words(found.expected)));
    }
  }
  return out;
}

function walkType(s, value, path) {
  switch (s.type) {
    case 'string':
      if (typeof value !== 'string') fail(s, value, path);
      if (value.length > s.max)
        fail(s, value, path, phrase('at-most-characters', { count: s.max }), phrase('value.string-of', { count: value.length }));
      if ((s.min !== undefined && value.length < s.min) || (s.pattern && !s.pattern.test(value))) fail(s, value, path);
      return value;
    case 'number':
      if (
        typeof value !== 'number' ||
        !Number.isFinite(value) ||
        (s.integer && !Number.isInteger(value)) ||
        (s.min !== undefined && value < s.min) ||
        (s.max !== undefined && value > s.max) ||
        (s.above !== undefined && !(value > s.above))
      ) {
        fail(s, value, path);
      }
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') fail(s, value, path);
      return value;
    case 'literal':
      if (!s.values.includes(value)) fail(s, value, path);
      return value;
    case 'list':
      if (!Array.isArray(value)) fail(s, value, path);
      if (value.length > s.max) fail(s, value, path, phrase('at-most-items', { count: s.max }));
      if (s.min !== undefined && value.length < s.min) fail(s, value, path, phrase('at-least-items', { count: s.min }));
      return value.map((v, i) => walk(s.item, v, [...path, i]));
    case 'tuple':
      if (!Array.isArray(value) || value.length !== s.items.length) fail(s, value, path);
      return value.map((v, i) => walk(s.items[i], v, [...path, i]));
    case 'object':
      return walkObject(s, value, path);
    case 'record': {
      if (!isObject(value)) fail(s, value, path);
      const entries = Object.entries(value);
      if (entries.length > s.max)
        fail(s, value, path, phrase('at-most-entries', { count: s.max }), phrase('value.object-of', { count: entries.length }));
      const out = {};
      for (const [k, v] of entries) {
        const at = [...path, s.label ? { label: words(s.label(k)), key: k } : k];
        try {
          walk(s.key, k, []);
        } catch (e) {
          if (!(e instanceof Problem)) throw e;
          const { rel } = render(path);
          throw new Problem(
            at,
            s.keyMessage
              ? words(s.keyMessage(k))
              : phrase('bad-key', { where: where(rel), key: showMessage(k), expected: expectedMessage(s.key) }),
          );
        }
        put(out, k, walk(s.value, v, at));
      }
      return out;
    }
    case 'variant': {
      if (!isObject(value)) fail(s, value, path);
      const chosen = s.cases.find(([v]) => v === value[s.key]);
      if (!chosen) walk(literal(s.cases.map(([v]) => v)), value[s.key], [...path, s.key]);
      return walkObject(chosen[1], value, path);
    }
    case 'anyOf':
      for (const option of s.options) {
        try {
          return walk(option, value, path);
        } catch (e) {
          if (!(e instanceof Problem)) throw e;
        }
      }
      return fail(s, value, path);
    case 'json':
      checkJson(s, value, path, 0);
      return value;
    default:
      throw new Error(`schema: unknown type ${s.type}`);
  }
}

function walkObject(s, value, path) {
  if (!isObject(value)) fail(s, value, path);
  const out = {};
  for (const name of s.required) if (value[name] === undefined) walk(s.fields[name], undefined, [...path, name]);
  for (const [k, v] of Object.entries(value)) {
    if (Object.hasOwn(s.fields, k)) {
      if (v !== undefined) put(out, k, walk(s.fields[k], v, [...path, k]));
    } else if (typeof s.unknown === 'object') {
      if (v !== undefined) put(out, k, walk(s.unknown, v, [...path, k]));
    } else if (s.unknown === 'refuse') {
      const { rel } = render(path);
      throw new Problem(
        [...path, k],
        s.unknownMessage
          ? words(s.unknownMessage(k))
          : phrase(rel ? 'unknown-field-in' : 'unknown-field', {
              where: rel,
              field: JSON.stringify(k),
              fields: Object.keys(s.fields)
                .map((f) => JSON.stringify(f))
                .join(', '),
            }),
      );
    }
  }
  return out;
}

function checkJson(s, value, path, depth) {
  const { rel } = render(path);
  if (depth > s.maxDepth) throw new Problem(path, phrase('too-deep', { where: where(rel), depth: String(s.maxDepth) }));
  if (typeof value === 'string') {
    if (value.length > s.max)
      fail(s, value, path, phrase('at-most-characters', { count: s.max }), phrase('value.string-of', { count: value.length }));
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(s, value, path);
  } else if (Array.isArray(value)) {
    if (value.length > s.max) fail(s, value, path, phrase('at-most-items', { count: s.max }));
    value.forEach((v, i) => checkJson(s, v, [...path, i], depth + 1));
  } else if (isObject(value)) {
    const entries = Object.entries(value);
    if (entries.length > s.max) fail(s, value, path, phrase('at-most-entries', { count: s.max }));
    for (const [k, v] of entries) checkJson(s, v, [...path, k], depth + 1);
  } else if (typeof value !== 'boolean' && value !== null) {
    fail(s, value, path);
  }
}

/**
 * Checks `value` against schema `s`: { value } (what fits, an object's unknown keys dropped) or
 * { error, message, path } with the words naming the field (`label: path is ...; expected ...`): `error`
 * in English, `message` the same as a message ({ id: 'schema.<...>', values }, phrases nested) for
 * any language's `t`.
 * Never throws for any value. (Not typed by share.d.ts's `check`, whose value is unknown: callers
 * here read the value as the schema made it; tests/types/declarations.ts checks the two agree.)
 */
export function check(s, value) {
  try {
    return { value: walk(s, value, []) };
  } catch (e) {
    if (!(e instanceof Problem)) throw e; // a fault in a schema, not in the value
    const { label } = render(e.path);
    const message = label ? phrase('labelled', { label, body: e.body }) : e.body;
    return { error: english.message(message), message, path: e.path.map((seg) => (isObject(seg) ? seg.key : seg)) };
  }
}
