// Every format the explorer is handed, as a schema (schema.js): the link state (#v1= / #v2=, and
// the web component's state="..."), its exercise, a student's paper and a lesson's notes; the lesson
// file; the iframe's address flags; the web component's attributes and its JSON child. Each decoded
// object is checked here before anything reads it, and a message names the field that does not fit.
// docs/formats.md describes the same schemas in words (tests/js/formats.test.mjs keeps the two
// together); the tests generate links, papers and lesson files from them.
//
// The problem's own numbers and options (inputs, rope, window, ...) are not checked here: the
// engine checks a problem (problem.js and the core), with messages naming the input or option.
import { anyOf, boolean, check, json, list, literal, nullable, number, object, record, string, tuple, variant, whole } from './schema.js';

import { LANGUAGES, english } from './i18n.js';
import { showMessage } from './schema.js';

export { check } from './schema.js';

/** A phrase of the formats' messages: { id: 'schema.format.<name>', values } (English in locales/en.json). */
const say = (name, values = {}) => ({ id: `schema.format.${name}`, values });
/** "<field> is <value>; expected <what>" (schema.js's sentence), the field and value as code. */
const isExpected = (field, is, expected) => ({ id: 'schema.is-expected', values: { where: code(field), is, expected } });
/** Code shown as it is (a key, a quoted value). */
const code = (text) => ({ id: 'schema.text', values: { text: String(text) } });

/** @type {typeof import('./share.js').LESSON_FORMAT} */
export const LESSON_FORMAT = 'attention-explorer lesson';
/** @type {typeof import('./share.js').LESSON_VERSION} */
export const LESSON_VERSION = 1;
/** @type {typeof import('./share.js').ANSWER_KINDS} */
export const ANSWER_KINDS = ['key', 'number', 'text'];

/**
 * The inputs of a problem (the problem JSON's matrices and vectors).
 * @type {typeof import('./share.js').INPUT_NAMES}
 */
export const INPUT_NAMES = [
  'Q',
  'K',
  'V',
  'X',
  'X_kv',
  'W_Q',
  'W_K',
  'W_V',
  'W_O',
  'b_Q',
  'b_K',
  'b_V',
  'b_O',
  'P',
  'past_K',
  'past_V',
  'W_G',
  'b_G',
  'W_DKV',
  'W_UK',
  'W_UV',
  'W_KR',
  'W_QR',
  'W_DQ',
  'W_UQ',
  'past_c_KV',
  'past_k_R',
];
/**
 * The forward pass's step ids, in trace order: the core's step catalogue (steps.cpp, engine.steps
 * without the gradient steps), copied here because links and embed flags are checked before the
 * engine is loaded. tests/js/step-catalogue.test.mjs keeps it equal to the catalogue, and fails on
 * any other list of step ids in web/.
 * @type {typeof import('./share.js').STEP_IDS}
 */
export const STEP_IDS = [
  'positional',
  'X_pos',
  'rope_angles',
  'Q',
  'K',
  'V',
  'Q_normed',
  'K_normed',
  'Q_rot',
  'K_rot',
  'K_cache',
  'V_cache',
  'scores',
  'scaled',
  'softcapped',
  'alibi',
  'biased',
  'mask',
  'masked',
  'weights_1',
  'weights_2',
  'weights',
  'phi_Q',
  'phi_K',
  'linear_scores',
  'normalizer',
  'c_KV',
  'k_R',
  'c_Q',
  'K_C',
  'Q_C',
  'q_R',
  'scores_C',
  'scores_R',
  'Q_absorbed',
  'scores_C_absorbed',
  'O_latent',
  'head_output',
  'head_normed',
  'gate',
  'gated_output',
  'concat',
  'output',
  'output_absorbed',
  'cache_sizes',
];
/**
 * ?hide= words that hide a panel of the page.
 * @type {typeof import('./share.js').HIDE_PANELS}
 */
export const HIDE_PANELS = ['setup', 'inputs', 'why', 'drill', 'share', 'options', 'lesson'];
/**
 * ?lock= words besides input names.
 * @type {typeof import('./share.js').LOCK_WORDS}
 */
