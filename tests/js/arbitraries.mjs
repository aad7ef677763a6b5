// fast-check arbitraries made from the formats' schemas (dist/formats.js, web/lib/schema.js kinds):
// valid values of a schema, and the same values damaged (a field replaced, removed or added, the
// JSON or the link's text cut, changed or padded). Shared by tests/js/formats.test.mjs and the
// browser suite tests/browser/fail-safe.test.mjs.
import fc from 'fast-check';

import { dist } from './helpers.mjs';

const formats = await import(`${dist}formats.js`);
const share = await import(`${dist}share.js`);

const SMALL = 4; // at most this many items in a generated list, record or object
const plain = { noNullPrototype: true };
const notMinusZero = (x) => !Object.is(x, -0);

/**
 * Valid values of schema `s`. `special` maps a schema object to its own arbitrary, for the ones
 * whose fields depend on each other (a table's rows and its labels).
 */
export function arbitraryOf(s, special = new Map()) {
  const own = special.get(s);
  const base = own ?? baseOf(s, special);
  return s.nullable ? fc.option(base, { nil: null, freq: 4 }) : base;
}

function baseOf(s, special) {
  const of = (t) => arbitraryOf(t, special);
  switch (s.type) {
    case 'string': {
      const min = s.min ?? 0;
      const max = Math.min(s.max, 24);
      if (s.pattern)
        return fc
          .stringMatching(s.pattern)
          .filter((t) => t.length >= min && t.length <= s.max)
          .map((t) => t.slice(0, s.max));
      return fc.string({ minLength: min, maxLength: Math.max(min, max), unit: 'binary' });
    }
    case 'number': {
      const max = s.max ?? 1e6;
      if (s.integer) return fc.integer({ min: s.min ?? -1000, max: Math.min(max, 1e6) });
      const min = s.above ?? s.min ?? -1e6;
      return fc
        .double({ min, max, noNaN: true, noDefaultInfinity: true })
        .filter((x) => notMinusZero(x) && (s.above === undefined || x > s.above));
    }
    case 'boolean':
      return fc.boolean();
    case 'literal':
      return fc.constantFrom(...s.values);
    case 'list':
      return fc.array(of(s.item), { minLength: s.min ?? 0, maxLength: Math.max(s.min ?? 0, Math.min(s.max, SMALL)) });
    case 'tuple':
      return fc.tuple(...s.items.map(of));
    case 'object': {
      const value = fc.record(Object.fromEntries(Object.entries(s.fields).map(([k, f]) => [k, of(f)])), {
        requiredKeys: s.required,
        ...plain,
      });
      return s.refine ? value.filter((v) => !s.refine(v)) : value;
    }
    case 'record':
      return fc.dictionary(of(s.key), of(s.value), { maxKeys: Math.min(s.max, SMALL), ...plain });
    case 'variant':
      return fc.oneof(...s.cases.map(([, c]) => of(c)));
    case 'anyOf':
      return fc.oneof(...s.options.map(of));
    case 'json':
      return fc.jsonValue({ maxDepth: 2 }).filter(noMinusZero);
    default:
      throw new Error(`no arbitrary for schema type ${s.type}`);
  }
}

function noMinusZero(v) {
  if (typeof v === 'number') return notMinusZero(v);
  if (v && typeof v === 'object') return Object.values(v).every(noMinusZero);
  return true;
}

// ---- the formats' own arbitraries -------------------------------------------------------------------

const paperV2 = formats.paperSchema.cases.find(([v]) => v === 2)[1];
const paperV1 = formats.paperSchema.cases.find(([v]) => v === 1)[1];
const givenSchema = paperV2.fields.given.item;
const stepV2 = paperV2.fields.steps.item;
const stepV1 = paperV1.fields.steps.item;
const cellArb = fc.oneof(fc.double({ min: -100, max: 100, noNaN: true }).filter(notMinusZero), fc.constantFrom('inf', '-inf', 'nan'));
const labelsArb = (n) => fc.array(fc.string({ maxLength: 8 }), { minLength: n, maxLength: n });
const hex = fc.stringMatching(/^[0-9a-f]{1,16}$/);

/** A table's labels and numbers, of one shape (1 to 3 rows and columns). */
const shaped = (build) => fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })).chain(([r, c]) => build(r, c));
const matrix = (r, c, cell) => fc.array(fc.array(cell, { minLength: c, maxLength: c }), { minLength: r, maxLength: r });

const givenArb = shaped((r, c) =>
  fc.record(
    {
      title: fc.string({ maxLength: 12 }),
      tex: fc.constantFrom('', 'QK^\\top', 'S = QK^\\top'),
      rows: labelsArb(r),
      cols: labelsArb(c),
      data: matrix(r, c, cellArb),
    },
    plain,
  ),
);
const stepKeyArb = fc.tuple(fc.constantFrom(...formats.STEP_IDS), fc.integer({ min: -1, max: 3 })).map(([id, h]) => `${id}:${h}`);
const stepCommon = (r, c) => ({
  key: stepKeyArb,
  title: fc.string({ maxLength: 12 }),
  tex: fc.constantFrom('', 'A = \\mathrm{softmax}(S)'),
  rows: labelsArb(r),
  cols: labelsArb(c),
  rowTitle: fc.constantFrom('query', 'row'),
  colTitle: fc.constantFrom('key', 'column'),
  cells: matrix(r, c, fc.option(cellArb, { nil: null })),
});
const answerArb = (r, c) =>
  fc
    .tuple(fc.integer({ min: 0, max: r - 1 }), fc.uniqueArray(fc.integer({ min: 0, max: c - 1 }), { minLength: 1, maxLength: c }), hex)
    .chain(([row, cols, hash]) =>
      fc
        .array(fc.double({ min: -0.5, max: 0.5, noNaN: true }).filter(notMinusZero), { minLength: cols.length, maxLength: cols.length })
        .map((at) => ({ r: row, c: cols, at, hash })),
    );