export const LOCK_WORDS = ['inputs', 'options', 'all'];

/**
 * Sizes: the most tokens and features the core takes (kMaxTokens, kMaxDim), the longest texts.
 * @type {typeof import('./share.js').LIMITS}
 */
export const LIMITS = {
  tokens: 4096,
  text: 8_000_000,
  name: 64,
  label: 1000,
  sentence: 100_000,
  url: 4096,
  steps: 1000,
  cells: 1_000_000,
  answerCells: 64,
  hash: 128,
  salt: 128,
};
/**
 * scrypt's cost a paper may ask: N a power of 2 up to 2^16 (64 MB with r = 8), r up to 16, p up to 4.
 * @type {typeof import('./share.js').KDF_LIMITS}
 */
export const KDF_LIMITS = { N: 2 ** 16, r: 16, p: 4 };

/** @type {typeof import('./share.js').STEP_KEY} */
export const STEP_KEY = /^[A-Za-z_][A-Za-z0-9_]*:-?\d+$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEX = /^[0-9a-f]+$/;

const name = string({ pattern: NAME, max: LIMITS.name, expected: say('name') });
const stepKey = string({
  pattern: STEP_KEY,
  max: LIMITS.name,
  expected: say('step-key', { example: '"id:head"', key: '"weights:0"' }),
});
const stepId = string({ pattern: NAME, max: LIMITS.name, expected: say('step-id', { example: '"weights"' }) });
const label = string({ max: LIMITS.label });
const labels = list(label, { max: LIMITS.tokens });
const index = whole({ max: LIMITS.cells });

// ---- a lesson's notes: the link state's `lesson` and a lesson file's -----------------------------

const fromOne = (what) => whole({ min: 1, max: LIMITS.cells, expected: say('from-one', { what: say(what) }) });
const answerSchema = variant(
  'kind',
  [
    ['key', object({ kind: literal(['key']), row: fromOne('first-query-row') }, { required: ['kind', 'row'] })],
    [
      'number',
      object(
        {
          kind: literal(['number']),
          row: fromOne('first-query-row'),
          col: fromOne('first-column'),
          tolerance: number({ min: 0, expected: say('tolerance') }),
        },
        { required: ['kind', 'row', 'col', 'tolerance'] },
      ),
    ],
    [
      'text',
      object(
        {
          kind: literal(['text']),
          text: string({ max: LIMITS.sentence, message: () => say('answer-text', { field: 'answer.text' }) }),
        },
        { required: ['kind', 'text'] },
      ),
    ],
  ],
  { message: () => say('answer', { field: '"answer"', example: '{ "kind": "key", "row": 1 }' }) },
);

const noteSchema = object(
  {
    say: string({
      max: LIMITS.sentence,
      message: () => say('must-be-string', { field: '"say"' }),
      doc: "the teacher's sentence, shown with the step",
    }),
    ask: string({
      max: LIMITS.sentence,
      message: () => say('must-be-string', { field: '"ask"' }),
      doc: "a question asked before the step's numbers show",
    }),
    answer: { ...answerSchema, doc: 'how the page checks the student\'s answer to "ask"' },
  },
  {
    unknown: 'refuse',
    unknownMessage: (k) => say('note-unknown', { field: JSON.stringify(k) }),
    message: () => say('note'),
    refine: (note) => (note.answer !== undefined && !note.ask ? say('answer-needs-ask') : null),
  },
);

/**
 * Notes keyed by step key; `label(key)` names a note in messages.
 * @type {typeof import('./share.js').notesSchema}
 */
export const notesSchema = (labelOf = (k) => say('step', { key: JSON.stringify(k) })) =>
  record(stepKey, noteSchema, {
    max: LIMITS.steps,
    label: labelOf,
    keyMessage: () => say('not-step-key', { example: '"id:head"', key: '"weights:0"' }),
    message: () => say('notes', { field: '"lesson"', example: '"weights:0": { "say": ..., "ask": ... }' }),
  });