const stepV2Arb = shaped((r, c) =>
  fc.record(
    { ...stepCommon(r, c), answers: fc.array(answerArb(r, c), { maxLength: 3 }) },
    { requiredKeys: ['key', 'title', 'rows', 'cols', 'cells', 'answers'], ...plain },
  ),
);
const stepV1Arb = shaped((r, c) =>
  fc.record(
    { ...stepCommon(r, c), hashes: matrix(r, c, fc.option(hex, { nil: null })) },
    { requiredKeys: ['key', 'title', 'rows', 'cols', 'cells', 'hashes'], ...plain },
  ),
);

/** The schemas whose fields depend on each other, with arbitraries that keep them consistent. */
export const SPECIAL = new Map([
  [givenSchema, givenArb],
  [stepV2, stepV2Arb],
  [stepV1, stepV1Arb],
]);

/** A student's paper, either version. */
export const paperArb = arbitraryOf(formats.paperSchema, SPECIAL);
/** A link state, every field optional; small inputs. */
export const linkStateArb = arbitraryOf(formats.linkStateSchema, SPECIAL);
/** A link state holding only a student's paper, as the teacher's page writes it. */
export const studentStateArb = paperArb.map((student) => ({ student }));

const LOOKUP = {
  Q: [
    [1, 0],
    [0, 1],
    [1, 1],
  ],
  K: [
    [1, 0],
    [0, 1],
    [0.5, 0.5],
  ],
  V: [
    [1, 10],
    [2, 20],
    [3, 30],
  ],
};
/** A lesson file's object: a real problem (3 queries, 3 keys) and notes from the schema. */
export const lessonFileArb = fc.record(
  {
    format: fc.constant(formats.LESSON_FORMAT),
    version: fc.constant(1),
    title: fc.string({ maxLength: 16 }),
    problem: fc.constantFrom(LOOKUP, { ...LOOKUP, options: { causal: true } }),
    tokens: fc.record(
      { q: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }), k: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }) },
      { requiredKeys: [], ...plain },
    ),
    lesson: arbitraryOf(formats.lessonFileSchema.fields.lesson, SPECIAL),
  },
  { requiredKeys: ['problem'], ...plain },
);

// ---- damage -------------------------------------------------------------------------------------------

const isContainer = (v) => v !== null && typeof v === 'object';

/**
 * `value` with one place changed, chosen by `steps` (a walk down: each number picks a child) and
 * `how`: the value there replaced by `junk`, removed, or a key `junk` added beside it.
 */
export function damage(value, steps, how, junk) {
  const copy = structuredClone(value);
  if (!isContainer(copy)) return junk;
  let parent = copy;
  for (const n of steps) {
    const keys = Object.keys(parent);
    if (!keys.length) break;
    const k = keys[n % keys.length];
    if (!isContainer(parent[k]) || n % 3 === 0) {
      if (how === 'replace') parent[k] = junk;
      else if (how === 'remove') {
        if (Array.isArray(parent)) parent.splice(Number(k), 1);
        else delete parent[k];
      } else if (!Array.isArray(parent)) parent[`x${n}`] = junk;
      else parent.push(junk);
      return copy;
    }
    parent = parent[k];
  }
  if (!Array.isArray(parent)) parent[how] = junk;
  return copy;
}

/** Damage of a JSON-able value's structure (arbitrary of [damaged value, what was done]). */
export const damaged = (valid) =>
  fc
    .tuple(
      valid,
      fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
      fc.constantFrom('replace', 'remove', 'add'),
      fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom('', -1, 1e308, 0.5, 'inf', '<img src=x onerror="window.__pwned=1">', null, [], {}, [[{}]]),
      ),
    )
    .map(([v, steps, how, junk]) => damage(v, steps, how, junk));

/** Damage of a text (a link or a file): cut, a character changed, text inserted, or doubled. */
export const damagedText = (text) =>
  fc
    .tuple(
      text,
      fc.nat(),
      fc.constantFrom('cut', 'change', 'insert', 'double', 'version'),
      fc.string({ maxLength: 6, unit: 'binary' }),
      fc.constantFrom(...'AZaz09-_+/=%#'),
    )
    .map(([t, at, how, junk, ch]) => {
      const i = t.length ? at % t.length : 0;
      if (how === 'cut') return t.slice(0, i);
      if (how === 'change') return t.slice(0, i) + ch + t.slice(i + 1);
      if (how === 'insert') return t.slice(0, i) + junk + t.slice(i);
      if (how === 'double') return t + t.slice(i);
      return t.replace(/^v\d+/, at % 2 ? 'v1' : 'v2');
    });

/** A link's hash text for a state object, v1 or v2. */
export const linkText = (obj, version) =>
  version === 1 ? Promise.resolve(`v1=${Buffer.from(JSON.stringify(obj)).toString('base64url')}`) : share.encodeStateString(obj);