// ---- a teacher's exercise (link state `exercise`) ------------------------------------------------

/** @type {typeof import('./share.js').exerciseSchema} */
export const exerciseSchema = object(
  {
    steps: list(stepKey, { min: 1, max: LIMITS.steps, doc: 'the steps whose numbers are hidden' }),
    cells: record(stepKey, list(tuple([index, index], { expected: say('cell') }), { max: LIMITS.cells }), {
      max: LIMITS.steps,
      doc: 'per step, the hidden cells; a step without an entry hides all of them',
    }),
    tolerance: number({ doc: 'how far an answer may be from the number (≤ 0 reads as 0.01)' }),
    seed: whole({ max: Number.MAX_SAFE_INTEGER, doc: 'the seed the problem was drawn from, shown to students' }),
    teacher: boolean({ doc: "true when the teacher's page made the link (it opens the teacher's view; else the students')" }),
  },
  { required: ['steps'] },
);

// ---- a student's paper (link state `student`) ----------------------------------------------------

const paperNumber = anyOf([number(), literal(['inf', '-inf', 'nan'])], { expected: say('paper-number') });
const table = (cell) => list(list(cell, { max: LIMITS.tokens }), { max: LIMITS.tokens, expected: say('rows') });

/** A table's numbers fit its labels: one row per entry of `rows`, one column per entry of `cols`. */
function fitsLabels(t, field) {
  const data = t[field];
  if (data.length !== t.rows.length) {
    return {
      at: [field],
      is: say('list-of-rows', { count: String(data.length) }),
      expected: say('row-per-label', { count: String(t.rows.length) }),
    };
  }
  const r = data.findIndex((row) => row.length !== t.cols.length);
  return r < 0
    ? null
    : {
        at: [field, r],
        is: say('row-of', { count: String(data[r].length) }),
        expected: say('number-per-label', { count: String(t.cols.length) }),
      };
}

const givenSchema = object(
  {
    title: label,
    tex: string({ max: LIMITS.sentence }),
    rows: labels,
    cols: labels,
    data: table(paperNumber),
  },
  { required: ['title', 'rows', 'cols', 'data'], refine: (g) => fitsLabels(g, 'data') },
);

const answerRow = object(
  {
    r: index,
    c: list(index, { min: 1, max: LIMITS.answerCells, doc: 'the hidden columns checked together' }),
    at: list(number({ min: -1, max: 1 }), { max: LIMITS.answerCells, doc: "each cell's centring shift on the tolerance grid" }),
    hash: string({ pattern: HEX, min: 1, max: LIMITS.hash, expected: say('hex') }),
  },
  {
    required: ['r', 'c', 'at', 'hash'],
    refine: (a) =>
      a.at.length === a.c.length
        ? null
        : {
            at: ['at'],
            is: say('list-of', { count: String(a.at.length) }),
            expected: say('shift-per-column', { count: String(a.c.length) }),
          },
  },
);

const stepFields = {
  key: stepKey,
  title: label,
  tex: string({ max: LIMITS.sentence }),
  rows: labels,
  cols: labels,
  rowTitle: label,
  colTitle: label,
  cells: table(nullable(paperNumber)),
};

/** The step's cells fit its labels, and each answer names a row and columns it has. */
function paperStepFits(s) {
  const misfit = fitsLabels(s, 'cells');
  if (misfit) return misfit;
  if (s.hashes) {
    const bad = s.hashes.length !== s.rows.length ? -1 : s.hashes.findIndex((row) => row.length !== s.cols.length);
    if (s.hashes.length !== s.rows.length || bad >= 0) {
      return {
        at: bad >= 0 ? ['hashes', bad] : ['hashes'],
        is: say('other-shape'),
        expected: say('cells-shape', { rows: String(s.rows.length), cols: String(s.cols.length) }),
      };
    }
  }
  for (const [i, a] of (s.answers ?? []).entries()) {
    if (a.r >= s.rows.length)
      return { at: ['answers', i, 'r'], is: code(a.r), expected: say('step-row', { last: String(s.rows.length - 1) }) };
    const c = a.c.find((j) => j >= s.cols.length);
    if (c !== undefined)
      return {
        at: ['answers', i, 'c'],
        is: say('list-holding', { value: String(c) }),
        expected: say('step-columns', { last: String(s.cols.length - 1) }),
      };
  }
  return null;
}

const paperStepV2 = object(
  { ...stepFields, answers: list(answerRow, { max: LIMITS.cells }) },
  { required: ['key', 'title', 'rows', 'cols', 'cells', 'answers'], refine: paperStepFits },
);
const paperStepV1 = object(
  { ...stepFields, hashes: table(nullable(string({ pattern: HEX, min: 1, max: LIMITS.hash, expected: say('hex') }))) },
  { required: ['key', 'title', 'rows', 'cols', 'cells', 'hashes'], refine: paperStepFits },
);

const POWERS_OF_TWO = Array.from({ length: Math.log2(KDF_LIMITS.N) }, (_, i) => 2 ** (i + 1));
const paperFields = {
  salt: string({ min: 1, max: LIMITS.salt }),
  tolerance: number({ above: 0 }),
  decimals: whole({ max: 12 }),
  about: string({ max: LIMITS.sentence }),
  seed: whole({ max: Number.MAX_SAFE_INTEGER }),
  given: list(givenSchema, { max: LIMITS.steps }),
};
/** @type {typeof import('./share.js').paperSchema} */
export const paperSchema = variant('v', [
  [
    2,
    object(
      {
        v: literal([2]),
        ...paperFields,
        kdf: object(
          {
            N: literal(POWERS_OF_TWO, { expected: say('power-of-two', { max: KDF_LIMITS.N.toLocaleString('en') }) }),
            r: whole({ min: 1, max: KDF_LIMITS.r }),
            p: whole({ min: 1, max: KDF_LIMITS.p }),
          },
          { required: ['N', 'r', 'p'] },
        ),
        steps: list(paperStepV2, { max: LIMITS.steps }),
      },
      { required: ['v', 'salt', 'tolerance', 'kdf', 'steps'] },
    ),
  ],
  [
    1,
    object(
      { v: literal([1]), ...paperFields, steps: list(paperStepV1, { max: LIMITS.steps }) },
      { required: ['v', 'salt', 'tolerance', 'steps'] },
    ),
  ],
]);

// ---- the link state (#v1=, #v2=, <attention-explorer state="...">) --------------------------------

/**
 * The options the page writes its own way; any other is the problem JSON's, checked by the engine.
 * @type {typeof import('./share.js').pageOptionsSchema}
 */
export const pageOptionsSchema = object(
  {
    layout: literal(['rows', 'columns']),
    scale: literal(['sqrt_dk', 'none', 'custom']),
    scaleCustom: string({ max: LIMITS.label, doc: 'the scale when "custom": a number, "1/sqrt(n)" or "1/n"' }),
    causal: boolean(),
    mask: literal(['none', 'keep', 'additive']),
    keepMask: nullable(
      list(list(literal([0, 1, true, false], { expected: say('zero-one') }), { max: LIMITS.tokens }), {
        max: LIMITS.tokens,
        expected: say('mask-rows'),
      }),
    ),
    additiveMask: string({ max: LIMITS.text, doc: 'the additive mask as text' }),
    softcap: number(),
    heads: whole({ min: 1, max: LIMITS.tokens }),
    kv_heads: whole({ min: 1, max: LIMITS.tokens }),
    precision: literal(['float64', 'float32']),
  },
  { unknown: json({ maxDepth: 8, max: LIMITS.text }) },
);

/** @type {typeof import('./share.js').linkStateSchema} */
export const linkStateSchema = object(
  {
    preset: nullable(string({ max: LIMITS.name, doc: "an example's id; alone (not edited), the link is the example" })),
    edited: boolean(),
    recipe: string({ max: LIMITS.sentence, doc: 'the numpy lines that drew the inputs' }),
    mode: literal(['qkv', 'self', 'cross']),
    inputs: record(name, object({ text: string({ max: LIMITS.text }), numpy: string({ max: LIMITS.sentence }) }, { required: ['text'] }), {
      max: 64,
      doc: 'each input as text, as typed (the engine parses and checks it)',
    }),
    use: record(name, boolean(), { max: 64, doc: 'inputs in use: bias, W_O, b_O, P, cache, W_G, b_G, W_DKV, W_KR, W_DQ' }),
    options: pageOptionsSchema,
    decimals: whole({ max: 12 }),
    tokens: object({ q: string({ max: LIMITS.sentence }), k: string({ max: LIMITS.sentence }) }),
    open: nullable(
      object(
        { step: stepId, head: nullable(whole({ min: -1, max: LIMITS.tokens })), row: index, col: index },
        { required: ['step', 'row', 'col'] },
      ),
    ),
    collapsed: list(stepKey, { max: LIMITS.steps }),
    hide: object({ inputs: list(name, { max: 64 }), steps: list(stepId, { max: LIMITS.steps }), chrome: boolean() }),
    exercise: nullable(exerciseSchema),
    student: nullable(paperSchema),
    lesson: nullable(notesSchema((k) => say('lesson-step', { key: JSON.stringify(k) }))),
    title: string({ max: LIMITS.label, doc: 'the lesson\'s title, as its teacher wrote it (a lesson file\'s "title")' }),
  },
  { message: (v) => say('state', { is: showMessage(v) }) },
);

/**
 * True when a link's object is a students' one: a paper, or an exercise the teacher's page did not start.
 * @type {typeof import('./share.js').isStudentObject}
 */
export function isStudentObject(obj) {
  /** @param {unknown} v @returns {v is Record<string, any>} */
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  return isObj(obj) && ((obj.student !== undefined && obj.student !== null) || (isObj(obj.exercise) && !obj.exercise.teacher));
}

/**
 * A decoded link's object, checked: { state } (unknown keys dropped), or { state: null, error,
 * message, reason, student }: `error` for people (English; `message` its { id, values }), `reason` the field that does not fit, `student` when the
 * link is a students' exercise link (its page says so in the exercise's place).
 * @type {typeof import('./share.js').checkLinkState}
 */
export function checkLinkState(obj) {
  const { value, error, message: reason } = check(linkStateSchema, obj);
  if (!error) return { state: value };
  return {
    state: null,
    error: english('link.damaged.field', { reason: error }),
    // The reason names the field and what it should be, a message itself (schema.*): any language's t formats it.
    message: { id: 'link.damaged.field', values: { reason } },
    reason: error,
    student: isStudentObject(obj),
  };
}

/**
 * A student's paper, checked: { paper } or { error, message } naming the field (`student.` + its
 * path): `error` in English, `message` the same as a message ({ id, values }) for any language.
 * @type {typeof import('./share.js').checkPaper}
 */
export function checkPaper(paper) {
  const { value, error, message } = check(object({ student: paperSchema }, { required: ['student'] }), { student: paper });
  return error ? { error, message } : { paper: value.student };
}

// ---- a lesson file (lesson.js readLesson) ---------------------------------------------------------

const PROBLEM_EXAMPLE = '{ "Q": [[...]], "K": ..., "V": ..., "options": {...} }';
/**
 * A problem as JSON: its keys, each any JSON value (the engine checks the problem itself).
 * @type {typeof import('./share.js').problemSchema}
 */
export const problemSchema = record(string({ max: LIMITS.name }), json({ maxDepth: 8, max: LIMITS.text }), {
  max: 64,
  message: (v) => say('problem', { field: '"problem"', is: showMessage(v), example: PROBLEM_EXAMPLE }),
});
const tokenNames = (which) =>
  list(string({ max: LIMITS.label, message: () => say('token-names', { field: `tokens.${which}` }) }), {
    max: LIMITS.tokens,
    message: () => say('token-names', { field: `tokens.${which}` }),
  });

/** @type {typeof import('./share.js').lessonFileSchema} */
export const lessonFileSchema = object(
  {
    format: literal([LESSON_FORMAT], {
      message: (v) => isExpected('"format"', code(JSON.stringify(v)), code(JSON.stringify(LESSON_FORMAT))),
    }),
    version: whole({
      min: 1,
      max: LESSON_VERSION,
      message: (v) => say('version', { field: '"version"', is: String(JSON.stringify(v)), version: String(LESSON_VERSION) }),
    }),
    title: string({ max: LIMITS.label, message: () => say('must-be-string', { field: '"title"' }) }),
    // The language the lesson is written in: the page and the component speak it unless the reader chose one.
    lang: literal(Object.keys(LANGUAGES), {
      message: (v) => say('lang', { field: '"lang"', is: showMessage(v), codes: Object.keys(LANGUAGES).join(', ') }),
    }),
    problem: problemSchema,
    tokens: object(
      { q: tokenNames('q'), k: tokenNames('k') },
      { message: () => say('tokens', { field: '"tokens"', example: '{ "q": [names], "k": [names] }' }) },
    ),
    lesson: notesSchema(),
  },
  { required: ['problem'], message: () => say('lesson-file') },
);

// ---- the iframe's address flags (web/page/embed.js) -----------------------------------------------

const inputOrStep = [...INPUT_NAMES, ...STEP_IDS];
/** @type {typeof import('./share.js').embedFlagsSchema} */
export const embedFlagsSchema = object({
  embed: literal(['', '1', 'true', '0', 'false'], { expected: say('embed') }),
  present: string({ max: LIMITS.name }),
  lesson: string({ min: 1, max: LIMITS.url, expected: say('address', { max: LIMITS.url.toLocaleString('en') }) }),
  hide: list(
    literal([...HIDE_PANELS, ...new Set([...inputOrStep, ...INPUT_NAMES.map((n) => `input:${n}`), ...STEP_IDS.map((s) => `step:${s}`)])], {
      expected: say('hide', { panels: HIDE_PANELS.join(', ') }),
    }),
  ),
  lock: list(literal([...LOCK_WORDS, ...INPUT_NAMES], { expected: say('lock') })),
});

// ---- the web component (component.js) -------------------------------------------------------------

/**
 * Its attributes, as read: lists split at commas and spaces, numbers as numbers.
 * @type {typeof import('./share.js').componentAttributesSchema}
 */
export const componentAttributesSchema = object({
  preset: string({ max: LIMITS.name }),
  state: string({ max: 2_000_000 }),
  lesson: string({ max: LIMITS.url }),
  // The items' words stay text here: component.js says them in the language (component.attribute.expected.*).
  steps: list(literal(STEP_IDS, { expected: 'a step id (Q, K, V, scores, scaled, weights, output, …)' }), { max: LIMITS.steps }),
  inputs: list(literal([...INPUT_NAMES, 'all'], { expected: 'an input name (Q, X, W_Q, …) or all' }), { max: 64 }),
  editable: list(literal([...INPUT_NAMES, 'all'], { expected: 'an input name (Q, X, W_Q, …) or all' }), { max: 64 }),
  decimals: whole({ max: 12 }),
  heads: list(whole({ min: 1, max: LIMITS.tokens, expected: 'a head number from 1' }), { max: LIMITS.tokens }),
  'wasm-url': string({ max: LIMITS.url }),
});

/**
 * Its <script type="application/json"> child: { problem, tokens, kvTokens, title } (an object with
 * "problem"), or else the problem itself (problemSchema).
 * @type {typeof import('./share.js').componentScriptSchema}
 */
export const componentScriptSchema = object(
  { problem: problemSchema, tokens: labels, kvTokens: labels, title: label },
  { required: ['problem'] },
);

// ---- the playground (playground-state.js): its link and its weights files ------------------------

/** What a playground link may set, and within which bounds (the playground's fields read them too). */
export const PLAYGROUND_LIMITS = {
  layers: { min: 1, max: 4 },
  heads: { min: 1, max: 8 },
  d_model: { min: 4, max: 128 },
  mlp: { min: 0, max: 512 },
  lr: { min: 0.0001, max: 0.1 },
  seed: { min: 0, max: 4294967295 },
  steps: { min: 1, max: 20000 },
  step: { min: 0, max: 1_000_000 },
};
export const PLAYGROUND_CHOICES = { positions: ['learned', 'sinusoidal', 'rope', 'none'], norm: ['none', 'layernorm', 'rmsnorm'] };

const bounded = (key) => whole(PLAYGROUND_LIMITS[key]);
/** The `c=` part of a playground link: what differs from the preset. Unknown fields are refused. */
export const playgroundChangesSchema = object(
  {
    model: object(
      {
        layers: bounded('layers'),
        heads: bounded('heads'),
        d_model: bounded('d_model'),
        mlp: bounded('mlp'),
        positions: literal(PLAYGROUND_CHOICES.positions),
        norm: literal(PLAYGROUND_CHOICES.norm),
      },
      { unknown: 'refuse' },
    ),
    optimizer: object({ lr: number(PLAYGROUND_LIMITS.lr) }, { unknown: 'refuse' }),
    seed: bounded('seed'),
    steps: bounded('steps'),
  },
  { unknown: 'refuse' },
);
/** The `step=` part: the step a link retrains to. */
export const playgroundStepSchema = bounded('step');

/**
 * A weights file the playground loads: { model, weights } as `attention-explorer train --weights`
 * writes it, and what Save weights adds (config, step). The weights' keys and shapes are checked
 * by the model itself, which names any that do not fit.
 */
export const playgroundWeightsSchema = object(
  {
    model: json({ maxDepth: 2, max: 64 }),
    weights: record(string({ max: LIMITS.name }), json({ maxDepth: 6, max: LIMITS.cells })),
    config: json({ maxDepth: 6, max: LIMITS.cells }),
    step: whole({ max: PLAYGROUND_LIMITS.step.max }),
  },
  {
    required: ['weights'],
    message: () => say('weights-file'),
  },
);

/** A question the playground's run answers: a layer or head whose score passes a threshold first, or an accuracy reached. */
export const DETECTORS = ['previous_token', 'induction', 'duplicate_token', 'first_token'];
export const playgroundQuestionSchema = variant('choose', [
  [
    'layer',
    object(
      {
        choose: literal(['layer']),
        text: string({ min: 1, max: LIMITS.sentence }),
        score: literal(DETECTORS),
        threshold: number({ min: 0, max: 1 }),
      },
      { required: ['text', 'score', 'threshold'] },
    ),
  ],
  [
    'head',
    object(
      {
        choose: literal(['head']),
        text: string({ min: 1, max: LIMITS.sentence }),
        score: literal(DETECTORS),
        threshold: number({ min: 0, max: 1 }),
      },
      { required: ['text', 'score', 'threshold'] },
    ),
  ],
  [
    'yes_no',
    object(
      { choose: literal(['yes_no']), text: string({ min: 1, max: LIMITS.sentence }), accuracy: number({ min: 0, max: 1 }) },
      { required: ['text', 'accuracy'] },
    ),
  ],
]);
export const PLAYGROUND_LESSON_FORMAT = 'attention-explorer playground lesson';
/** A playground lesson file: a preset, what differs from it, and the questions asked before training. */
export const playgroundLessonSchema = object(
  {
    format: literal([PLAYGROUND_LESSON_FORMAT], { expected: code(JSON.stringify(PLAYGROUND_LESSON_FORMAT)) }),
    version: literal([1]),
    title: string({ max: LIMITS.label }),
    intro: string({ max: LIMITS.sentence }),
    preset: string({ min: 1, max: LIMITS.name }),
    changes: playgroundChangesSchema,
    questions: list(playgroundQuestionSchema, { max: 20 }),
  },
  {
    required: ['format', 'preset'],
    message: () => say('playground-lesson', { format: JSON.stringify(PLAYGROUND_LESSON_FORMAT) }),
  },
);
